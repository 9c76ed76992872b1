"""The war-logs-shaped generator: shapes, sizes, regimes with a change point, reproducibility."""
import numpy as np
import pytest

from lpp.central import simulate


def test_presets_have_the_war_logs_shape():
    iraq = simulate.make_war_logs("iraq", rng=1)
    afgh = simulate.make_war_logs("afghanistan", rng=1)
    assert iraq.n_categories == afgh.n_categories == (8, 20, 2, 2, 2)
    assert iraq.n_steps == 7 * 72 and afgh.n_steps == 6 * 72
    assert 700 < np.median(iraq.n_records) < 1300
    assert 35 < np.median(afgh.n_records) < 90
    # Afghanistan's density grows: the last year has many more entries than the first
    assert afgh.n_records[afgh.month >= 60].mean() > 10 * afgh.n_records[afgh.month < 12].mean()
    # the regime counts are drawn from REGIME_RANGE, never the paper's 2 (Iraq) or 3
    # (Afghanistan) states
    low, high = simulate.REGIME_RANGE
    assert low > 3
    for d in (iraq, afgh):
        n_regimes = d.states.max() + 1
        assert low <= n_regimes <= high
        assert set(np.unique(d.states)) == set(range(n_regimes))
    for d in (iraq, afgh):
        for c in d.counts:
            np.testing.assert_array_equal(c.sum(axis=1), d.n_records)


def test_regimes_change_once_per_boundary_and_in_order():
    d = simulate.make_event_logs(4, 50, 3, rng=2)
    for c in range(4):
        z = d.states[d.chain == c]
        assert np.all(np.diff(z) >= 0) and z[0] == 0 and z[-1] == 2


def test_reproducible_and_errors():
    a = simulate.make_event_logs(2, 10, 2, median_records=20, rng=3)
    b = simulate.make_event_logs(2, 10, 2, median_records=20, rng=3)
    for x, y in zip(a.counts, b.counts):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="kind"):
        simulate.make_war_logs("syria")
    with pytest.raises(ValueError, match="categories"):
        simulate.make_event_logs(2, 10, 2, fields=(("x", 1),))
    with pytest.raises(ValueError, match="change_window"):
        simulate.make_event_logs(2, 10, 2, change_window=(0.0, 0.5))


def test_preset_regime_counts_are_random_and_can_be_set():
    drawn = {simulate.make_war_logs("iraq", scale=0.01, n_months=40, rng=seed).states.max() + 1
             for seed in range(40)}
    # 40 draws from 5 equally likely counts miss one with probability < 5 (4/5)^40 = 7e-4
    assert drawn == set(range(simulate.REGIME_RANGE[0], simulate.REGIME_RANGE[1] + 1))
    fixed = simulate.make_war_logs("afghanistan", scale=0.1, n_regimes=2, rng=0)
    assert set(np.unique(fixed.states)) == {0, 1}
    again = simulate.make_war_logs("afghanistan", scale=0.1, n_regimes=2, rng=0)
    for x, y in zip(fixed.counts, again.counts):
        np.testing.assert_array_equal(x, y)
