"""Run a piece of model work in a separate, limited process, and get back its result or why it failed.

A contributed model is code that tycheon did not write; a hang, a crash, ``sys.exit`` or a runaway
allocation inside it must be a recorded failure, never a stuck or aborted run. :func:`run_isolated` starts
a fresh interpreter (``python -m tycheon.backtest.isolation``) with

- a scrubbed environment: only ``PATH``, locale, the thread-count and numba-cache variables, and a
  ``HOME``/``TMPDIR`` inside a scratch directory (no tokens, no credentials of the parent), and joblib
  told that multiprocessing is unavailable (``JOBLIB_MULTIPROCESSING=0``: a model's own ``Parallel``
  runs in the child's process, which needs neither ``/dev/shm`` semaphores nor new processes);
- the scratch directory as its working directory (removed afterwards), and, where the kernel offers
  Landlock (Linux >= 5.13), no right to create, change or delete files anywhere else (its result folder
  and writes to ``/dev/null``-like nodes excepted; ``/dev/shm`` is *not* writable), and from Landlock
  ABI 6 no signal to a process outside the child's own tree
  (:func:`~tycheon.backtest.sandbox.restrict_writes`);
- a seccomp filter installed by the child on all its threads before it reads the work
  (:func:`~tycheon.backtest.sandbox.deny_syscalls`): ``socket()`` fails with ``EACCES`` for every
  address family, so no TCP, UDP, Unix-socket (a Docker socket), netlink or raw traffic;
  ``io_uring_setup`` (which can open sockets without ``socket()``), ``ptrace`` and
  ``process_vm_readv``/``writev`` (another process of the same user), and ``setsid``/``setpgid`` (leaving
  the process group the parent kills) fail with ``EPERM``; system calls of another ABI (32-bit x86, x32)
  are refused;
- resource limits set by the child on itself before it reads the work
  (:func:`~tycheon.backtest.sandbox.set_limits`): CPU seconds (``RLIMIT_CPU``), address space
  (``RLIMIT_AS``), largest file written (``RLIMIT_FSIZE``), no core dumps, and processes
  (``RLIMIT_NPROC``, see :class:`Limits`); where the child runs as root, which the kernel exempts from
  ``RLIMIT_NPROC``, the seccomp filter refuses every new process instead (threads stay allowed);
- a wall-clock limit enforced by the parent: the child signals when its imports are done, and from then on
  the whole process group is killed (``SIGKILL``) once ``wall_seconds`` have passed; the group is killed
  again when the child ends, so nothing it started outlives it.

The work travels *to* the child pickled (the parent trusts what it sends); the result comes *back* as
data only, written by ``write(result, path)`` in the child and read by ``read(path)`` in the parent (for
a score set: parquet), never as a pickle the parent would have to execute. Any ``BaseException`` in the
child (``SystemExit``, ``KeyboardInterrupt``, ``MemoryError``) becomes an :class:`IsolatedFailure` with its
type, message and traceback tail. The child reports which layers it had in place
(:func:`run_isolated_with_layers`); where the seccomp filter cannot be installed (not Linux, another
architecture than x86_64 or aarch64, a kernel without ``SECCOMP_FILTER``) it refuses to run the work unless
``Limits.require_seccomp`` is False.

The kernel layers themselves are :mod:`tycheon.backtest.sandbox`; this module is the runner around them.
Its child puts them in place in a fixed order: resource limits first, before its heavy imports; then, once
the imports are done, Landlock and then the seccomp filter; only then does it read the work and signal
that it started (the wall clock runs from that signal).

Limits: this is process isolation, not a full sandbox. Covered: no network of any family, no new session
or process group, no tracing of other processes, a bounded process count, CPU time, address space, file
size and wall clock, and, with Landlock, no file written outside scratch (``/dev/shm`` included) and,
with Landlock ABI >= 6, no signal to processes outside its tree. Not covered: the child can read every
file its user can read (source, caches, ``~/.ssh`` of that user); ``RLIMIT_NPROC`` counts every process
and thread of the child's real user, so another program of that user starting many processes at the same
time can use up the child's margin (its forks then fail, it is never the other way round); where Landlock
is unavailable it can write where its user can write, ``/dev/shm`` included (the working directory and
``HOME`` point into scratch, but nothing then stops an absolute path), below Landlock ABI 6 it can
signal other processes of its user (the harness among them), and a child running as root keeps root's
capabilities (none is dropped). A GitHub-hosted ``ubuntu-24.04`` runner
runs jobs as a non-root user on an Ubuntu kernel (6.8 or later) with seccomp filters and Landlock
enabled, so every layer above applies there (signal scoping from kernel 6.12, Landlock ABI 6); it
restricts unprivileged user namespaces through AppArmor, which is why no layer here needs one. A root
user in a container gets no ``RLIMIT_NPROC`` (the kernel exempts uid 0) but no new processes at all
instead. A container or a separate user is the next layer and is not provided here.
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
from typing import Any, Generic, TypeVar

from tycheon.backtest.sandbox import deny_syscalls, restrict_writes, restrict_writes_abi, set_limits

__all__ = [
    "Isolated",
    "IsolatedFailure",
    "Limits",
    "WallClockExceeded",
    "deny_syscalls",
    "restrict_writes",
    "run_isolated",
    "run_isolated_with_layers",
    "wall_clock_limit",
]

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
    processes : int or None
        Processes and threads the child may add to those its user already runs (``RLIMIT_NPROC`` is set to
        the user's count when the child starts plus this margin, because the kernel counts every task of
        the real user, not the child's own). The margin covers the child's thread pools (BLAS, numba,
        pyarrow) and leaves a fork bomb a few hundred processes at most.
    require_seccomp : bool
        Refuse to run the work where the seccomp filter cannot be installed (the failure says why); False
        runs it anyway and reports the filter as absent.
    """

    wall_seconds: float
    cpu_seconds: float | None = None
    memory_bytes: int | None = 8 * 1024**3
    file_bytes: int | None = 4 * 1024**3
    processes: int | None = 256
    require_seccomp: bool = True

    def __post_init__(self) -> None:
        if not self.wall_seconds > 0:
            raise ValueError(f"wall_seconds must be positive, got {self.wall_seconds!r}")
        if self.processes is not None and self.processes < 1:
            raise ValueError(f"processes must be a positive margin or None, got {self.processes!r}")


