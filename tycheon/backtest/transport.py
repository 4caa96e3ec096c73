"""Task results from local worker processes through shared memory instead of the result pipe.

A joblib (loky) worker hands its result back by pickling it into the pipe it shares with the calling
process, which reads it in pipe-sized pieces. At panel scale a task's result is tens of megabytes (the
forecasts, targets and band radii of 4,096 series at 8 origins for 8 models: 29 MB), and on the 2-core
benchmark VM a pipe moved such a result several times slower than a file in ``/dev/shm`` mapped by the
caller, while the caller stalled on it (timings: benchmarks/perf/MEASUREMENTS.md).

So a worker pickles its result with protocol 5, whose large contiguous buffers (every numeric numpy
array) are kept out of band (:pep:`574`), writes those buffers into one file under :data:`SHARED_DIR` and
returns a small :class:`SharedResult`: the pickle without its buffers, the file's path and where each
buffer lies in it. The caller maps the file copy-on-write, removes its name at once (the memory is freed
when the last array on it goes) and unpickles with the mapped buffers: the arrays are read where the worker
wrote them, without another copy. The object is the same as the one the worker returned (the
``pickle`` round trip either way), so the score set is the same bit for bit.

Whatever cannot go through shared memory goes through the pipe as before: results under
:data:`MIN_SHARED_BYTES`, systems without ``/dev/shm`` (macOS, Windows), and a full or read-only
``/dev/shm`` (the buffers are written with ``write``, never through a mapping, so a small container
``/dev/shm`` gives ``ENOSPC`` to catch, not a ``SIGBUS``; the partial file is removed). Files left behind
by a run that stopped half-way (an exception in the caller, Ctrl-C) are removed by :func:`sweep` when the
run ends; only a caller killed outright can leave one, named ``tycheon-<pid>-...``.
"""

from __future__ import annotations

import glob
import mmap
import os
import pickle
import sys
import uuid
from dataclasses import dataclass
from typing import Any

__all__ = ["MIN_SHARED_BYTES", "SHARED_DIR", "SharedResult", "receive", "run_prefix", "ship", "shared_dir", "sweep"]

SHARED_DIR = "/dev/shm"
"""Where the workers write the buffers of their results (a memory file system on Linux)."""

MIN_SHARED_BYTES = 1 << 20
"""Results whose out-of-band buffers hold fewer bytes travel through the pipe (a file costs a few
system calls; a megabyte through the pipe costs about as much)."""

_ALIGN = 64  # each buffer starts at a multiple of this in the file: the arrays on it are aligned


@dataclass(frozen=True)
class SharedResult:
    """A task result whose large buffers wait in a file of :data:`SHARED_DIR`.

    Attributes
    ----------
    header : bytes
        The result pickled with protocol 5, its out-of-band buffers left out.
    path : str
        The file holding the buffers.
    spans : tuple of (int, int)
        Offset and length in bytes of each buffer in the file, in the order the pickle asks for them.
    """

    header: bytes
    path: str
    spans: tuple[tuple[int, int], ...]

    def load(self) -> Any:
        """The result, its arrays on a private (copy-on-write) mapping of the file; removes the file."""
        fd = os.open(self.path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)  # mapped in one call, not per page
            mapping = mmap.mmap(fd, size, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
            os.unlink(self.path)
        view = memoryview(mapping)
        return pickle.loads(self.header, buffers=[view[o : o + n] for o, n in self.spans])


def shared_dir() -> str | None:
    """:data:`SHARED_DIR` where this system has it writable (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    return SHARED_DIR if os.path.isdir(SHARED_DIR) and os.access(SHARED_DIR, os.W_OK | os.X_OK) else None


def run_prefix() -> str:
    """A file-name prefix that is this run's alone: ``tycheon-<pid>-<random>``."""
    return f"tycheon-{os.getpid()}-{uuid.uuid4().hex[:12]}"


def ship(result: Any, *, directory: str, prefix: str) -> Any:
    """In the worker: ``result`` as a :class:`SharedResult` whose buffers are written under ``directory``,
    or ``result`` itself when it is small or the file cannot be written (then it goes through the pipe)."""
    buffers: list[pickle.PickleBuffer] = []
    header = pickle.dumps(result, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]  # numpy gives out-of-band buffers only for contiguous arrays
    spans: list[tuple[int, int]] = []
    end = 0
    for raw in raws:
        start = -(-end // _ALIGN) * _ALIGN
        spans.append((start, raw.nbytes))
        end = start + raw.nbytes
    if end < MIN_SHARED_BYTES:
        return result
    path = os.path.join(directory, f"{prefix}-{uuid.uuid4().hex}")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return result
    try:
        for raw, (start, _) in zip(raws, spans, strict=True):
            os.lseek(fd, start, os.SEEK_SET)
            rest = raw
            while rest.nbytes:
                rest = rest[os.write(fd, rest) :]
    except OSError:
        os.close(fd)
        os.unlink(path)
        return result
    os.close(fd)
    return SharedResult(header, path, tuple(spans))


def receive(obj: Any) -> Any:
    """In the caller: the result a worker shipped (loaded from shared memory, or as it came)."""
    return obj.load() if isinstance(obj, SharedResult) else obj


def sweep(directory: str | None, prefix: str) -> int:
    """Remove the files of a run (``prefix``) that nobody received; returns how many there were."""
    if directory is None:
        return 0
    removed = 0
    for path in glob.glob(os.path.join(glob.escape(directory), glob.escape(prefix) + "-*")):
        try:
            os.unlink(path)
            removed += 1
        except FileNotFoundError:
            pass
    return removed
