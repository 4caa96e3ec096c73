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
  ABI 6 no signal to a process outside the child's own tree (:func:`restrict_writes`);
- a seccomp filter installed by the child on all its threads before it reads the work
  (:func:`deny_syscalls`): ``socket()`` fails with ``EACCES`` for every address family, so no TCP, UDP,
  Unix-socket (a Docker socket), netlink or raw traffic; ``io_uring_setup`` (which can open sockets
  without ``socket()``), ``ptrace`` and ``process_vm_readv``/``writev`` (another process of the same
  user), and ``setsid``/``setpgid`` (leaving the process group the parent kills) fail with ``EPERM``;
  system calls of another ABI (32-bit x86, x32) are refused;
- resource limits set by the child on itself before it reads the work (``setrlimit``): CPU seconds
  (``RLIMIT_CPU``), address space (``RLIMIT_AS``), largest file written (``RLIMIT_FSIZE``), no core dumps,
  and processes (``RLIMIT_NPROC``, see :class:`Limits`); where the child runs as root, which the kernel
  exempts from ``RLIMIT_NPROC``, the seccomp filter refuses every new process instead (threads stay
  allowed);
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


def _set_limits(spec: dict[str, Any]) -> str:
    """Set the child's resource limits; returns how processes are bounded, in words."""
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
    if not spec.get("processes"):
        return "absent: no process limit asked for"
    if os.getuid() == 0:
        return "absent: RLIMIT_NPROC does not bind uid 0 and no seccomp filter was installed"
    running = _tasks_of(os.getuid())
    if running is None:
        return "absent: the user's processes cannot be counted here (no /proc)"
    cap(resource.RLIMIT_NPROC, running + int(spec["processes"]))
    return f"RLIMIT_NPROC {resource.getrlimit(resource.RLIMIT_NPROC)[0]} ({running} tasks of the user running)"


def _tasks_of(uid: int) -> int | None:
    """Processes and threads whose real user is ``uid`` (what ``RLIMIT_NPROC`` counts), or None."""
    proc = Path("/proc")
    if not (proc / "self" / "status").exists():
        return None
    count = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
        except OSError:  # ended while being read
            continue
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            count += int(fields.get("Threads", "1"))
    return count