@dataclass(frozen=True)
class Isolated(Generic[T]):
    """What :func:`run_isolated_with_layers` returns: the work's result and the child's layers.

    ``layers`` maps each layer (``"seccomp"``, ``"landlock"``, ``"nproc"``) to what the child had in
    place, in words (``"absent: ..."`` where it had none).
    """

    value: T
    layers: dict[str, str]


class IsolatedFailure(RuntimeError):
    """The isolated work did not return a result; ``reason`` says why, ``traceback`` shows where."""

    def __init__(
        self,
        reason: str,
        traceback_text: str = "",
        *,
        error_type: str | None = None,
        layers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.traceback = traceback_text
        self.error_type = error_type  # the exception's class name when the work raised one
        self.layers = layers or {}  # what the child had in place, where it got as far as reporting it


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
        JOBLIB_MULTIPROCESSING="0",
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
    except (ProcessLookupError, PermissionError):  # the group is gone (its number no longer ours)
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
        died without a result, or was refused because a required layer could not be put in place; the
        reason names which.
    """
    return run_isolated_with_layers(work, write=write, read=read, limits=limits, label=label).value


def run_isolated_with_layers(
    work: Callable[[], T],
    *,
    write: Callable[[T, Path], None],
    read: Callable[[Path], T],
    limits: Limits,
    label: str = "model",
) -> Isolated[T]:
    """:func:`run_isolated`, returning also which layers the child had in place (:class:`Isolated`).

    A failure carries them too, in :attr:`IsolatedFailure.layers`, where the child reported them.
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
                    "processes": limits.processes,
                    "require_seccomp": limits.require_seccomp,
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
                    raise IsolatedFailure(
                        f"{label}: the isolated process did not start within {_STARTUP_SECONDS:g} s",
                        _tail(out / "stderr.txt"),
                    )
                try:
                    proc.wait(timeout=limits.wall_seconds)
                except subprocess.TimeoutExpired:
                    raise IsolatedFailure(
                        f"{label}: killed at its wall-clock limit of {limits.wall_seconds:g} s (still running)"
                    ) from None
            finally:
                # always, also after a normal exit: whatever the child started is still in its group (the
                # seccomp filter forbids setsid and setpgid), and nothing of it may outlive the child
                _kill_group(proc)
        return _outcome(proc.returncode, out, read=read, limits=limits, label=label)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)


