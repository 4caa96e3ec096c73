"""Run a piece of model work in a separate, limited process, and get back its result or why it failed.

A contributed model is code that tycheon did not write; a hang, a crash, ``sys.exit`` or a runaway
allocation inside it must be a recorded failure, never a stuck or aborted run. :func:`run_isolated` starts
a fresh interpreter (``python -m tycheon.backtest.isolation``) with

- a scrubbed environment: only ``PATH``, locale, the thread-count and numba-cache variables, and a
  ``HOME``/``TMPDIR`` inside a scratch directory (no tokens, no credentials of the parent);
- the scratch directory as its working directory (removed afterwards), and, where the kernel offers
  Landlock (Linux >= 5.13), no right to create, change or delete files anywhere else (its result folder,
  ``/dev/shm`` for joblib's semaphores and writes to ``/dev`` nodes excepted; :func:`restrict_writes`);
- resource limits set by the child on itself before it reads the work (``setrlimit``): CPU seconds
  (``RLIMIT_CPU``), address space (``RLIMIT_AS``), largest file written (``RLIMIT_FSIZE``), no core dumps;
- a wall-clock limit enforced by the parent: the child signals when its imports are done, and from then on
  the whole process group is killed (``SIGKILL``) once ``wall_seconds`` have passed.

The work travels *to* the child pickled (the parent trusts what it sends); the result comes *back* as
data only, written by ``write(result, path)`` in the child and read by ``read(path)`` in the parent (for
a score set: parquet), never as a pickle the parent would have to execute. Any ``BaseException`` in the
child (``SystemExit``, ``KeyboardInterrupt``, ``MemoryError``) becomes an :class:`IsolatedFailure` with its
type, message and traceback tail.

Limits: this is process isolation, not a full sandbox. The child can still read every file its user can
read, use the network where Landlock is older than ABI 4, and, where Landlock is unavailable, write where
its user can write (the working directory and ``HOME`` point into scratch, but nothing then stops an
absolute path); a container is the next layer and is not provided here.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["IsolatedFailure", "Limits", "WallClockExceeded", "restrict_writes", "run_isolated", "wall_clock_limit"]

T = TypeVar("T")

_PASS_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "NUMBA_CACHE_DIR",
)
_TAIL = 12
_NESTED = "TYCHEON_ISOLATED"
_STARTUP_SECONDS = 120.0  # imports of a cold interpreter (numba, sktime) on a loaded machine


@dataclass(frozen=True)
class Limits:
    """Resource limits of one isolated run.

    Parameters
    ----------
    wall_seconds : float
        Wall-clock seconds from the end of the child's imports until it is killed.
    cpu_seconds : float or None
        CPU seconds of the child process (``RLIMIT_CPU``; ``SIGXCPU`` beyond it).
    memory_bytes : int or None
        Address space of the child process (``RLIMIT_AS``); an allocation beyond it raises ``MemoryError``.
    file_bytes : int or None
        Largest file the child may write (``RLIMIT_FSIZE``).
    """

    wall_seconds: float
    cpu_seconds: float | None = None
    memory_bytes: int | None = 8 * 1024**3
    file_bytes: int | None = 4 * 1024**3

    def __post_init__(self) -> None:
        if not self.wall_seconds > 0:
            raise ValueError(f"wall_seconds must be positive, got {self.wall_seconds!r}")


class IsolatedFailure(RuntimeError):
    """The isolated work did not return a result; ``reason`` says why, ``traceback`` shows where."""

    def __init__(self, reason: str, traceback_text: str = "", *, error_type: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.traceback = traceback_text
        self.error_type = error_type  # the exception's class name when the work raised one


class WallClockExceeded(BaseException):
    """Raised in the main thread by :func:`wall_clock_limit` when its seconds are up.

    A ``BaseException``, so that model code catching ``Exception`` cannot swallow it.
    """


@contextlib.contextmanager
def wall_clock_limit(seconds: float | None, *, label: str = "model") -> Iterator[None]:
    """Raise :class:`WallClockExceeded` in the main thread after ``seconds`` of wall-clock time.

    The in-process counterpart of :func:`run_isolated`'s kill, for code tycheon trusts (its own
    forecasters): a ``SIGALRM`` timer, so it interrupts Python code (and a joblib/Dask wait in the main
    thread) but not a C call that never returns to the interpreter. Once expired it fires again every half
    second until the block ends, so nothing under the block outlives it. Outside the main thread, or with
    ``seconds=None``, it does nothing.
    """
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def _alarm(signum: int, frame: Any) -> None:
        raise WallClockExceeded(f"{label}: stopped at its wall-clock limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    # after the first alarm it repeats every half second: the engine records the first one as the model's
    # failure in one task and would otherwise run the model's next task without a limit
    signal.setitimer(signal.ITIMER_REAL, float(seconds), 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _env(scratch: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _PASS_ENV if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update(
        {_NESTED: "1"},
        HOME=str(scratch),
        TMPDIR=str(scratch),
        PYTHONHASHSEED="0",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join(os.path.abspath(p or os.curdir) for p in sys.path),
    )
    return env


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 8192))
            lines = fh.read().decode("utf-8", "replace").rstrip().splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-_TAIL:])


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _wait_for(path: Path, proc: subprocess.Popen, deadline: float) -> bool:
    """Wait until ``path`` exists or the child ends or ``deadline`` passes; True if the file exists."""
    while time.monotonic() < deadline:
        if path.exists():
            return True
        if proc.poll() is not None:
            return path.exists()
        time.sleep(0.05)
    return path.exists()


def run_isolated(
    work: Callable[[], T],
    *,
    write: Callable[[T, Path], None],
    read: Callable[[Path], T],
    limits: Limits,
    label: str = "model",
) -> T:
    """Run ``work()`` in a limited child process and return ``read(path)`` of what it wrote.

    Parameters
    ----------
    work : callable
        Zero-argument and picklable (a module-level function, a ``functools.partial``).
    write, read : callable
        ``write(result, path)`` runs in the child, ``read(path)`` in the parent; both module-level.
    limits : Limits
    label : str
        Named in the failure reasons.

    Raises
    ------
    IsolatedFailure
        The work raised (any ``BaseException``), hit a resource limit, was killed at the wall-clock limit,
        or died without a result; the reason names which.
    """
    if os.environ.get(_NESTED) == "1":  # an isolated child that tries to isolate again: a fork bomb
        raise IsolatedFailure(f"{label}: refused to start an isolated process from inside one")
    scratch = Path(tempfile.mkdtemp(prefix="tycheon-isolated-"))
    out = Path(tempfile.mkdtemp(prefix="tycheon-result-"))
    try:
        (out / "work.pkl").write_bytes(pickle.dumps((work, write)))
        cmd = [
            sys.executable,
            "-m",
            "tycheon.backtest.isolation",
            str(out),
            json.dumps(
                {
                    "cpu": limits.cpu_seconds,
                    "memory": limits.memory_bytes,
                    "file": limits.file_bytes,
                    "writable": [str(scratch)],
                }
            ),
        ]
        with (out / "stderr.txt").open("wb") as err:
            proc = subprocess.Popen(
                cmd,
                cwd=scratch,
                env=_env(scratch),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )
            try:
                started = _wait_for(out / "started", proc, time.monotonic() + _STARTUP_SECONDS)
                if not started and proc.poll() is None:
                    _kill_group(proc)
                    raise IsolatedFailure(
                        f"{label}: the isolated process did not start within {_STARTUP_SECONDS:g} s",
                        _tail(out / "stderr.txt"),
                    )
                try:
                    proc.wait(timeout=limits.wall_seconds)
                except subprocess.TimeoutExpired:
                    _kill_group(proc)
                    raise IsolatedFailure(
                        f"{label}: killed at its wall-clock limit of {limits.wall_seconds:g} s (still running)"
                    ) from None
            finally:
                if proc.poll() is None:
                    _kill_group(proc)
        return _outcome(proc.returncode, out, read=read, limits=limits, label=label)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)


def _outcome(returncode: int, out: Path, *, read: Callable[[Path], T], limits: Limits, label: str) -> T:
    status_path = out / "status.json"
    if status_path.exists():
        try:
            status = json.loads(status_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise IsolatedFailure(f"{label}: the isolated process left an unreadable status ({err})") from err
        if status.get("ok") is True and returncode == 0:
            return read(out / "result")
        raise IsolatedFailure(
            f"{label}: {status.get('error', 'failed without a message')}",
            str(status.get("traceback", "")),
            error_type=str(status.get("type", "")) or None,
        )
    tail = _tail(out / "stderr.txt")
    if returncode < 0:
        sig = signal.Signals(-returncode)
        why = {
            signal.SIGXCPU: f"hit its CPU-time limit of {limits.cpu_seconds:g} s"
            if limits.cpu_seconds
            else "hit its CPU-time limit",
            signal.SIGXFSZ: "wrote a file beyond its file-size limit",
            signal.SIGKILL: "was killed (SIGKILL; out of memory or killed by the system)",
        }.get(sig, f"died from signal {sig.name}")
        raise IsolatedFailure(f"{label}: the isolated process {why}", tail)
    raise IsolatedFailure(f"{label}: the isolated process exited with code {returncode} without a result", tail)


def _set_limits(spec: dict[str, Any]) -> None:
    import resource

    def cap(kind: int, soft: int) -> None:
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(kind, (soft, hard if hard != resource.RLIM_INFINITY else soft))

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if spec.get("cpu"):
        secs = int(spec["cpu"]) + 1
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (secs, secs + 5 if hard == resource.RLIM_INFINITY else hard))
    if spec.get("memory"):
        cap(resource.RLIMIT_AS, int(spec["memory"]))
    if spec.get("file"):
        cap(resource.RLIMIT_FSIZE, int(spec["file"]))


# Landlock (Linux >= 5.13): the file-system rights a process can give up for good.
_LL_WRITE_FILE, _LL_REMOVE_DIR, _LL_REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
_LL_MAKE = sum(1 << b for b in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_LL_REFER, _LL_TRUNCATE = 1 << 13, 1 << 14
_SYS_LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}


def restrict_writes(writable: list[Path]) -> bool:
    """Forbid this process (and its children) to create, change or delete files outside ``writable``
    (plus writing to ``/dev`` nodes such as ``/dev/null``), and, with Landlock ABI >= 4, to bind or connect
    TCP sockets; reading files stays allowed.

    Returns False, changing nothing, where Landlock is unavailable (not Linux, an old kernel, disabled).
    """
    import ctypes
    import platform

    numbers = _SYS_LANDLOCK.get(platform.machine())
    if sys.platform != "linux" or numbers is None:
        return False
    create, add_rule, restrict = numbers
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(create, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # ..._CREATE_RULESET_VERSION
    if abi < 1:
        return False
    handled = _LL_WRITE_FILE | _LL_REMOVE_DIR | _LL_REMOVE_FILE | _LL_MAKE
    handled |= (_LL_REFER if abi >= 2 else 0) | (_LL_TRUNCATE if abi >= 3 else 0)
    # struct landlock_ruleset_attr: handled_access_fs, then (ABI >= 4) handled_access_net: TCP bind and
    # connect handled with no rule allowing them, so no TCP at all
    attr = (ctypes.c_uint64 * 2)(handled, 0b11)
    size = 16 if abi >= 4 else 8
    ruleset = libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return False

    class _PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    try:
        rules = [(p, handled) for p in writable] + [(Path("/dev"), _LL_WRITE_FILE | (handled & _LL_TRUNCATE))]
        for path, rights in rules:
            if not path.exists():
                continue
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneath(rights, fd)
                if libc.syscall(add_rule, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    return False
            finally:
                os.close(fd)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, required to restrict self
            return False
        return libc.syscall(restrict, ruleset, ctypes.c_uint32(0)) == 0
    finally:
        os.close(ruleset)


def _child(out: Path, spec: dict[str, Any]) -> int:
    _set_limits(spec)
    status: dict[str, Any]
    try:
        import numpy  # noqa: F401 - the heavy imports happen before the wall clock starts
        import pandas  # noqa: F401

        import tycheon.forecasters  # noqa: F401

        if spec.get("writable"):
            restrict_writes([Path(p) for p in spec["writable"]] + [out, Path("/dev/shm")])
        work, write = pickle.loads((out / "work.pkl").read_bytes())
        (out / "started").touch()
        result = work()
        write(result, out / "result")
        status = {"ok": True}
    except BaseException as err:  # noqa: BLE001 - everything from the work is reported, SystemExit included
        lines = "".join(traceback.format_exception(type(err), err, err.__traceback__)).rstrip().splitlines()
        status = {
            "ok": False,
            "type": type(err).__name__,
            "error": f"{type(err).__name__}: {err}",
            "traceback": "\n".join(lines[-_TAIL:]),
        }
    tmp = out / "status.json.tmp"
    tmp.write_text(json.dumps(status), encoding="utf-8")
    os.replace(tmp, out / "status.json")
    return 0 if status["ok"] else 1


if __name__ == "__main__":
    sys.exit(_child(Path(sys.argv[1]), json.loads(sys.argv[2])))
