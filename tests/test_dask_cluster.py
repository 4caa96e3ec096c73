"""``backend = "dask"`` end to end on real clusters: a scheduler and two workers started here as separate
``dask`` processes on 127.0.0.1, and the local cluster the harness starts itself. The score set (the
sidecar's bytes) equals the in-process run's bit for bit, also when a worker is killed in the middle of
the run (Dask reschedules its tasks); the harness shuts down a cluster it started, also on an error, and
never one it was pointed at. Every process started here is stopped in ``finally``; every wait is bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("distributed")  # the dask extra (make install installs it; it brings psutil)
import psutil  # noqa: E402

from benchmarks.cluster import ClusterError, check_workers, dask_client, parse_scheduler_address  # noqa: E402
from benchmarks.config import MODELS_DIR, ConfigError, resolve_benchmark_config  # noqa: E402
from benchmarks.results_io import strip_volatile  # noqa: E402
from benchmarks.run import main as run_main  # noqa: E402
from tests import _dask_slow  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = Path(__file__).parent / "fixtures" / "tiny_benchmark.toml"
START_SECONDS = 90.0  # a cold interpreter importing distributed on a loaded 2-core machine
RUN_SECONDS = 300.0

# the harness run in its own interpreter, with the slow forecaster registered there (and, for a local
# cluster, preloaded on its workers); argv: [mode, benchmarks.run arguments...]
_RUNNER = """
import os, sys
import dask
from tests import _dask_slow
_dask_slow.register()
dask.config.set({"distributed.worker.preload": ["tests._dask_slow"]})
mode, args = sys.argv[1], sys.argv[2:]
if mode == "fail":  # the cluster is up, then the run fails: the cluster must still be shut down
    import benchmarks.pipeline as pipeline
    def build_results(inputs):
        pids = inputs.dask_client.run(os.getpid)
        open(os.environ["TYCHEON_TEST_WORKER_PIDS"], "w").write(" ".join(str(p) for p in pids.values()))
        raise RuntimeError("deliberate failure after the cluster started")
    pipeline.build_results = build_results
from benchmarks.run import main
sys.exit(main(args))
"""


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    return env


def _config(tmp: Path, backend: str) -> tuple[Path, Path]:
    """A small benchmark (128 series, 4 chunks per unit) with the slow model; ``(config, models dir)``."""
    models = tmp / "models"
    models.mkdir(exist_ok=True)
    for m in ("naive", "snaive_momentum", "ses"):
        shutil.copy(MODELS_DIR / f"{m}.toml", models)
    (models / "slow_naive.toml").write_text(_dask_slow.MODEL_TOML)
    text = TINY.read_text()
    text = text[: text.index("[[competition]]")]
    text = (
        text.replace(
            'models = ["naive", "seasonal_naive", "snaive_momentum", "ses"]',
            'models = ["naive", "snaive_momentum", "ses", "slow_naive"]',
        )
        .replace("n_entities = 16", "n_entities = 128")
        .replace("n_jobs = 1", "n_jobs = 4")
        .replace('backend = "sequential"', f'backend = "{backend}"')
    )
    config = tmp / f"{backend}.toml"
    config.write_text(text)
    return config, models


def _run(
    tmp: Path,
    backend: str,
    *extra: str,
    mode: str = "run",
    env: dict[str, str] | None = None,
    kill: Path | None = None,
    killable: set[int] | None = None,
    log: str = "run",
) -> tuple[int, Path | None, list[int]]:
    """Run the benchmark in its own interpreter; returns ``(exit code, results JSON, killed pids)``.

    With ``kill`` (a marks folder), the first worker that marks it has started a slow task is killed
    (``SIGKILL``) while the run goes on; only a pid in ``killable``, or a descendant of the run, is killed.
    """
    config, models = _config(tmp, backend)
    results = tmp / f"results-{log}"
    args = [
        "--config",
        str(config),
        "--models-dir",
        str(models),
        "--results-dir",
        str(results),
        "--cache-dir",
        str(tmp / f"cache-{log}"),
        "--no-cache",
        *extra,
    ]
    out = (tmp / f"{log}.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUNNER, mode, *args],
        cwd=ROOT,
        env=env or _env(),
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    killed: list[int] = []
    try:
        deadline = time.monotonic() + RUN_SECONDS
        while proc.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the run did not finish in {RUN_SECONDS:g} s; log: {tmp / f'{log}.log'}")
            if kill is not None and not killed:
                killed = _kill_a_marked_worker(kill, proc.pid, killable or set())
            time.sleep(0.02)
    finally:
        _stop(proc)
        out.close()
    written = sorted(results.glob("*/v*.json"))
    return proc.returncode, (written[-1] if written else None), killed


def _kill_a_marked_worker(marks: Path, run_pid: int, killable: set[int]) -> list[int]:
    with contextlib.suppress(psutil.Error):
        ours = killable | {p.pid for p in psutil.Process(run_pid).children(recursive=True)}
        for mark in sorted(marks.iterdir()):
            pid = int(mark.name.split("-")[0])
            if pid in ours and pid != run_pid:
                os.kill(pid, signal.SIGKILL)
                return [pid]
    return []


def _stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop a process we started (and its process group): SIGTERM, then SIGKILL after ``grace`` s."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=grace)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # anything its group left behind


def _scores(path: Path) -> bytes:
    """The score set's stored bytes: every part the version lists, in its order."""
    parts = json.loads(path.read_text())["scores"]["parts"]
    return b"".join((path.parent / "parts" / f"{p['sha256']}.parquet").read_bytes() for p in parts)


