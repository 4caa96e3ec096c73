"""Cache of finished (dataset, protocol, model) engine output under ``benchmarks/.cache/``.

The key is the sha256 of everything that determines the score set: the dataset's content hash, the
validated model config, the protocol and engine options, the seed, the tycheon and harness sources, the
versions of the packages that compute forecasts and the CPU kind (:func:`forecast_packages`). Only models
that *ran* are cached (a failure or a skip may depend on the machine and is retried).

An entry proves what it holds: ``<key>.parquet`` beside ``<key>.json``, a manifest with the key and the
sha256 of the parquet file's bytes. A lookup whose manifest is missing or unreadable, names another key,
or whose parquet bytes do not hash to the recorded sha256 (a truncated, corrupted or edited file), or
that pyarrow cannot read, is a **miss** with a :class:`CacheWarning`, never a crash and never a result.
Entries are written atomically (temp file + rename; the manifest last), so an interrupted run leaves no
entry that verifies.

The hash proves the file is the one that was written, not that what was written is right: anyone who can
write the cache directory can write a new parquet *and* its manifest. A publishing run therefore
recomputes a random sample of its cache hits (``verify_fraction``) and refuses to go on when one differs
bit for bit (:class:`CacheMismatchError`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from tycheon.backtest.scoreset import ScoreSet

__all__ = [
    "CACHE_DIR",
    "CacheMismatchError",
    "CacheWarning",
    "ScoreCache",
    "cache_key",
    "forecast_packages",
    "harness_code_sha256",
    "same_scores",
]

CACHE_DIR = Path(__file__).resolve().parent / ".cache"
# Packages whose code computes or stores forecasts: a new version may change a number.
FORECAST_PACKAGES = (
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "statsforecast",
    "numba",
    "sktime",
    "lightgbm",
    "pyarrow",
    "joblib",
)
_FORMAT = 2


class CacheWarning(UserWarning):
    """A cache entry was ignored (a miss) because it could not prove what it holds."""


class CacheMismatchError(RuntimeError):
    """A cache entry, recomputed, did not give the same score set bit for bit."""


@lru_cache(maxsize=1)
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor()


def forecast_packages() -> dict[str, str | None]:
    """Installed versions of :data:`FORECAST_PACKAGES` (None when absent), the Python version and the CPU
    (iterative fits may differ in the last bits across CPUs, so an entry is only reused on the same kind)."""
    out: dict[str, str | None] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu": _cpu_model(),
    }
    for name in FORECAST_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


@lru_cache(maxsize=1)
def harness_code_sha256() -> str:
    """sha256 of the harness's Python sources that produce numbers (not its configs, models, results or
    cache, which enter the key through their own hashes or are outputs)."""
    from benchmarks.provenance import HARNESS_DIR, HARNESS_OUTPUTS, HARNESS_READERS, files_sha256, package_files

    files = [p for p in package_files(HARNESS_DIR, skip=HARNESS_READERS | HARNESS_OUTPUTS) if p.suffix == ".py"]
    return files_sha256(HARNESS_DIR, files)


def cache_key(**parts: Any) -> str:
    """sha256 of the canonical JSON of ``parts`` (keys sorted)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def same_scores(a: ScoreSet, b: ScoreSet) -> str | None:
    """None when two score sets hold the same rows bit for bit, else the first difference in words."""
    if list(a.table.columns) != list(b.table.columns):
        return f"columns differ: {list(a.table.columns)} vs {list(b.table.columns)}"
    if len(a.table) != len(b.table):
        return f"{len(a.table)} rows vs {len(b.table)}"
    for col in a.table.columns:
        x, y = a.table[col].to_numpy(), b.table[col].to_numpy()
        if x.dtype == y.dtype == np.float64:
            same = np.array_equal(x.view(np.int64), y.view(np.int64))  # bit for bit, NaN included
        else:
            same = bool((a.table[col].astype(object) == b.table[col].astype(object)).all())
        if not same:
            return f"column {col!r} differs"
    if (a.samples is None) != (b.samples is None) or (
        a.samples is not None and not np.array_equal(a.samples, b.samples, equal_nan=True)
    ):
        return "sample paths differ"
    if tuple(a.quantile_levels) != tuple(b.quantile_levels):
        return "quantile levels differ"
    return None


