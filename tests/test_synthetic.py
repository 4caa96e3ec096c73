"""Synthetic marketplace: determinism, the demand-class mix at the default dial, a smooth total, the dial."""

from __future__ import annotations

import numpy as np
import pytest

from tycheon.data.demand import CLASSES, adi_cv2, classify
from tycheon.data.synthetic import SyntheticConfigError, generate_marketplace


@pytest.fixture(scope="module")
def default_panel():
    return generate_marketplace(seed=0)  # the default size: 2,000 entities x 67 months


def _class_shares(panel) -> dict[str, float]:
    view = panel.dense()
    classes = classify(*adi_cv2(view.values, view.observed))
    return {c: float(np.mean(classes == c)) for c in CLASSES}


def _total_and_median_entity_cv2(panel) -> tuple[float, float]:
    view = panel.dense()
    _, cv2 = adi_cv2(view.values, view.observed)
    total = np.nansum(view.values, axis=0)[None, :]  # [1, time]
    return float(adi_cv2(total)[1][0]), float(np.nanmedian(cv2))


def test_same_seed_gives_bit_identical_panels_and_another_seed_differs():
    a = generate_marketplace(n_entities=300, n_periods=30, seed=7)
    b = generate_marketplace(n_entities=300, n_periods=30, seed=7)
    c = generate_marketplace(n_entities=300, n_periods=30, seed=8)
    assert a.data["value"].to_numpy().tobytes() == b.data["value"].to_numpy().tobytes()
    assert a.data.equals(b.data) and a.attributes.equals(b.attributes)
    assert not (len(a.data) == len(c.data) and np.array_equal(a.data["value"], c.data["value"]))


def test_a_generator_seed_is_accepted_and_consumed_deterministically():
    a = generate_marketplace(n_entities=50, n_periods=12, seed=np.random.default_rng(3))
    b = generate_marketplace(n_entities=50, n_periods=12, seed=np.random.default_rng(3))
    assert a.data.equals(b.data)


def test_values_are_non_negative_with_entry_exit_and_heavy_tailed_sizes(default_panel):
    view = default_panel.dense()
    assert (default_panel.data["value"] >= 0).all()
    assert (view.first > 0).mean() > 0.2  # late entrants
    assert (view.last < view.shape[1] - 1).mean() > 0.05  # early exits
    assert default_panel.lengths().min() >= 3
    size = default_panel.attributes["size"].to_numpy()
    top_share = np.sort(size)[-len(size) // 100 :].sum() / size.sum()
    assert top_share > 0.15  # the top 1% of accounts carry a large share
    np.testing.assert_allclose(default_panel.attributes["weight"].sum(), 1.0)
    assert set(default_panel.levels) == {"segment", "region"}
    assert set(default_panel.attributes["segment"]) == {"enterprise", "mid_market", "smb"}


def test_at_the_default_dial_every_demand_class_holds_at_least_five_percent(default_panel):
    shares = _class_shares(default_panel)
    for cls in ("smooth", "erratic", "intermittent", "lumpy"):
        assert shares[cls] >= 0.05, (cls, shares)


def test_at_the_default_dial_the_total_is_smoother_than_the_median_entity(default_panel):
    total_cv2, median_entity_cv2 = _total_and_median_entity_cv2(default_panel)
    assert total_cv2 < median_entity_cv2


def test_at_zero_spikiness_entities_are_smooth():
    shares = _class_shares(generate_marketplace(n_entities=500, spikiness=0.0, seed=1))
    assert shares["smooth"] > 0.9


def test_far_above_the_default_the_total_itself_becomes_spiky():
    total_cv2, _ = _total_and_median_entity_cv2(generate_marketplace(n_entities=1000, spikiness=6.0, seed=0))
    assert total_cv2 >= 0.49  # the erratic cut-off of Syntetos et al. (2005)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_entities": 0}, "n_entities must be a positive integer"),
        ({"n_periods": 2}, "n_periods must be an integer >= 3"),
        ({"spikiness": -0.5}, "spikiness must be a finite number >= 0"),
        ({"start": "2021-01-15"}, "not on the 'MS' grid"),
    ],
)
def test_when_arguments_are_out_of_range_then_the_error_says_what_is_accepted(kwargs, message):
    with pytest.raises(SyntheticConfigError, match=message):
        generate_marketplace(**kwargs)


def test_content_hash_survives_numpy_switching_its_simd_kernels():
    # exp/sin differ in the last ulp between numpy's AVX-512 and AVX2 kernels; rounding to cents must
    # hide that, so the manifest hash holds across CPUs. Checked by disabling AVX-512 in a subprocess.
    import os
    import subprocess
    import sys

    features = pytest.importorskip("numpy._core._multiarray_umath").__cpu_features__
    if not features.get("X86_V4"):
        pytest.skip("needs a CPU on which numpy dispatches AVX-512 (X86_V4) kernels")
    code = (
        "import numpy as np, hashlib\n"
        "from tycheon.data.synthetic import generate_marketplace\n"
        "from tycheon.data.manifest import content_hash\n"
        "x = np.exp(np.linspace(-3.0, 3.0, 100001))\n"
        "print(content_hash(generate_marketplace(n_entities=500)), hashlib.sha256(x.tobytes()).hexdigest())\n"
    )
    env_off = {**os.environ, "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=120
        ).stdout.split()
        for env in (dict(os.environ), env_off)
    ]
    if runs[0][1] == runs[1][1]:
        pytest.skip("numpy's exp gives identical bits with and without AVX-512 here")
    assert runs[0][0] == runs[1][0]
