"""The held-out experiment's own scores: the predictive median, the link AUC, the rank-one
fit and the chain-effect decomposition, each against a direct computation."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from experiments.network_heldout import (ROOT, _shown, chain_effect, entry_distribution, link_auc,
                                         predictive_median, rank_one_mle)


def test_predictive_median_is_the_poisson_mixtures_median():
    rng = np.random.default_rng(0)
    rates = rng.gamma(0.5, 20.0, size=(7, 40))
    got = predictive_median(rates)
    for j in range(rates.shape[1]):
        ks = np.arange(0, 400)
        cdf = scipy.stats.poisson.cdf(ks[:, None], rates[:, j]).mean(1)
        assert got[j] == ks[np.argmax(cdf >= 0.5)]


def test_link_auc_counts_ordered_pairs_ties_halved():
    rng = np.random.default_rng(1)
    score = rng.integers(0, 5, 60).astype(float)
    linked = rng.random(60) < 0.4
    pos, neg = score[linked], score[~linked]
    pairs = (pos[:, None] > neg).sum() + 0.5 * (pos[:, None] == neg).sum()
    assert link_auc(score, linked) == pytest.approx(pairs / (pos.size * neg.size))
    assert np.isnan(link_auc(score, np.zeros(60, dtype=bool)))


def test_rank_one_mle_fully_observed_is_the_margins_product():
    rng = np.random.default_rng(2)
    y = rng.poisson(np.outer(rng.gamma(2, 1, 12), rng.gamma(2, 1, 12)) * 3)
    rates = rank_one_mle(y, np.ones(y.shape, dtype=bool))
    expected = np.outer(y.sum(1), y.sum(0)) / y.sum()
    off = ~np.eye(12, dtype=bool)
    np.testing.assert_allclose(rates[off], expected[off], rtol=1e-6)
    assert np.all(np.diag(rates) == 0)


def test_rank_one_mle_gives_an_unobserved_row_the_mean_factor():
    rng = np.random.default_rng(3)
    y = rng.poisson(5.0, size=(6, 6))
    observed = np.ones(y.shape, dtype=bool)
    observed[0] = False
    rates = rank_one_mle(y, observed)
    assert np.all(rates[0, 1:] > 0)


def test_entry_distribution_top_share_is_the_zero_predictors_error_share():
    y = np.array([0] * 90 + [1] * 9 + [91])
    out = entry_distribution(y)
    assert out["zeros"] == 0.9
    assert out["top1pct_share"] == pytest.approx(0.91)


def test_chain_effect_finds_a_chain_that_is_worse_in_every_copy():
    rng = np.random.default_rng(4)
    rows = []
    for rep in range(5):
        for chain in range(3):
            value = rng.gamma(50, 0.5) * (5.0 if chain == 2 else 1.0)
            rows.append({"fit": f"collapsed_C5_eps3.0_rep{rep}", "method": "collapsed",
                         "C": 5, "epsilon_over_n": 3.0, "chain": chain, "heldout_mae": value})
    effect = chain_effect(pd.DataFrame(rows), n_permutations=500).iloc[0]
    assert effect.worst_chain == 2 and effect.worst_in_copies == 5
    assert effect.chain_share > 0.9 and effect.p_value < 0.01


def test_the_record_names_paths_inside_the_repository_relative_to_it():
    """A committed record must not carry one machine's folders."""
    assert _shown(ROOT) == "."
    assert _shown(ROOT / "results" / "paper" / "eval" / "x.csv") == "results/paper/eval/x.csv"
    assert _shown(Path("/elsewhere/x.csv")) == "/elsewhere/x.csv"