# Landlock (Linux >= 5.13): the file-system rights a process can give up for good.
_LL_WRITE_FILE, _LL_REMOVE_DIR, _LL_REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
_LL_MAKE = sum(1 << b for b in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_LL_REFER, _LL_TRUNCATE = 1 << 13, 1 << 14
_LL_SCOPE_ABSTRACT_UNIX, _LL_SCOPE_SIGNAL = 1, 2
_SYS_LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_DEV_WRITABLE = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
_PR_SET_NO_NEW_PRIVS = 38


def restrict_writes(writable: list[Path]) -> bool:
    """Forbid this thread (and what it starts later) to create, change or delete files outside ``writable``
    (plus writing to the nodes of :data:`_DEV_WRITABLE` such as ``/dev/null``; not ``/dev/shm``), with
    Landlock ABI >= 4 to bind or connect TCP sockets, and with ABI >= 6 to signal a process or connect to
    an abstract Unix socket outside its own Landlock domain; reading files stays allowed.

    Returns False, changing nothing, where Landlock is unavailable (not Linux, an old kernel, disabled).
    """
    return _landlock(writable) > 0


def _landlock(writable: list[Path]) -> int:
    """:func:`restrict_writes`; returns the Landlock ABI put in place, 0 where none was."""
    import ctypes
    import platform

    numbers = _SYS_LANDLOCK.get(platform.machine())
    if sys.platform != "linux" or numbers is None:
        return 0
    create, add_rule, restrict = numbers
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(create, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # ..._CREATE_RULESET_VERSION
    if abi < 1:
        return 0
    handled = _LL_WRITE_FILE | _LL_REMOVE_DIR | _LL_REMOVE_FILE | _LL_MAKE
    handled |= (_LL_REFER if abi >= 2 else 0) | (_LL_TRUNCATE if abi >= 3 else 0)
    # struct landlock_ruleset_attr: handled_access_fs, then (ABI >= 4) handled_access_net: TCP bind and
    # connect handled with no rule allowing them, so no TCP at all; then (ABI >= 6) scoped: signals and
    # abstract Unix sockets only within the domain
    attr = (ctypes.c_uint64 * 3)(handled, 0b11, _LL_SCOPE_ABSTRACT_UNIX | _LL_SCOPE_SIGNAL)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return 0

    class _PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    try:
        # the /dev nodes one by one, not /dev: a rule on the folder would let the child write to any file
        # already in /dev/shm (another process's shared memory)
        node = _LL_WRITE_FILE | (handled & _LL_TRUNCATE)
        rules = [(p, handled) for p in writable] + [(Path(p), node) for p in _DEV_WRITABLE]
        for path, rights in rules:
            if not path.exists():
                continue
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneath(rights, fd)
                if libc.syscall(add_rule, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    return 0
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:  # required to restrict self
            return 0
        return abi if libc.syscall(restrict, ruleset, ctypes.c_uint32(0)) == 0 else 0
    finally:
        os.close(ruleset)


# seccomp (Linux >= 3.17 for the thread-synchronising flag): a classic-BPF program over struct seccomp_data
# {int nr; u32 arch; u64 ip; u64 args[6]}, little-endian on both architectures below
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_SYS = {  # name -> number, per architecture (fork and vfork do not exist on aarch64)
    "x86_64": {
        "socket": 41,
        "io_uring_setup": 425,
        "ptrace": 101,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "setsid": 112,
        "setpgid": 109,
        "fork": 57,
        "vfork": 58,
        "clone": 56,
        "clone3": 435,
        "seccomp": 317,
    },
    "aarch64": {
        "socket": 198,
        "io_uring_setup": 425,
        "ptrace": 117,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "setsid": 157,
        "setpgid": 154,
        "clone": 220,
        "clone3": 435,
        "seccomp": 277,
    },
}
_X32_SYSCALL_BIT = 0x40000000
_CLONE_THREAD = 0x00010000
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_EPERM, _EAGAIN, _EACCES, _ENOSYS = 1, 11, 13, 38


def _seccomp_program(machine: str, *, no_processes: bool) -> list[tuple[int, int, int, int]]:
    """The filter as ``(code, jt, jf, k)`` instructions; see :func:`deny_syscalls`."""
    nr = _SYS[machine]
    errno = {
        # EACCES, which socket(2) documents for "permission to create a socket ... is denied"
        "socket": _EACCES,
        "io_uring_setup": _EPERM,
        "ptrace": _EPERM,
        "process_vm_readv": _EPERM,
        "process_vm_writev": _EPERM,
        "setsid": _EPERM,
        "setpgid": _EPERM,
    }
    if no_processes:
        # EAGAIN, what fork(2) returns at RLIMIT_NPROC; ENOSYS for clone3 makes glibc fall back to clone,
        # where threads (CLONE_THREAD) stay allowed
        errno |= {"fork": _EAGAIN, "vfork": _EAGAIN, "clone3": _ENOSYS}
    prog = [
        (_LD_W_ABS, 0, 0, 4),  # arch
        (_JEQ_K, 1, 0, _AUDIT_ARCH[machine]),
        (_RET_K, 0, 0, _RET_ERRNO | _EPERM),  # another ABI (32-bit x86 through int 0x80): nothing
        (_LD_W_ABS, 0, 0, 0),  # nr
    ]
    if machine == "x86_64":
        prog += [(_JGE_K, 0, 1, _X32_SYSCALL_BIT), (_RET_K, 0, 0, _RET_ERRNO | _EPERM)]
    for name, code in errno.items():
        if name in nr:
            prog += [(_JEQ_K, 0, 1, nr[name]), (_RET_K, 0, 0, _RET_ERRNO | code)]
    if no_processes:
        prog += [
            (_JEQ_K, 0, 4, nr["clone"]),
            (_LD_W_ABS, 0, 0, 16),  # the low word of args[0]: clone's flags on both architectures
            (_JSET_K, 0, 1, _CLONE_THREAD),
            (_RET_K, 0, 0, _RET_ALLOW),
            (_RET_K, 0, 0, _RET_ERRNO | _EAGAIN),
        ]
    return [*prog, (_RET_K, 0, 0, _RET_ALLOW)]


def deny_syscalls(*, no_processes: bool = False) -> str | None:
    """Install a seccomp filter on every thread of this process (and what it starts later): ``socket()``
    fails with ``EACCES`` for every address family; ``io_uring_setup``, ``ptrace``,
    ``process_vm_readv``/``writev``, ``setsid`` and ``setpgid`` with ``EPERM``; system calls of another ABI
    with ``EPERM``. With ``no_processes``, new processes fail with ``EAGAIN`` (threads stay allowed).

    ``socketpair()`` stays allowed: it makes an anonymous connected pair that reaches nothing outside.
    The filter cannot be removed, and it is inherited across ``fork`` and ``execve``.

    Returns None once installed, or why it could not be (not Linux, an architecture other than x86_64 or
    aarch64, a kernel without seccomp filters), changing nothing then.
    """
    import ctypes
    import platform

    machine = platform.machine()
    if sys.platform != "linux" or machine not in _SYS:
        return f"seccomp filters are supported here on Linux x86_64 and aarch64 only, not {sys.platform} {machine}"

    class _Instruction(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_uint16),
            ("jt", ctypes.c_uint8),
            ("jf", ctypes.c_uint8),
            ("k", ctypes.c_uint32),
        ]

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]

    prog = _seccomp_program(machine, no_processes=no_processes)
    instructions = (_Instruction * len(prog))(*(_Instruction(*i) for i in prog))
    program = _Program(len(prog), instructions)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:  # required to filter self without CAP_SYS_ADMIN
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}"
    # SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_TSYNC: the threads numpy's import started get it too
    if libc.syscall(_SYS[machine]["seccomp"], 1, 1, ctypes.byref(program)) != 0:
        return f"seccomp(SECCOMP_SET_MODE_FILTER) failed: {os.strerror(ctypes.get_errno())}"
    return None


def _child(out: Path, spec: dict[str, Any]) -> int:
    layers = {"nproc": _set_limits(spec)}
    status: dict[str, Any]
    try:
        import numpy  # noqa: F401 - the heavy imports happen before the wall clock starts
        import pandas  # noqa: F401

        import tycheon.forecasters  # noqa: F401

        if spec.get("writable"):
            abi = _landlock([Path(p) for p in spec["writable"]] + [out])
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