def _outcome(returncode: int, out: Path, *, read: Callable[[Path], T], limits: Limits, label: str) -> Isolated[T]:
    layers = _layers(out)
    status_path = out / "status.json"
    if status_path.exists():
        try:
            status = json.loads(status_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise IsolatedFailure(
                f"{label}: the isolated process left an unreadable status ({err})", layers=layers
            ) from err
        if status.get("ok") is True and returncode == 0:
            return Isolated(read(out / "result"), layers)
        raise IsolatedFailure(
            f"{label}: {status.get('error', 'failed without a message')}",
            str(status.get("traceback", "")),
            error_type=str(status.get("type", "")) or None,
            layers=layers,
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
        raise IsolatedFailure(f"{label}: the isolated process {why}", tail, layers=layers)
    raise IsolatedFailure(
        f"{label}: the isolated process exited with code {returncode} without a result", tail, layers=layers
    )


def _layers(out: Path) -> dict[str, str]:
    try:
        layers = json.loads((out / "layers.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in layers.items()} if isinstance(layers, dict) else {}


def _child(out: Path, spec: dict[str, Any]) -> int:
    """The child's side of :func:`run_isolated_with_layers`: the layers of :mod:`tycheon.backtest.sandbox`
    in their order (resource limits, the heavy imports, Landlock, seccomp), then the work; 0 if it
    returned a result.
    """
    layers = {
        "nproc": set_limits(
            cpu_seconds=spec.get("cpu"),
            memory_bytes=spec.get("memory"),
            file_bytes=spec.get("file"),
            processes=spec.get("processes"),
        )
    }
    status: dict[str, Any]
    try:
        import numpy  # noqa: F401 - the heavy imports happen before the wall clock starts
        import pandas  # noqa: F401

        import tycheon.forecasters  # noqa: F401

        if spec.get("writable"):
            abi = restrict_writes_abi([Path(p) for p in spec["writable"]] + [out])
            layers["landlock"] = f"ABI {abi}" if abi else "absent: Landlock is not available on this kernel"
        # RLIMIT_NPROC does not bind uid 0: as root, no new processes at all
        no_processes = os.getuid() == 0 and bool(spec.get("processes"))
        refused = deny_syscalls(no_processes=no_processes)
        layers["seccomp"] = f"absent: {refused}" if refused else "sockets, io_uring, ptrace, setsid denied"
        if no_processes and not refused:
            layers["nproc"] = "no new processes (seccomp; uid 0 is exempt from RLIMIT_NPROC)"
        (out / "layers.json").write_text(json.dumps(layers), encoding="utf-8")
        if refused and spec.get("require_seccomp", True):
            raise _Refused(f"refused to run without its seccomp filter ({refused})")
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
            "error": str(err) if isinstance(err, _Refused) else f"{type(err).__name__}: {err}",
            "traceback": "\n".join(lines[-_TAIL:]),
        }
    tmp = out / "status.json.tmp"
    tmp.write_text(json.dumps(status), encoding="utf-8")
    os.replace(tmp, out / "status.json")
    return 0 if status["ok"] else 1


class _Refused(RuntimeError):
    """A required layer could not be put in place; the work was not run."""


if __name__ == "__main__":
    sys.exit(_child(Path(sys.argv[1]), json.loads(sys.argv[2])))
