"""``python -m benchmarks.schema [--check]``: write (or check) the results JSON Schema from the models."""

from __future__ import annotations

import argparse
import sys

from benchmarks.schema import SCHEMA_PATH, schema_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.schema", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed schema is stale")
    args = parser.parse_args(argv)
    text = schema_text()
    current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else None
    if args.check:
        if current != text:
            print(f"{SCHEMA_PATH} is stale: run `python -m benchmarks.schema` and commit it", file=sys.stderr)
            return 1
        print(f"{SCHEMA_PATH} is up to date")
        return 0
    if current != text:
        SCHEMA_PATH.write_text(text, encoding="utf-8")
        print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