def _tables(path: Path) -> dict:
    """The document without what depends on where and when it ran: timings, the backend named in the
    config, the config/code hashes and the engine's count of guard checks (one per task)."""
    doc = strip_volatile(json.loads(path.read_text()))
    doc["config"].pop("backend")
    for key in ("config_sha256", "code_sha256", "git_commit", "git_dirty"):
        doc["provenance"].pop(key)
    for dataset in doc["datasets"]:
        dataset["engine"].pop("guard_checks", None)
    return doc


def _gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.2)
    return alive


@pytest.fixture(scope="module")
def in_process(tmp_path_factory) -> Path:
    """The reference: the same benchmark with backend = "sequential" (every task in the run's process)."""
    tmp = tmp_path_factory.mktemp("in-process")
    code, path, _ = _run(tmp, "sequential", log="sequential")
    assert code == 0 and path is not None, (tmp / "sequential.log").read_text()[-3000:]
    return path


@dataclass
class External:
    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _external_cluster(tmp: Path, n_workers: int = 2, env: dict[str, str] | None = None) -> Iterator[External]:
    """``dask scheduler`` and ``n_workers`` × ``dask worker`` (no nanny, one thread) on 127.0.0.1, with
    ``env`` (default :func:`_env`)."""
    procs: list[subprocess.Popen] = []
    logs = []
    try:
        address = f"tcp://127.0.0.1:{_free_port()}"
        port = address.rsplit(":", 1)[1]

        def spawn(args: list[str], name: str) -> subprocess.Popen:
            log = (tmp / f"{name}.log").open("w")
            logs.append(log)
            proc = subprocess.Popen(
                [sys.executable, "-m", "dask", *args],
                cwd=tmp,
                env=env or _env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            procs.append(proc)
            return proc

        scheduler = spawn(["scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"], "scheduler")
        _wait_for_port(int(port), scheduler, tmp / "scheduler.log")
        workers = [
            spawn(
                [
                    "worker",
                    address,
                    "--host",
                    "127.0.0.1",
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--no-dashboard",
                    "--preload",
                    "tests._dask_slow",
                    "--name",
                    f"w{i}",
                    "--death-timeout",
                    "60",
                ],
                f"worker{i}",
            )
            for i in range(n_workers)
        ]
        from distributed import Client

        with Client(address, timeout=START_SECONDS, set_as_default=False) as client:
            client.wait_for_workers(n_workers, timeout=START_SECONDS)
        yield External(address, scheduler, workers)
    finally:
        for proc in reversed(procs):
            _stop(proc)
        for log in logs:
            log.close()


def _wait_for_port(port: int, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"dask scheduler exited with {proc.returncode}: {log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"dask scheduler not listening on {port} after {START_SECONDS:g} s")


# ------------------------------------------------------------------------------------------ real clusters
@pytest.mark.slow
def test_an_external_cluster_gives_the_in_process_score_set_bit_for_bit_and_is_left_running(in_process, tmp_path):
    with _external_cluster(tmp_path) as cluster:
        code, path, _ = _run(tmp_path, "dask", "--scheduler", cluster.address)
        assert code == 0 and path is not None, (tmp_path / "run.log").read_text()[-3000:]
        assert _scores(path) == _scores(in_process)
        assert _tables(path) == _tables(in_process)
        # ours to stop, not the harness's: the scheduler and both workers still serve
        assert cluster.scheduler.poll() is None and all(w.poll() is None for w in cluster.workers)
        from distributed import Client

        with Client(cluster.address, timeout=START_SECONDS, set_as_default=False) as client:
            assert len(client.scheduler_info(n_workers=-1)["workers"]) == 2


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_survived_with_the_same_score_set(in_process, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    env = _env(**{_dask_slow.MARKS: str(marks)})
    with _external_cluster(tmp_path, env=env) as cluster:
        workers = {w.pid for w in cluster.workers}
        code, path, killed = _run(
            tmp_path, "dask", "--scheduler", cluster.address, env=env, kill=marks, killable=workers
        )
        assert len(killed) == 1 and killed[0] in workers
        victim = next(w for w in cluster.workers if w.pid == killed[0])
        assert victim.wait(timeout=30) == -signal.SIGKILL
        assert code == 0 and path is not None, (tmp_path / "run.log").read_text()[-3000:]
        assert _scores(path) == _scores(in_process)
        assert _tables(path) == _tables(in_process)
        survivor = next(w for w in cluster.workers if w.pid != killed[0])
        later = [m for m in marks.iterdir() if int(m.name.split("-")[0]) == survivor.pid]
        assert later, "the surviving worker ran none of the slow tasks"


@pytest.mark.slow
def test_a_local_cluster_is_started_gives_the_same_score_set_survives_a_killed_worker_and_is_shut_down(
    in_process, tmp_path
):
    marks = tmp_path / "marks"
    marks.mkdir()
    env = _env(**{_dask_slow.MARKS: str(marks)})
    code, path, killed = _run(tmp_path, "dask", env=env, kill=marks)
    assert code == 0 and path is not None, (tmp_path / "run.log").read_text()[-3000:]
    assert len(killed) == 1  # one of the local cluster's worker processes, killed mid-task
    assert _scores(path) == _scores(in_process)
    assert _tables(path) == _tables(in_process)
    workers = sorted({int(m.name.split("-")[0]) for m in marks.iterdir()})
    assert len(workers) >= 2  # the nanny restarted the killed worker or another took its tasks
    assert _gone(workers) == [], "local cluster workers outlived the run"


@pytest.mark.slow
def test_a_local_cluster_is_shut_down_when_the_run_fails(tmp_path):
    pids_file = tmp_path / "pids"
    code, path, _ = _run(tmp_path, "dask", mode="fail", env=_env(TYCHEON_TEST_WORKER_PIDS=str(pids_file)))
    log = (tmp_path / "run.log").read_text()
    assert code != 0 and path is None and "deliberate failure after the cluster started" in log
    pids = [int(p) for p in pids_file.read_text().split()]
    assert len(pids) >= 1
    assert _gone(pids) == [], "local cluster workers outlived the failed run"


# -------------------------------------------------------------------------------------- addresses, errors
@pytest.fixture
def slow_registered(monkeypatch):
    """The slow model's forecaster in this process's registry, for one test."""
    from tycheon.forecasters import registry

    monkeypatch.setitem(registry._REGISTRY, _dask_slow.FORECASTER_ID, _dask_slow.SlowNaive)


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "tcp://node-7.cluster.example:8786", "tcp://[::1]:1"])
def test_a_scheduler_address_is_accepted(address):
    assert parse_scheduler_address(address) == address


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("127.0.0.1:8786", "is not valid"),
        ("tls://127.0.0.1:8786", "is not valid"),
        ("tcp://127.0.0.1", "is not valid"),
        ("tcp://127.0.0.1:0", "port 0 is out of range"),
        ("tcp://127.0.0.1:70000", "port 70000 is out of range"),
        ("tcp://300.1.1.1:8786", "300.1.1.1 is not an IPv4 address"),
        ("tcp://[::g]:8786", "is not valid"),
        ("tcp://bad_host:8786", "is not valid"),
        ("tcp://-host:8786", "'-host' is not a valid host name"),
        ("tcp://host:8786/path", "is not valid"),
    ],
)
def test_a_bad_scheduler_address_is_refused_saying_what_is_accepted(address, why):
    with pytest.raises(ValueError, match="accepted: tcp://HOST:PORT") as err:
        parse_scheduler_address(address)
    assert why in str(err.value)


