"""Dataset caveats are typed where they are decided (flags, the subsample step, a loader's typed note),
never by reading the message."""

from __future__ import annotations

from benchmarks.pipeline import MANIFEST, load_dataset
from tycheon.data.caveats import NOT_REDISTRIBUTABLE, SYNTHETIC, Caveat, dataset_caveats
from tycheon.data.datasets import load


def test_a_synthetic_panel_gets_the_synthetic_caveat_first():
    panel = load("synthetic_marketplace", n_entities=5, n_periods=24, seed=1)
    assert dataset_caveats(panel)[0] == Caveat("synthetic", SYNTHETIC)


def test_loader_notes_are_other_unless_the_loader_typed_them_and_flags_give_their_kind():
    panel = load("synthetic_marketplace", n_entities=5, n_periods=24, seed=1)
    panel.meta.update(
        synthetic=False,
        redistributable=False,
        warnings=["synthetic-looking text that is not a flag", Caveat("survivorship", "static universe")],
    )
    assert dataset_caveats(panel) == [
        Caveat("other", "synthetic-looking text that is not a flag"),
        Caveat("survivorship", "static universe"),
        Caveat("not_redistributable", NOT_REDISTRIBUTABLE),
    ]


def test_the_harness_adds_a_subsample_caveat_only_when_it_subsamples():
    loaded = load_dataset("synthetic_marketplace", {"n_entities": 12, "n_periods": 24, "seed": 1}, 5, manifest=MANIFEST)
    assert [c.kind for c in loaded.caveats] == ["synthetic", "subsample"]
    assert loaded.panel.n_series == 5 and loaded.info["n_series_total"] == 12
    assert loaded.info["warnings"] == [c.message for c in loaded.caveats]
    whole = load_dataset("synthetic_marketplace", {"n_entities": 12, "n_periods": 24, "seed": 1}, 12, manifest=MANIFEST)
    assert [c.kind for c in whole.caveats] == ["synthetic"]