class ScoreCache:
    """Score sets by key, each entry verified on read.

    Parameters
    ----------
    directory : path
    enabled : bool
        ``False`` makes every lookup a miss and every store a no-op.
    verify_fraction : float
        Share of cache hits (chosen by the key's hash and ``verify_seed``, so reproducibly) that the
        pipeline recomputes and compares bit for bit before using them; 0 (the default) verifies none.
    verify_seed : int
    """

    def __init__(
        self, directory: Path = CACHE_DIR, *, enabled: bool = True, verify_fraction: float = 0.0, verify_seed: int = 0
    ) -> None:
        if not 0.0 <= verify_fraction <= 1.0:
            raise ValueError(f"verify_fraction must be in [0, 1], got {verify_fraction!r}")
        self.directory = Path(directory)
        self.enabled = enabled
        self.verify_fraction = float(verify_fraction)
        self.verify_seed = int(verify_seed)

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.parquet"

    def _manifest(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def should_verify(self, key: str) -> bool:
        """Whether a hit on ``key`` is one of the sample to recompute (uniform in the key's hash)."""
        if self.verify_fraction <= 0.0:
            return False
        draw = int(hashlib.sha256(f"{self.verify_seed}:{key}".encode()).hexdigest()[:15], 16) / 16**15
        return draw < self.verify_fraction

    def _miss(self, key: str, why: str) -> None:
        warnings.warn(f"score cache entry {key[:12]}... ignored (recomputed): {why}", CacheWarning, stacklevel=3)
        return None

    def get(self, key: str) -> ScoreSet | None:
        """The verified score set under ``key``, or None (a miss; with a :class:`CacheWarning` when an
        entry exists but cannot prove what it holds)."""
        path = self._path(key)
        if not self.enabled or not path.exists():
            return None
        try:
            manifest = json.loads(self._manifest(key).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return self._miss(key, "no manifest beside it (written by an older tycheon, or tampered with)")
        except (OSError, ValueError) as err:
            return self._miss(key, f"unreadable manifest ({err})")
        if not isinstance(manifest, dict) or manifest.get("key") != key or manifest.get("format") != _FORMAT:
            return self._miss(key, "its manifest names another key or format")
        try:
            digest = _file_sha256(path)
        except OSError as err:
            return self._miss(key, f"unreadable ({err})")
        if digest != manifest.get("sha256"):
            return self._miss(
                key, "its content does not match the sha256 in its manifest (truncated, corrupted or edited)"
            )
        try:
            scores = ScoreSet.from_parquet(path)
        except Exception as err:  # noqa: BLE001 - pyarrow's errors vary by damage; any is a miss
            return self._miss(key, f"not a readable score set ({type(err).__name__}: {err})")
        if not isinstance(scores.meta, dict) or not isinstance(scores.meta.get("models"), dict):
            return self._miss(key, "its metadata has no per-model status")
        return scores

    def put(self, key: str, scores: ScoreSet) -> None:
        """Store ``scores`` under ``key`` with its manifest; each file atomically, the manifest last."""
        if not self.enabled:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".", suffix=".parquet.tmp", dir=self.directory)
        os.close(fd)
        fd, tmp_manifest = tempfile.mkstemp(prefix=".", suffix=".json.tmp", dir=self.directory)
        os.close(fd)
        try:
            scores.to_parquet(tmp)
            manifest = {"format": _FORMAT, "key": key, "sha256": _file_sha256(Path(tmp))}
            Path(tmp_manifest).write_text(json.dumps(manifest), encoding="utf-8")
            os.replace(tmp, self._path(key))
            os.replace(tmp_manifest, self._manifest(key))
        finally:
            for t in (tmp, tmp_manifest):
                if os.path.exists(t):
                    os.unlink(t)
