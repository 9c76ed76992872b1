import numpy as np
import pytest

from lpp.simulate import make_topics
from study.recovery_map import (METHODS, _chain_seed, markdown_table, recovery_regions,
                                recovery_threshold, regions_text, run_cell, summarise)


def test_the_threshold_is_halfway_from_uniform_topics_to_the_truth():
    limits = recovery_threshold(make_topics(rng=0).phi)
    assert limits["uniform"] == pytest.approx(5 / 15)
    assert limits["truth"] == pytest.approx(0.9)
    assert limits["threshold"] == pytest.approx((5 / 15 + 0.9) / 2)


def test_chain_seeds_are_keyed_by_seed_cell_and_chain():
    keys = [(s, L, a, c) for s in (1, 2) for L in (10, 30) for a in (0.5, 0.8) for c in (0, 1)]
    seeds = {_chain_seed(*key) for key in keys}
    assert len(seeds) == len(keys) and all(0 <= s < 2 ** 63 for s in seeds)
    assert _chain_seed(1, 30, 0.8, 0) == _chain_seed(1, 30.0, 0.8000000001, 0)


def _runs(scores):
    """Rows of one cell: ``scores[method]`` lists the runs' mean_support."""
    return [{"doc_length": 30.0, "alpha0": 0.5, "method": m, "mean_support": v,
             "draw_support": v, "mean_hellinger": 1 - v, "draw_hellinger": 1 - v}
            for m, values in scores.items() for v in values]


def test_a_method_recovers_a_cell_when_more_than_half_its_runs_reach_the_threshold():
    runs = _runs({"collapsed": [0.7, 0.7, 0.5], "naive": [0.7, 0.5], "nonprivate": [0.6, 0.6]})
    summary = summarise(runs, threshold=0.6)
    by_method = {r["method"]: r for r in summary}
    assert by_method["collapsed"]["recovered"] and by_method["collapsed"]["n_above"] == 2
    assert not by_method["naive"]["recovered"]  # one of two is not more than half
    assert by_method["nonprivate"]["recovered"]  # at the threshold counts
    assert by_method["collapsed"]["mean_support"] == pytest.approx(1.9 / 3)
    assert by_method["collapsed"]["mean_support_sd"] == pytest.approx(np.std([0.7, 0.7, 0.5],
                                                                             ddof=1))
    regions = recovery_regions(summary)
    assert regions["collapsed"] == [(30.0, 0.5)] and regions["naive"] == []
    assert regions["no_private_method"] == regions["nobody"] == []
    text = regions_text(regions)
    assert "ours (collapsed) recovers the topics at α0 = 0.5 at 30 tokens/doc." in text
    assert "naive recovers the topics at none." in text
    table = markdown_table(summary)
    assert "| 30 | 0.5 | 0.633 ± 0.115 (2/3 ✓) | 0.600 ± 0.141 (1/2) |" in table


def test_nobody_recovers_a_cell_that_no_method_recovers():
    summary = summarise(_runs({m: [0.4, 0.4] for m in METHODS}), threshold=0.6)
    assert recovery_regions(summary)["nobody"] == [(30.0, 0.5)]
    summary = summarise(_runs({"collapsed": [0.4], "naive": [0.4], "nonprivate": [0.8]}),
                        threshold=0.6)
    regions = recovery_regions(summary)
    assert regions["no_private_method"] == [(30.0, 0.5)] and regions["nobody"] == []


def test_a_cell_fits_every_method_and_chain_and_repeats_to_the_bit():
    settings = dict(concentration=10.0, n_chains=2, n_iter=6, burn_in=2, thin=2)
    rows = run_cell(1, 10, 0.5, **settings)
    assert [(r["chain"], r["method"]) for r in rows] == [(c, m) for c in (0, 1) for m in METHODS]
    assert rows[0]["chain_seed"] != rows[3]["chain_seed"]
    assert rows == run_cell(1, 10, 0.5, **settings)
