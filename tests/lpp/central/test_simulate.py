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
    assert set(np.unique(iraq.states)) == {0, 1} and set(np.unique(afgh.states)) == {0, 1, 2}
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