def test_the_cli_refuses_a_bad_address_and_a_scheduler_for_another_backend(slow_registered, tmp_path, capsys):
    config, models = _config(tmp_path, "dask")
    base = ["--config", str(config), "--models-dir", str(models), "--results-dir", str(tmp_path / "r")]
    assert run_main([*base, "--scheduler", "localhost:8786"]) == 2
    assert "--scheduler: scheduler address 'localhost:8786' is not valid; accepted: tcp://HOST:PORT" in (
        capsys.readouterr().err
    )
    sequential, _ = _config(tmp_path, "sequential")
    assert (
        run_main(
            [
                "--config",
                str(sequential),
                "--models-dir",
                str(models),
                "--results-dir",
                str(tmp_path / "r"),
                "--scheduler",
                "tcp://127.0.0.1:1",
            ]
        )
        == 2
    )
    assert "is only used with backend = 'dask'" in capsys.readouterr().err
    assert run_main([*base, "--connect-timeout", "0"]) == 2
    assert not (tmp_path / "r").exists()


def test_the_config_field_is_checked_strictly(slow_registered, tmp_path):
    config, models = _config(tmp_path, "dask")
    text = config.read_text()
    config.write_text(text.replace('backend = "dask"', 'backend = "dask"\nscheduler = "tcp://10.0.0.5:8786"'))
    _, cfg, _ = resolve_benchmark_config(str(config), models_dir=models)
    assert cfg.scheduler == "tcp://10.0.0.5:8786"
    assert "scheduler" not in cfg.model_dump(mode="json")  # where it ran is not part of the results
    config.write_text(text.replace('backend = "dask"', 'backend = "dask"\nscheduler = "10.0.0.5"'))
    with pytest.raises(ConfigError, match="scheduler address '10.0.0.5' is not valid"):
        resolve_benchmark_config(str(config), models_dir=models)
    config.write_text(text.replace('backend = "dask"', 'backend = "joblib"\nscheduler = "tcp://10.0.0.5:8786"'))
    with pytest.raises(ConfigError, match="needs backend = 'dask'"):
        resolve_benchmark_config(str(config), models_dir=models)


