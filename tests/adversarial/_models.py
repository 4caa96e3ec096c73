"""Hostile and broken forecasters for the adversarial probes (importing this module only defines them;
the tests register them for their own duration)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import numpy as np

from tycheon.backtest.isolation import Limits, run_isolated
from tycheon.forecasters.base import Capabilities, Forecast, Forecaster


class _Base(Forecaster):
    capabilities = Capabilities(min_obs=1, quantiles=True)

    def __init__(self) -> None:
        pass


class Hang(_Base):
    """Never returns from predict (a Python loop: what a stuck model looks like to the interpreter)."""

    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng) -> Forecast:
        while True:
            time.sleep(0.01)


class Exit(_Base):
    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng) -> Forecast:
        sys.exit(3)


class Interrupt(_Base):
    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng) -> Forecast:
        raise KeyboardInterrupt


class Crash(_Base):
    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng) -> Forecast:
        raise RuntimeError("crashed on purpose")


class Crossed(_Base):
    """Quantiles that decrease as their level increases."""

    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng) -> Forecast:
        point = np.ones((history.n_series, horizon))
        q = np.broadcast_to(-np.arange(len(quantile_levels), dtype=float), (*point.shape, len(quantile_levels)))
        return Forecast(point=point, quantile_levels=quantile_levels, quantiles=np.array(q))


HOSTILE = {"adv_hang": Hang, "adv_exit": Exit, "adv_crash": Crash, "adv_crossed": Crossed}


# work functions for the isolated process (module level: they travel by reference)
def write_text(result: str, path: Path) -> None:
    Path(path).write_text(result)


def read_text(path: Path) -> str:
    return Path(path).read_text()


def ok() -> str:
    return "fine"


def spin() -> str:
    while True:
        pass


def segfault() -> str:
    os.kill(os.getpid(), signal.SIGSEGV)
    return "unreachable"


def leave_exit() -> str:
    sys.exit(4)


def allocate() -> str:
    return str(len(bytearray(16 * 1024**3)))


def write_outside(path: str) -> str:
    Path(path).write_text("escaped")
    return "wrote"


def connect_out() -> str:
    import socket

    with socket.socket() as sock:
        sock.settimeout(2)
        sock.connect(("127.0.0.1", 9))  # refused or forbidden, never a real peer
    return "connected"


def environment() -> str:
    return "\n".join(sorted(os.environ)) + "\ncwd=" + os.getcwd()


class Hog(Forecaster):
    """A tycheon-route model whose parameter sets how much memory it holds (``gib``), touched 256 MiB at a
    time: what ``lightgbm_global`` with ``n_lags = 500000`` looks like to the harness."""

    capabilities = Capabilities(min_obs=1, quantiles=True)

    def __init__(self, gib: float = 0.0) -> None:
        self.gib = gib

    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng) -> Forecast:
        held = [np.ones(2**25) for _ in range(int(self.gib * 4))]  # 256 MiB each, every page written
        point = np.full((history.n_series, horizon), float(len(held)))
        q = np.broadcast_to(point[..., None], (*point.shape, len(quantile_levels)))
        return Forecast(point=point, quantile_levels=quantile_levels, quantiles=np.array(q))


HOSTILE["adv_hog"] = Hog


def udp_send(port: int) -> str:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"escaped", ("127.0.0.1", port))
    return "sent"


def tcp_connect(port: int) -> str:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    return "connected"


def unix_connect(path: str) -> str:
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(b"escaped")
    return "connected"


def write_shm(name: str) -> str:
    Path("/dev/shm", name).write_text("left behind")
    return "wrote"


def fork_bomb(n: int) -> str:
    """Fork up to ``n`` children that each sleep; returns (JSON) how many started, their pids and the error
    that stopped it."""
    import json

    pids: list[int] = []
    error = None
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError as err:
            error = f"{type(err).__name__}: errno {err.errno}"
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        pids.append(pid)
    return json.dumps({"started": len(pids), "pids": pids, "error": error})


def leave_child() -> str:
    """Start a sleeping child that tries to leave the process group, and return at once."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
        except OSError:
            pass
        time.sleep(60)
        os._exit(0)
    return str(pid)


def signal_parent() -> str:
    os.kill(os.getppid(), 0)
    return "reached"


def isolated(work, **limits):
    """``work()`` run isolated as the probes run it: text results, a 30 s wall clock unless ``limits`` say."""
    return run_isolated(
        work, write=write_text, read=read_text, limits=Limits(**{"wall_seconds": 30, **limits}), label="probe"
    )
