"""Task results through shared memory (tycheon.backtest.transport): the same objects as through the pipe,
no file left behind, and the pipe whenever shared memory cannot serve."""

from __future__ import annotations

import errno
import os
import pickle
from dataclasses import dataclass

import numpy as np
import pytest

from tycheon.backtest import transport
from tycheon.backtest.execution import run_tasks

pytestmark = pytest.mark.skipif(transport.shared_dir() is None, reason="no writable /dev/shm on this system")


@dataclass
class _Result:
    name: str
    arrays: list[np.ndarray]
    radii: tuple[np.ndarray | None, ...]


def _result(n: int = 300_000, seed: int = 0) -> _Result:
    rng = np.random.default_rng(seed)
    point = rng.normal(size=(n // 6, 6))
    point[3, 2] = -0.0
    point[4, 1] = np.nan
    return _Result(
        name="naive",
        arrays=[
            point,
            np.arange(n, dtype=np.int64),
            (np.datetime64("2020-01-01", "ns") + np.arange(7)).reshape(7, 1),  # small, datetime
            rng.random(n) < 0.5,  # bool
            point[:1000, ::2],  # not contiguous: pickled in band
            np.asarray(["a", "b"], dtype=object),
            np.asfortranarray(rng.normal(size=(50, 40))),
        ],
        radii=(rng.random(n // 2), None),
    )


def _same(a: _Result, b: _Result) -> None:
    assert a.name == b.name and len(a.arrays) == len(b.arrays)
    for x, y in zip(a.arrays, b.arrays, strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        if x.dtype == object:
            assert x.tolist() == y.tolist()
        else:  # bit for bit: -0.0 and NaN payloads too
            assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()
    assert b.radii[1] is None and np.array_equal(a.radii[0], b.radii[0])


def _ours(directory: str, prefix: str) -> list[str]:
    return [f for f in os.listdir(directory) if f.startswith(prefix)]


def test_a_shipped_result_loads_as_the_same_objects_and_its_file_is_gone():
    directory, prefix = transport.shared_dir(), transport.run_prefix()
    assert directory is not None
    result = _result()
    shipped = transport.ship(result, directory=directory, prefix=prefix)
    assert isinstance(shipped, transport.SharedResult)
    assert len(pickle.dumps(shipped)) < 50_000  # through the pipe: the in-band part (24 kB) of 8 MB
    assert _ours(directory, prefix) == [os.path.basename(shipped.path)]
    assert all(offset % 64 == 0 for offset, _ in shipped.spans)
    loaded = transport.receive(shipped)
    assert _ours(directory, prefix) == []  # the name is removed on receipt; the mapping keeps the data
    _same(result, loaded)
    point = loaded.arrays[0]
    assert point.flags.writeable and point.flags.aligned  # private mapping: writing does not reach the file
    point[0, 0] = 42.0
    assert point[0, 0] == 42.0


def test_small_results_and_unwritable_files_go_through_the_pipe(monkeypatch, tmp_path):
    directory, prefix = transport.shared_dir(), transport.run_prefix()
    assert directory is not None
    small = _result(n=600)
    assert transport.ship(small, directory=directory, prefix=prefix) is small  # under MIN_SHARED_BYTES
    big = _result()
    missing = str(tmp_path / "gone")
    assert transport.ship(big, directory=missing, prefix=prefix) is big  # the directory does not exist

    real_write, written = os.write, []

    def fills_up(fd: int, data: memoryview) -> int:  # a small container /dev/shm: full after 1 MB
        if written:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(fd)
        return real_write(fd, data[: 1 << 20])

    monkeypatch.setattr(os, "write", fills_up)
    assert transport.ship(big, directory=directory, prefix=prefix) is big
    assert written and _ours(directory, prefix) == []  # the partial file is removed again
    assert transport.receive(big) is big


def test_sweep_removes_only_the_files_of_its_run():
    directory = transport.shared_dir()
    assert directory is not None
    mine, other = transport.run_prefix(), transport.run_prefix()
    left = transport.ship(_result(seed=1), directory=directory, prefix=mine)
    kept = transport.ship(_result(seed=2), directory=directory, prefix=other)
    assert transport.sweep(directory, mine) == 1 and not os.path.exists(left.path)
    assert os.path.exists(kept.path)
    _same(_result(seed=2), transport.receive(kept))
    assert transport.sweep(None, mine) == 0


class _Task:
    def __init__(self, seed: int) -> None:
        self.seed = seed

    def __call__(self) -> _Result:
        return _result(seed=self.seed)


def test_joblib_workers_hand_large_results_back_through_shared_memory(monkeypatch):
    """Equal results in task order, every one received from a file, and no file left behind."""
    received: list[bool] = []
    real = transport.receive

    def spy(obj: object) -> object:
        received.append(isinstance(obj, transport.SharedResult))
        return real(obj)

    monkeypatch.setattr(transport, "receive", spy)
    prefixes: list[str] = []
    make = transport.run_prefix
    monkeypatch.setattr(transport, "run_prefix", lambda: prefixes.append(make()) or prefixes[-1])
    tasks = [_Task(seed) for seed in range(4)]
    got = run_tasks(tasks, backend="joblib", n_jobs=2)
    assert received == [True] * 4
    for seed, result in enumerate(got):
        _same(_result(seed=seed), result)
    directory = transport.shared_dir()
    assert directory is not None and _ours(directory, prefixes[0]) == []


class _Failing:
    def __call__(self) -> _Result:
        raise ValueError("task failed")


def test_a_run_that_stops_half_way_leaves_no_file(monkeypatch):
    prefixes: list[str] = []
    make = transport.run_prefix
    monkeypatch.setattr(transport, "run_prefix", lambda: prefixes.append(make()) or prefixes[-1])
    with pytest.raises(ValueError, match="task failed"):
        run_tasks([_Task(0), _Task(1), _Failing(), _Task(2), _Task(3)], backend="joblib", n_jobs=2)
    directory = transport.shared_dir()
    assert directory is not None and _ours(directory, prefixes[0]) == []
