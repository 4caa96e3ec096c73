"""Helpers for the adversarial probes: a tiny benchmark in a temporary folder, the committed model configs
plus whatever a probe adds, and a record of the results already written (which no probe may lose)."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.config import MODELS_DIR
from benchmarks.run import main as run_main
from tests.adversarial._models import HOSTILE
from tycheon.forecasters import registry

TINY = Path(__file__).parent.parent / "fixtures" / "tiny_benchmark.toml"
MODEL_HEADER = 'id = "{id}"\ndisplay_name = "{name}"\nfamily = "test"\nlicence = "MIT"\ncontributor = "tests"\n'


@dataclass
class Bench:
    root: Path

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    def model(self, model_id: str, source: str, params: str = "", name: str | None = None) -> Path:
        path = self.models / f"{model_id}.toml"
        path.write_text(
            MODEL_HEADER.format(id=model_id, name=name or model_id)
            + f"[source]\n{source}\n"
            + (f"[params]\n{params}\n" if params else ""),
            encoding="utf-8",
        )
        return path

    def config(self, models: list[str], *, budget: float | None = None, name: str = "adv") -> Path:
        text = TINY.read_text().replace('name = "tiny"', f'name = "{name}"')
        text = text.replace(
            'models = ["naive", "seasonal_naive", "snaive_momentum", "ses"]', f"models = {models!r}".replace("'", '"')
        )
        text = text[: text.index("[[competition]]")]
        text = text.replace("options = { n_entities = 16,", "options = { n_entities = 6,")
        if budget is not None:
            text = text.replace("n_jobs = 1", f"n_jobs = 1\ntime_budget_seconds = {budget}")
        path = self.root / f"{name}.toml"
        path.write_text(text)
        return path

    def run(self, config: Path, *extra: str) -> int:
        return run_main(
            [
                "--config",
                str(config),
                "--results-dir",
                str(self.results),
                "--cache-dir",
                str(self.cache),
                "--models-dir",
                str(self.models),
                *extra,
            ]
        )

    def written(self) -> dict[str, str]:
        """sha256 of every file under the results folder."""
        return {
            str(p.relative_to(self.results)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(self.results.rglob("*"))
            if p.is_file() and p.name != ".lock"
        }


@pytest.fixture
def bench(tmp_path) -> Bench:
    b = Bench(tmp_path)
    b.models.mkdir()
    for m in ("naive", "snaive_momentum", "seasonal_naive", "ses"):
        shutil.copy(MODELS_DIR / f"{m}.toml", b.models)
    return b


@pytest.fixture
def hostile(monkeypatch):
    """Register the hostile forecasters for one test."""
    for fid, cls in HOSTILE.items():
        monkeypatch.setitem(registry._REGISTRY, fid, cls)
