"""Fetch a score part that a results version lists by URL into the local cache, checked by its sha256.

A large study's parts may live outside git (release assets, any HTTP server): the version's ``scores``
block gives each such part a ``url`` beside its sha256 and size. :func:`fetch_part` downloads one into
the cache folder (:func:`benchmarks.score_parts.cache_dir`), streaming through a hash:

- the bytes go to a temp file of this process in the cache folder and are linked to ``<sha256>.parquet``
  only when the size and the sha256 match, so a truncated or altered download never enters the cache
  (the error says which it was) and a reader never sees a partial file;
- two processes fetching the same part each download to their own temp file; the first link wins and the
  second finds the part in place (and checks it), so neither clobbers the other;
- offline, or on any HTTP error, it raises :class:`~benchmarks.score_parts.PartsMissingError` with one line
  naming the part, the URL and what to do.

Nothing is fetched unless a results file lists a URL for a part that is not stored beside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["FETCH_TIMEOUT_S", "fetch_part"]

FETCH_TIMEOUT_S = 60.0
_SCHEMES = ("http://", "https://")


def fetch_part(url: str, sha256: str, cache: str | Path, *, size: int | None = None) -> Path:
    """Download the part at ``url`` into ``cache/<sha256>.parquet`` and return that path.

    Raises
    ------
    PartsMissingError
        The URL cannot be reached (offline, HTTP error) or is not http(s).
    ValueError
        The download's size or sha256 is not the recorded one (nothing is kept).
    """
    from benchmarks.score_parts import PartsMissingError

    cache = Path(cache)
    final = cache / f"{sha256}.parquet"
    if final.is_file():
        return final
    if not url.startswith(_SCHEMES):
        raise PartsMissingError(f"score part {sha256[:12]}: its URL {url!r} is not http(s); only those are fetched")
    cache.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    got = 0
    fd, tmp = tempfile.mkstemp(prefix=f".{sha256[:12]}-", suffix=".part", dir=cache)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:  # noqa: S310 - http(s) only
                    for block in iter(lambda: response.read(1 << 20), b""):
                        digest.update(block)
                        got += len(block)
                        out.write(block)
            except http.client.IncompleteRead as err:
                raise ValueError(
                    f"score part {sha256[:12]} from {url}: the download was cut short after {got} bytes (truncated)"
                ) from err
            except (urllib.error.URLError, OSError, TimeoutError, http.client.HTTPException) as err:
                raise PartsMissingError(
                    f"score part {sha256[:12]} could not be fetched from {url} ({err}); with network access run "
                    f"python -m benchmarks.validate again, or put the file at {final}"
                ) from err
        if size is not None and got != size:
            raise ValueError(f"score part {sha256[:12]} from {url}: {got} bytes arrived, {size} expected (truncated)")
        if digest.hexdigest() != sha256:
            raise ValueError(
                f"score part from {url} has sha256 {digest.hexdigest()}, not the recorded {sha256}: not kept"
            )
        try:
            os.link(tmp, final)
        except FileExistsError:
            pass  # another process placed the same part first; its bytes were checked the same way
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return final