def test_an_unreachable_scheduler_fails_within_the_timeout_naming_it(slow_registered, tmp_path, capsys):
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    config, models = _config(tmp_path, "dask")
    t0 = time.monotonic()
    code = run_main(
        [
            "--config",
            str(config),
            "--models-dir",
            str(models),
            "--results-dir",
            str(tmp_path / "r"),
            "--scheduler",
            address,
            "--connect-timeout",
            "2",
        ]
    )
    assert code == 1 and time.monotonic() - t0 < 60
    err = capsys.readouterr().err
    assert f"could not connect to the Dask scheduler at {address} within 2 s" in err
    assert not list((tmp_path / "r").glob("*/v*.json"))


def test_other_backends_start_no_cluster():
    with dask_client(backend="joblib") as client:
        assert client is None
    with (
        pytest.raises(ValueError, match="only used with backend = 'dask'"),
        dask_client(backend="sequential", scheduler="tcp://127.0.0.1:1"),
    ):
        pass
    assert issubclass(ClusterError, RuntimeError)


class _FakeClient:
    """What :func:`check_workers` asks of a client: ``run`` on every worker and the scheduler's address."""

    def __init__(self, facts):
        self.facts = facts
        self.scheduler = type("S", (), {"address": "tcp://10.0.0.1:8786"})()

    def run(self, fn):
        fn()  # the probe runs here too (it is what a worker runs)
        return self.facts


def test_workers_with_another_tycheon_or_python_are_refused_naming_them():
    import platform

    import tycheon

    ours = (tycheon.__version__, platform.python_version())
    assert check_workers(_FakeClient({"tcp://a:1": ours, "tcp://b:1": ours})) == 2
    with pytest.raises(ClusterError, match=r"tcp://b:1: tycheon 0\.0\.9, Python 3\.0\.0; install the same tycheon"):
        check_workers(_FakeClient({"tcp://a:1": ours, "tcp://b:1": ("0.0.9", "3.0.0")}))
    with pytest.raises(ClusterError, match="has no worker"):
        check_workers(_FakeClient({}))
