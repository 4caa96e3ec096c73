"""Every committed results version renders through the typed document: a page per leaderboard of the
latest version, and the history lists every version."""

from __future__ import annotations

from benchmarks.render.pages import SiteModel
from benchmarks.render.site import render_site
from benchmarks.results_io import RESULTS_DIR, read_results


def test_the_committed_results_render_with_every_version_in_the_history(tmp_path):
    out = tmp_path / "site" / "docs"
    written = render_site(results_dir=RESULTS_DIR, out=out)
    assert out / "index.md" in written
    for folder in sorted(p for p in RESULTS_DIR.iterdir() if p.is_dir()):
        versions = sorted(p.stem for p in folder.glob("v*.json"))
        history = (out / "benchmarks" / folder.name / "history.md").read_text(encoding="utf-8")
        assert all(f"<code>{v}</code>" in history for v in versions)
        latest = read_results(folder / f"{versions[-1]}.json")
        for lb in latest.leaderboards:
            assert (out / SiteModel.leaderboard_page(folder.name, lb.key)).is_file()
