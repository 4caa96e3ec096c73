"""``python -m benchmarks.perf.parts [RESULTS_JSON ...]``: what each storage choice of the score parts
costs, measured on committed score sets (default: every version whose score set is stored as parts or as a
migrated sidecar).

For each score set it prints, in one run: the bytes of the sidecar as it was (snappy parquet, one table),
of the same table as one zstd file, and of the parts as written (:func:`benchmarks.score_parts.part_bytes`)
and with each choice undone: without byte-stream-split on the float columns, at zstd level 3 and 19, and
without the normalisation (every column on every model row, zstd, one part per model). Then the seconds to
encode and to read the whole table back. The ratios are against the parts as written, in the same run.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path

from benchmarks import score_parts as sp
from benchmarks.score_source import score_source

__all__ = ["main"]


def _sizes(frame, encoded) -> dict[str, int]:  # type: ignore[no-untyped-def]
    import pyarrow as pa
    import pyarrow.parquet as pq

    def written(table, **options) -> int:  # type: ignore[no-untyped-def]
        buf = io.BytesIO()
        pq.write_table(table, buf, **options)
        return len(buf.getvalue())

    out = {"parts as written": sum(len(sp.part_bytes(e.table)) for e in encoded)}
    out["parts, no byte-stream-split"] = sum(
        written(e.table, compression="zstd", compression_level=sp._ZSTD_LEVEL, row_group_size=max(e.table.num_rows, 1))
        for e in encoded
    )
    for level in (3, 19):
        out[f"parts, zstd level {level}"] = sum(
            written(
                e.table,
                compression="zstd",
                compression_level=level,
                use_dictionary=[c for c in e.table.column_names if c not in sp._float_columns(e.table)] or False,
                use_byte_stream_split=sp._float_columns(e.table) or False,
                row_group_size=max(e.table.num_rows, 1),
            )
            for e in encoded
        )
    table = pa.Table.from_pandas(frame, preserve_index=False)
    out["one table, snappy (the old sidecar)"] = written(table)
    out["one table, zstd"] = written(table, compression="zstd", compression_level=sp._ZSTD_LEVEL)
    out["not normalised, zstd, per model"] = sum(
        written(pa.Table.from_pandas(g, preserve_index=False), compression="zstd", compression_level=sp._ZSTD_LEVEL)
        for _, g in frame.groupby(["dataset", "protocol", "model"], observed=True, sort=False)
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.parts", description=__doc__)
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1] / "results"
    paths = args.paths or sorted(root.glob("*/v*.json"))
    seen: set[str] = set()
    for path in paths:
        doc = json.loads(path.read_text())
        source = score_source(path, doc)
        key = source.label if source.kind != "parts" else json.dumps(doc["scores"]["parts"][:3])
        if key in seen:
            continue
        seen.add(key)
        t0 = time.perf_counter()
        frame = source.frame()
        t_read = time.perf_counter() - t0
        t0 = time.perf_counter()
        _, encoded = sp.encode_scores(frame)
        t_encode = time.perf_counter() - t0
        sizes = _sizes(frame, encoded)
        base = sizes["parts as written"]
        print(
            f"{path.parent.name}/{path.stem} ({source.kind}, {len(frame):,} rows): "
            f"read back {t_read:.1f} s, encode {t_encode:.1f} s"
        )
        for name, n in sizes.items():
            print(f"  {name:40s} {n / 1e6:8.2f} MB  {n / base:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
