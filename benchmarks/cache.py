"""Cache of finished (dataset, protocol, model) engine output under ``benchmarks/.cache/``.

The key is the sha256 of everything that determines the score set: the dataset's content hash, the
validated model config, the protocol and engine options, the seed and the tycheon sources. Only models
that *ran* are cached (a failure or a skip may depend on the machine and is retried). Entries are
written atomically (temp file + rename), so an interrupted run leaves no half entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from tycheon.backtest.scoreset import ScoreSet

__all__ = ["CACHE_DIR", "ScoreCache", "cache_key"]

CACHE_DIR = Path(__file__).resolve().parent / ".cache"


def cache_key(**parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class ScoreCache:
    """Score sets by key; ``enabled=False`` makes every lookup a miss and every store a no-op."""

    def __init__(self, directory: Path = CACHE_DIR, *, enabled: bool = True) -> None:
        self.directory = Path(directory)
        self.enabled = enabled

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.parquet"

    def get(self, key: str) -> ScoreSet | None:
        path = self._path(key)
        if not self.enabled or not path.exists():
            return None
        return ScoreSet.from_parquet(path)

    def put(self, key: str, scores: ScoreSet) -> None:
        if not self.enabled:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".", suffix=".parquet.tmp", dir=self.directory)
        os.close(fd)
        try:
            scores.to_parquet(tmp)
            os.replace(tmp, self._path(key))
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
