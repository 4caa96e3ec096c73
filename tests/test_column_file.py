"""A column written past the page cache comes back bit for bit (benchmarks.column_file), through direct
I/O where the file system has it and through an ordinary file where it does not."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest

from benchmarks import column_file
from benchmarks.column_file import BLOCK, CHUNK, read_column, write_column


def _columns() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    n = CHUNK // 8 + 1234  # more than one staging chunk, and a last block that needs padding
    floats = rng.normal(size=n)
    floats[::7] = np.nan
    floats[1] = -0.0
    return {
        "float64": floats,
        "float32": floats.astype(np.float32),
        "int16": rng.integers(-(2**15), 2**15, size=n, dtype=np.int16),
        "bool": rng.random(n) < 0.3,
        "datetime": np.datetime64("2020-01-01", "ns") + rng.integers(0, 10**15, size=n).astype("timedelta64[ns]"),
        "strided": floats[::3],  # not contiguous
        "broadcast": np.broadcast_to(np.float64(np.nan), (n,)),  # one value seen n times, as the engine writes
        "empty": np.zeros(0),
        "small": np.arange(5, dtype=np.int64),
        "two_d": rng.normal(size=(17, 3)),
    }


@pytest.mark.parametrize("name", list(_columns()))
def test_a_column_comes_back_bit_for_bit_with_its_dtype_and_shape(tmp_path: Path, name: str):
    values = _columns()[name]
    stored = write_column(tmp_path / f"{name}.col", values)
    back = read_column(stored)
    assert back.dtype == values.dtype and back.shape == values.shape
    assert back.tobytes() == np.ascontiguousarray(values).tobytes()
    assert back.flags.writeable and back.flags.c_contiguous


def test_direct_files_are_whole_blocks_and_padded_only_at_the_end(tmp_path: Path):
    values = _columns()["float64"]
    stored = write_column(tmp_path / "x.col", values)
    if not stored.direct:
        pytest.skip(f"{tmp_path} does not do direct I/O")
    size = stored.path.stat().st_size
    assert size % BLOCK == 0 and values.nbytes <= size < values.nbytes + BLOCK
    assert stored.path.read_bytes()[: values.nbytes] == values.tobytes()


def test_without_direct_io_the_same_bytes_go_through_an_ordinary_file(tmp_path: Path, monkeypatch):
    def refuse(path, flags, mode=0o777):  # what tmpfs answers to O_DIRECT
        if flags & getattr(os, "O_DIRECT", 0):
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, mode)

    real_open = os.open
    monkeypatch.setattr(column_file.os, "open", refuse)
    values = _columns()["datetime"]
    stored = write_column(tmp_path / "x.col", values)
    assert stored.direct is False
    assert stored.path.stat().st_size == values.nbytes
    np.testing.assert_array_equal(read_column(stored), values)


def test_an_item_size_that_does_not_divide_the_block_is_written_buffered(tmp_path: Path):
    values = np.array([b"abc", b"de", b"f"], dtype="S3")
    stored = write_column(tmp_path / "s.col", values)
    assert stored.direct is False
    np.testing.assert_array_equal(read_column(stored), values)


def test_object_columns_are_refused_and_an_existing_file_is_never_overwritten(tmp_path: Path):
    with pytest.raises(TypeError, match="Python objects"):
        write_column(tmp_path / "o.col", np.array(["a", None], dtype=object))
    first = write_column(tmp_path / "x.col", np.arange(3))
    with pytest.raises(FileExistsError):
        write_column(tmp_path / "x.col", np.arange(4))
    np.testing.assert_array_equal(read_column(first), [0, 1, 2])


def test_a_truncated_file_is_an_error_not_short_values(tmp_path: Path):
    values = np.arange(3 * BLOCK, dtype=np.int64)
    stored = write_column(tmp_path / "x.col", values)
    with open(stored.path, "r+b") as f:
        f.truncate(BLOCK)
    with pytest.raises(OSError, match="expected"):
        read_column(stored)


def test_a_file_system_that_refuses_direct_writes_gets_the_bytes_buffered(tmp_path: Path, monkeypatch):
    """Open with O_DIRECT accepted, the write refused (EINVAL): the partial file goes and the column is
    written through the page cache instead; any other write error is raised, with no file left."""
    real_write = os.write
    calls = {"n": 0}

    def refuse(fd, data):
        calls["n"] += 1
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(column_file.os, "write", refuse)
    values = _columns()["float64"]
    stored = write_column(tmp_path / "x.col", values)
    if calls["n"] == 0:
        pytest.skip(f"{tmp_path} does not do direct I/O")
    assert stored.direct is False
    np.testing.assert_array_equal(read_column(stored), values)

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(column_file.os, "write", full)
    with pytest.raises(OSError, match="No space"):
        write_column(tmp_path / "y.col", values)
    assert not (tmp_path / "y.col").exists()
    monkeypatch.setattr(column_file.os, "write", real_write)
