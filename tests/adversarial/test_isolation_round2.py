"""Probes, second round: a contributed model's parameters cannot exhaust the harness's memory, and an isolated
model reaches no network of any family, leaves nothing in ``/dev/shm``, cannot fork without bound and
leaves no process behind."""

from __future__ import annotations

import ctypes
import functools
import json
import os
import platform
import resource
import socket
import time
import uuid
from pathlib import Path

import pytest

from benchmarks import config, model_run
from benchmarks.config import MODELS_DIR, load_model_config
from tests.adversarial import _models
from tycheon.backtest.factories import forecaster_factory, instance_factory
from tycheon.backtest.isolation import IsolatedFailure, Limits, run_isolated_with_layers

DENIED = "probe: PermissionError: [Errno 13] Permission denied"


def _landlock_abi() -> int:
    if platform.machine() not in ("x86_64", "aarch64"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    return max(0, libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))


def _seccomp_filters() -> bool:
    # PR_GET_SECCOMP answers on every kernel built with seccomp; the filter itself needs x86_64 or aarch64
    libc = ctypes.CDLL(None, use_errno=True)
    return platform.machine() in ("x86_64", "aarch64") and libc.prctl(21, 0, 0, 0, 0) >= 0


needs_seccomp = pytest.mark.skipif(not _seccomp_filters(), reason="the kernel has no seccomp filters (SECCOMP_FILTER)")
needs_landlock = pytest.mark.skipif(_landlock_abi() < 1, reason="Landlock is not available on this kernel")


