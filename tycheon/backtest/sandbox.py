"""The kernel-level layers a process puts on itself before it runs code tycheon did not write.

Each function here acts on the calling process (Landlock: on the calling thread and what it starts
later), for good (no layer can be lifted once in place), and changes nothing where the kernel does not
offer it; the caller reports what it got.
:mod:`tycheon.backtest.isolation` runs them in its child, in this order:

1. :func:`set_limits`, first, before the child's heavy imports: ``setrlimit`` on CPU seconds, address
   space, largest file written, core dumps and processes (``RLIMIT_NPROC`` at the user's running tasks plus
   a margin);
2. :func:`restrict_writes_abi` (:func:`restrict_writes`), after the imports and before the work is read:
   Landlock (Linux >= 5.13) takes away the right to create, change or delete files outside the given
   folders, from ABI 4 TCP bind and connect, and from ABI 6 signals and abstract Unix sockets outside the
   process's own Landlock domain;
3. :func:`deny_syscalls`, last, on every thread of the process: a seccomp filter that makes ``socket()``,
   ``io_uring_setup``, ``ptrace``, ``process_vm_readv``/``writev``, ``setsid``/``setpgid`` and system
   calls of another ABI fail (and, for a process running as root, which ``RLIMIT_NPROC`` does not bind,
   every new process).

All of it is standard library and ``ctypes`` (system-call numbers for x86_64 and aarch64), so importing
this module starts no thread and opens no file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["deny_syscalls", "restrict_writes", "restrict_writes_abi", "set_limits"]


def set_limits(
    *,
    cpu_seconds: float | None,
    memory_bytes: int | None,
    file_bytes: int | None,
    processes: int | None,
) -> str:
    """Set this process's resource limits (see :class:`~tycheon.backtest.isolation.Limits`); returns how
    processes are bounded, in words (``"absent: ..."`` where they are not).

    Core dumps are always off; a limit that is None (or 0) is left as it is. For address space, file size
    and processes the soft limit is the asked one, at most the hard limit; an unlimited hard limit is
    lowered to it (so the process cannot raise it back), a finite one is kept. CPU seconds are rounded down
    plus one, with ``SIGKILL`` five seconds after ``SIGXCPU`` where no hard limit was set.
    """
    import resource

    def cap(kind: int, soft: int) -> None:
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(kind, (soft, hard if hard != resource.RLIM_INFINITY else soft))

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if cpu_seconds:
        secs = int(cpu_seconds) + 1
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (secs, secs + 5 if hard == resource.RLIM_INFINITY else hard))
    if memory_bytes:
        cap(resource.RLIMIT_AS, int(memory_bytes))
    if file_bytes:
        cap(resource.RLIMIT_FSIZE, int(file_bytes))
    if not processes:
        return "absent: no process limit asked for"
    if os.getuid() == 0:
        return "absent: RLIMIT_NPROC does not bind uid 0 and no seccomp filter was installed"
    running = _tasks_of(os.getuid())
    if running is None:
        return "absent: the user's processes cannot be counted here (no /proc)"
    cap(resource.RLIMIT_NPROC, running + int(processes))
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
    return restrict_writes_abi(writable) > 0


def restrict_writes_abi(writable: list[Path]) -> int:
    """:func:`restrict_writes`, returning the Landlock ABI put in place (0 where none was)."""
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
