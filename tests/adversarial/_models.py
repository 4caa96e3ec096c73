"""Hostile and broken forecasters for the adversarial probes (importing this module only defines them;
the tests register them for their own duration)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import numpy as np

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