def _hostile_or_registered(forecaster_id: str, **params):
    if forecaster_id in _models.HOSTILE:
        return instance_factory(_models.HOSTILE[forecaster_id](**params))
    return forecaster_factory(forecaster_id, **params)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs a second after the call (a SIGKILL is delivered, not waited for)."""
    deadline = time.monotonic() + 2.0
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state == "Z" or time.monotonic() > deadline:  # a zombie is dead, waiting to be reaped
            return state != "Z"
        time.sleep(0.05)


@pytest.mark.slow
def test_when_a_tycheon_route_model_allocates_without_bound_then_it_fails_isolated_and_the_harness_stays_small(
    bench, hostile, monkeypatch
):
    # lightgbm_global with n_lags = 500000 grew the harness to 5.6 GB in process; this hog holds 3 GiB
    # against a 1.5 GiB limit, so the probe needs little of the machine
    monkeypatch.setattr(model_run, "ISOLATED_MEMORY_BYTES", 3 * 1024**3 // 2)
    if hasattr(config, "CONTRIBUTED_PARAMS"):  # the parameter bounds a contributed config is checked against
        monkeypatch.setitem(config.CONTRIBUTED_PARAMS, "adv_hog", {"gib": config.Bound("float", 0, 16)})
    # the child process has only the roster registered: the hog travels as a class, not as a registry id
    monkeypatch.setattr(model_run, "forecaster_factory", _hostile_or_registered)
    bench.model("hog", 'kind = "tycheon"\nforecaster = "adv_hog"', "gib = 3")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    assert bench.run(bench.config(["naive", "snaive_momentum", "hog"])) == 0
    doc = json.loads((bench.results / "adv" / "v0001.json").read_text())
    runs = {m["id"]: m["runs"] for m in doc["models"]}
    assert {r["status"] for r in runs["hog"]} == {"failed"}
    assert all(r["reason"].startswith("MemoryError: Unable to allocate 256. MiB") for r in runs["hog"])
    assert {r["status"] for r in runs["naive"]} == {"ran"}
    # the record says what kept it in (a machine fact, left out of run comparisons like timings)
    assert all({"seccomp", "landlock", "nproc"} <= set(r["isolation"]) for r in runs["hog"])
    assert not any("isolation" in r for r in runs["naive"])
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 1024**2  # grew by under 1 GiB


def test_committed_models_run_in_process_and_any_model_with_parameters_runs_isolated(bench):
    committed = [load_model_config(p) for p in sorted(MODELS_DIR.glob("*.toml"))]
    assert {m.id for m in committed if model_run.contributed(m)} == {"sktime_theta"}
    with_params = load_model_config(
        bench.model("lgb", 'kind = "tycheon"\nforecaster = "lightgbm_global"', "n_lags = 12")
    )
    assert model_run.contributed(with_params)


@needs_seccomp
def test_an_isolated_model_cannot_send_udp_to_a_listener(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        with pytest.raises(IsolatedFailure) as info:
            _models.isolated(functools.partial(_models.udp_send, listener.getsockname()[1]))
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.recv(64)  # nothing arrived
    assert info.value.reason == DENIED


@needs_seccomp
def test_an_isolated_model_cannot_connect_to_a_tcp_listener():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        with pytest.raises(IsolatedFailure) as info:
            _models.isolated(functools.partial(_models.tcp_connect, listener.getsockname()[1]))
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection is waiting
    assert info.value.reason == DENIED


@needs_seccomp
def test_an_isolated_model_cannot_connect_to_a_unix_socket(tmp_path):
    # what a Docker socket looks like to the child: a listening path its user may connect to
    path = str(tmp_path / "docker.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        os.chmod(path, 0o777)
        listener.listen()
        with pytest.raises(IsolatedFailure) as info:
            _models.isolated(functools.partial(_models.unix_connect, path))
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert info.value.reason == DENIED


@needs_landlock
def test_an_isolated_model_leaves_nothing_in_dev_shm():
    name = f"tycheon-probe-{uuid.uuid4().hex}"
    try:
        with pytest.raises(IsolatedFailure) as info:
            _models.isolated(functools.partial(_models.write_shm, name))
        assert info.value.reason == f"{DENIED}: '/dev/shm/{name}'"
        assert not Path("/dev/shm", name).exists()
    finally:
        Path("/dev/shm", name).unlink(missing_ok=True)


@needs_seccomp
def test_a_fork_bomb_in_an_isolated_model_is_bounded_and_leaves_no_process():
    margin = 64
    result = run_isolated_with_layers(
        functools.partial(_models.fork_bomb, 2000),
        write=_models.write_text,
        read=_models.read_text,
        limits=Limits(wall_seconds=30, processes=margin),
        label="probe",
    )
    report = json.loads(result.value)
    # as root no process at all (uid 0 is exempt from RLIMIT_NPROC, seccomp refuses them); otherwise at
    # most the margin over what the user ran when the child started
    assert report["started"] <= (0 if os.getuid() == 0 else margin)
    assert report["error"] == "BlockingIOError: errno 11"
    assert "nproc" in result.layers and not result.layers["nproc"].startswith("absent")
    assert not [pid for pid in report["pids"] if _alive(pid)]  # the group was killed when the child ended


@needs_seccomp
def test_a_child_started_by_an_isolated_model_does_not_outlive_it():
    try:
        pid = int(_models.isolated(_models.leave_child))
    except IsolatedFailure as err:  # as root it may not start one at all
        assert os.getuid() == 0
        assert err.reason == "probe: BlockingIOError: [Errno 11] Resource temporarily unavailable"
        return
    assert not _alive(pid)


@pytest.mark.skipif(_landlock_abi() < 6, reason="Landlock ABI >= 6 (signal scoping) is not available on this kernel")
def test_an_isolated_model_cannot_signal_the_harness():
    with pytest.raises(IsolatedFailure) as info:
        _models.isolated(_models.signal_parent)
    assert info.value.reason == "probe: PermissionError: [Errno 1] Operation not permitted"


@needs_seccomp
def test_the_child_reports_the_layers_it_had_in_place():
    result = run_isolated_with_layers(
        _models.ok, write=_models.write_text, read=_models.read_text, limits=Limits(wall_seconds=30)
    )
    assert result.value == "fine"
    assert result.layers["seccomp"] == "sockets, io_uring, ptrace, setsid denied"
    abi = _landlock_abi()
    assert result.layers["landlock"] == f"ABI {abi}" if abi else result.layers["landlock"].startswith("absent: ")
