"""One numpy column in a private file, written and read past the page cache (``O_DIRECT``) where it can be.

:mod:`benchmarks.spill` holds score-set columns on disk so that they do not take memory while stages that
do not read them run. Written through the page cache, a spilled column stays in memory anyway (as file
cache) until the kernel writes it back and reclaims it, and is read back from there or from the disk;
on the 2-core VM the benchmarks run on, that path was slow both ways whenever the cache had been
reclaimed, and the m5scale study writes gigabytes of spill files. Direct I/O moves the bytes between
the process and the disk with no cache copy, several times faster on the same VM, and the spilled bytes
really leave memory (measured in benchmarks/perf/MEASUREMENTS.md).

Direct I/O needs the buffer, the file offset and the length aligned to the device's block: the bytes
pass through one page-aligned buffer of :data:`CHUNK` bytes (a copy at memory speed), the last block is
padded, and the column's dtype, shape and byte length are kept in the returned :class:`ColumnFile`
(the file holds the raw bytes only). Where the file system refuses ``O_DIRECT`` (tmpfs, some network
file systems) or the dtype's item size does not divide the block, the same bytes go through an
ordinary buffered file: the values come back identical either way.
"""

from __future__ import annotations

import errno
import mmap
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["BLOCK", "CHUNK", "ColumnFile", "read_column", "write_column"]

BLOCK = 4096
"""Alignment of direct I/O: a multiple of every common logical block size (512, 4096)."""
CHUNK = 8 << 20
"""Bytes per write or read through the aligned buffer."""


@dataclass(frozen=True)
class ColumnFile:
    """Where a column's bytes are and what they are."""

    path: Path
    dtype: np.dtype
    shape: tuple[int, ...]
    direct: bool
    """Written with ``O_DIRECT`` (read back the same way)."""


_local = threading.local()


def _aligned_buffer() -> mmap.mmap:
    """This thread's staging buffer: an anonymous mapping (page-aligned), made once and reused, so its
    pages are faulted in once, not per column."""
    buffer = getattr(_local, "buffer", None)
    if buffer is None:
        buffer = _local.buffer = mmap.mmap(-1, CHUNK)
    return buffer


def _open_direct(path: Path, flags: int) -> int | None:
    """``os.open`` with ``O_DIRECT``, or None where the platform or the file system has none."""
    direct = getattr(os, "O_DIRECT", 0)
    if not direct:
        return None
    try:
        return os.open(path, flags | direct, 0o600)
    except OSError as err:
        if err.errno == errno.EINVAL:  # this file system does not do direct I/O
            return None
        raise


def write_column(path: str | Path, values: np.ndarray) -> ColumnFile:
    """Write ``values`` (numeric, bool or datetime; any layout, a broadcast view included) to a new file
    ``path`` and return what :func:`read_column` needs to give them back."""
    path = Path(path)
    values = np.asarray(values)
    if values.dtype.hasobject:
        raise TypeError(f"column of dtype {values.dtype} holds Python objects; only plain values are written")
    flat = values.reshape(-1) if values.ndim != 1 else values
    itemsize = values.dtype.itemsize
    fd = _open_direct(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL) if itemsize and BLOCK % itemsize == 0 else None
    if fd is not None:
        try:
            _write_direct(fd, flat)
        except OSError as err:
            if err.errno != errno.EINVAL:  # the file system took O_DIRECT at open but refuses it on write
                path.unlink(missing_ok=True)
                raise
            path.unlink(missing_ok=True)  # written again below, through the page cache
        else:
            return ColumnFile(path, values.dtype, values.shape, True)
        finally:
            os.close(fd)
    with open(path, "xb") as f:
        f.write(np.ascontiguousarray(flat).view(np.uint8).data)
    return ColumnFile(path, values.dtype, values.shape, False)


def _write_direct(fd: int, flat: np.ndarray) -> None:
    """``flat``'s bytes to ``fd`` (opened with ``O_DIRECT``) through the aligned buffer, the last block padded."""
    buffer = _aligned_buffer()
    per_chunk = CHUNK // flat.dtype.itemsize
    staged = np.frombuffer(buffer, dtype=flat.dtype, count=per_chunk)
    for start in range(0, len(flat), per_chunk):
        part = flat[start : start + per_chunk]
        staged[: len(part)] = part
        padded = -(-len(part) * flat.dtype.itemsize // BLOCK) * BLOCK
        written = 0
        while written < padded:
            written += os.write(fd, memoryview(buffer)[written:padded])


def read_column(column: ColumnFile) -> np.ndarray:
    """The values :func:`write_column` wrote, in a new array of their dtype and shape."""
    out = np.empty(column.shape, dtype=column.dtype)
    raw = out.reshape(-1).view(np.uint8)
    if not column.direct:
        with open(column.path, "rb") as f:
            got = f.readinto(raw.data)
        if got != raw.nbytes:
            raise OSError(f"{column.path}: {got} bytes read, {raw.nbytes} expected")
        return out
    fd = os.open(column.path, os.O_RDONLY | os.O_DIRECT)
    buffer = _aligned_buffer()
    staged = np.frombuffer(buffer, dtype=np.uint8)
    try:
        at = 0
        while at < raw.nbytes:
            got = os.readv(fd, [buffer])  # whole blocks: the file was padded to one
            if got <= 0:
                raise OSError(f"{column.path}: ends after {at} bytes, {raw.nbytes} expected")
            take = min(got, raw.nbytes - at)
            raw[at : at + take] = staged[:take]
            at += take
    finally:
        os.close(fd)
    return out
