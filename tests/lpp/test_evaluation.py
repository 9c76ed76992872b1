import math
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from lpp.evaluation import (aligned_posterior_mean, best_aligned_topics, community_references,
                            community_scores, fit_predictive_log_likelihood,
                            topic_recovery_scores, topic_references, topic_scores, topic_support)
from lpp.metrics import mean_over_topics, mimno_coherence, npmi, top_words


def _fit(mu_hat, model=None, **samples):
    return SimpleNamespace(mu_hat=mu_hat, samples=samples, metadata=None,
                           model={"model": model, "n_components": 2} if model else {})


def _brute_force_loglik(rate_samples, y, mask):
    """log of the mean over samples of the Poisson pmf, entry by entry, averaged over mask."""
    values = [math.log(np.mean([stats.poisson.pmf(y[idx], r[idx]) for r in rate_samples]))
              for idx in zip(*np.nonzero(mask))]
    return float(np.mean(values))


def test_topic_scores_average_over_samples():
    rng = np.random.default_rng(1)
    y = sp.csr_array(rng.poisson(1.0, (30, 12)))
    phi = rng.gamma(1.0, 1.0, (3, 2, 12))
    theta = rng.gamma(1.0, 1.0, (3, 30, 2))
    scores = topic_scores(_fit(np.ones((30, 12)), "topics", theta=theta, phi=phi), y, n_top=4)
    assert scores["mae"] == pytest.approx(np.abs(1.0 - y.toarray()).mean())
    expect = np.mean([mean_over_topics(npmi(top_words(p, 4), y)) for p in phi])
    assert scores["npmi"] == pytest.approx(expect)
    expect = np.mean([mean_over_topics(npmi(top_words(p, 4), y, no_cooccurrence=0.0))
                      for p in phi])
    assert scores["npmi_zero"] == pytest.approx(expect)
    expect = np.mean([mean_over_topics(mimno_coherence(top_words(p, 4), y)) for p in phi])
    assert scores["coherence"] == pytest.approx(expect) and scores["n_samples"] == 3
    rates = np.einsum("sdk,skv->sdv", theta, phi)
    assert scores["loglik"] == pytest.approx(
        _brute_force_loglik(rates, y.toarray(), np.ones((30, 12), dtype=bool)), rel=1e-12)


def test_topic_loglik_is_the_same_by_row_blocks(monkeypatch):
    # the rates are rebuilt a block of rows at a time: the block size must not matter
    from lpp import evaluation

    rng = np.random.default_rng(4)
    y = rng.poisson(2.0, (11, 5))
    fit = _fit(np.ones((11, 5)), "topics", theta=rng.gamma(1.0, 1.0, (2, 11, 2)),
               phi=rng.gamma(1.0, 1.0, (2, 2, 5)))
    mask = rng.random((11, 5)) < 0.5
    whole = fit_predictive_log_likelihood(fit, y, mask)
    monkeypatch.setattr(evaluation, "_ROW_BLOCK", 3)
    assert fit_predictive_log_likelihood(fit, y, mask) == whole
    rates = np.einsum("sdk,skv->sdv", fit.samples["theta"], fit.samples["phi"])
    assert whole == pytest.approx(_brute_force_loglik(rates, y, mask), rel=1e-12)


def test_community_scores_leave_out_the_diagonal_and_the_heldout_entries():
    y = np.array([[9, 1, 2], [3, 9, 4], [5, 6, 9]])
    theta = np.ones((1, 3, 2))
    pi = np.full((1, 2, 2), 0.5)  # every off-diagonal rate is 2
    heldout = np.zeros((3, 3), dtype=bool)
    heldout[0, 2] = True
    fit = _fit(np.zeros((3, 3)), "communities", theta=theta, pi=pi)
    scores = community_scores(fit, y, heldout)
    # reconstruction: observed off-diagonal entries only (not the held-out 2, not the 9s)
    assert scores["mae"] == pytest.approx(np.mean([1, 3, 4, 5, 6]))
    assert scores["offdiag_mae"] == pytest.approx(np.mean([1, 2, 3, 4, 5, 6]))
    assert scores["heldout_mae"] == pytest.approx(2.0)
    assert scores["heldout_loglik"] == pytest.approx(stats.poisson.logpmf(2, 2.0), rel=1e-12)
    no_heldout = community_scores(fit, y, None)
    assert "heldout_mae" not in no_heldout and "heldout_loglik" not in no_heldout
    assert no_heldout["mae"] == no_heldout["offdiag_mae"] == scores["offdiag_mae"]


def test_a_fit_without_latents_has_no_predictive_score():
    with pytest.raises(ValueError, match="latents"):
        fit_predictive_log_likelihood(_fit(np.ones((2, 2))), np.ones((2, 2), dtype=int))


def test_reference_rows_zeros_and_oracle():
    y = np.array([[0, 1, 2], [3, 0, 0], [5, 0, 0]])
    heldout = np.zeros((3, 3), dtype=bool)
    heldout[2, 0] = heldout[1, 2] = True
    rates = np.full((3, 3), 1.5)
    zeros, oracle = community_references(y, heldout, rates)
    assert zeros["method"] == "zeros" and oracle["method"] == "oracle"
    # observed entries: (0, 1), (0, 2), (1, 0), (2, 1)
    assert zeros["mae"] == pytest.approx(np.mean([1, 2, 3, 0]))
    assert zeros["heldout_mae"] == pytest.approx(2.5)
    assert zeros["heldout_loglik"] == -np.inf  # a zero rate cannot produce a 5
    assert oracle["mae"] == pytest.approx(np.mean([0.5, 0.5, 1.5, 1.5]))
    assert oracle["heldout_loglik"] == pytest.approx(
        np.mean(stats.poisson.logpmf([5, 0], 1.5)), rel=1e-12)
    # real data: the true rates are unknown, and the oracle row says so with NaN
    _, unknown = community_references(y, heldout)
    assert all(np.isnan(unknown[k]) for k in ("mae", "offdiag_mae", "heldout_mae",
                                              "heldout_loglik"))
    zeros, oracle = topic_references(sp.csr_array(y))
    assert zeros["mae"] == pytest.approx(11 / 9) and np.isnan(oracle["mae"])
    zeros, oracle = topic_references(np.zeros((2, 2), dtype=int), np.full((2, 2), 0.5))
    assert zeros["loglik"] == 0.0 and oracle["mae"] == 0.5
    assert oracle["loglik"] == pytest.approx(-0.5)


def test_shape_errors():
    with pytest.raises(ValueError, match="phi"):
        topic_scores(_fit(np.ones((2, 2))), np.ones((2, 2), dtype=int))
    with pytest.raises(ValueError, match="square"):
        community_scores(_fit(np.ones((2, 3))), np.ones((2, 3), dtype=int), None)


# ---------------------------------------------------------------- score tables and the figure

def test_an_unmasked_fit_is_scored_on_every_off_diagonal_entry():
    y = np.array([[9, 1, 2], [3, 9, 4], [5, 6, 9]])
    heldout = np.zeros((3, 3), dtype=bool)
    heldout[0, 2] = True
    fit = _fit(np.zeros((3, 3)), "communities", theta=np.ones((1, 3, 2)),
               pi=np.full((1, 2, 2), 0.5))
    fit.metadata = SimpleNamespace(heldout_used=False)
    scores = community_scores(fit, y, heldout)
    # it saw the held-out 2 too: all six off-diagonal entries, the diagonal 9s never
    assert scores["mae"] == scores["offdiag_mae"] == pytest.approx(np.mean([1, 2, 3, 4, 5, 6]))
    assert np.isnan(scores["heldout_mae"]) and np.isnan(scores["heldout_loglik"])
    # the same fit as a masked one: the observed entries only
    fit.metadata = SimpleNamespace(heldout_used=True)
    assert community_scores(fit, y, heldout)["mae"] == pytest.approx(np.mean([1, 3, 4, 5, 6]))
    # without a held-out mask there are no held-out columns, as for a masked fit
    fit.metadata = SimpleNamespace(heldout_used=False)
    assert set(community_scores(fit, y, None)) == {"mae", "offdiag_mae"}


def test_best_aligned_topics_picks_the_most_probable_sample_and_aligns_it():
    true_phi = np.array([[5.0, 1, 1], [1, 5, 1], [1, 1, 5]])
    good = true_phi[[2, 0, 1]]
    phi = np.stack([np.ones((3, 3)), good])
    fit = SimpleNamespace(samples={"phi": phi}, log_joint=np.array([-10.0, -1.0]))
    aligned, distance = best_aligned_topics(fit, true_phi)
    assert np.array_equal(aligned, true_phi) and distance == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="phi"):
        best_aligned_topics(SimpleNamespace(samples={}, log_joint=np.zeros(1)), true_phi)


# three topics over six words, each with two words of its own holding 0.9 of its mass
_TRUE_PHI = np.array([[0.45, 0.45, 0.025, 0.025, 0.025, 0.025],
                      [0.025, 0.025, 0.45, 0.45, 0.025, 0.025],
                      [0.025, 0.025, 0.025, 0.025, 0.45, 0.45]])


def test_topic_support_is_the_truths_share_when_recovered_and_w_over_v_when_uniform():
    # unnormalised and in another order: the score matches and normalises first
    assert topic_support(7.0 * _TRUE_PHI[[2, 0, 1]], _TRUE_PHI, words_per_topic=2) == \
        pytest.approx(0.9)
    assert topic_support(np.ones((3, 6)), _TRUE_PHI, words_per_topic=2) == pytest.approx(2 / 6)


def test_topic_support_on_hand_made_topics():
    fitted = np.array([[0.3, 0.3, 0.1, 0.1, 0.1, 0.1],    # 0.6 on topic 0's words
                       [0.0, 0.0, 1.0, 0.0, 0.0, 0.0],    # 1.0 on topic 1's words
                       [0.1, 0.1, 0.1, 0.1, 0.2, 0.4]])   # 0.6 on topic 2's words
    assert topic_support(fitted, _TRUE_PHI, words_per_topic=2) == pytest.approx(2.2 / 3)
    # one word per topic: ties between a topic's two words go to the lower index
    assert topic_support(fitted, _TRUE_PHI, words_per_topic=1) == pytest.approx(
        (0.3 + 1.0 + 0.2) / 3)


@pytest.mark.parametrize("words", [0, 7])
def test_topic_support_refuses_a_words_per_topic_outside_the_vocabulary(words):
    with pytest.raises(ValueError, match="words_per_topic"):
        topic_support(_TRUE_PHI, _TRUE_PHI, words_per_topic=words)


def test_aligned_posterior_mean_undoes_label_switching_across_draws():
    first = np.array([[4.0, 4, 1, 1, 0, 0], [0, 1, 6, 2, 1, 0], [1, 0, 0, 1, 4, 4]])
    second = np.array([[3.0, 5, 0, 1, 1, 0], [0, 0, 5, 5, 0, 0], [0, 1, 1, 0, 2, 6]])
    normalise = lambda phi: phi / phi.sum(axis=-1, keepdims=True)
    # the second draw's topics come permuted and rescaled; the first draw is the reference
    draws = np.stack([first, 10.0 * second[[1, 2, 0]]])
    fit = SimpleNamespace(samples={"phi": draws}, log_joint=np.array([-1.0, -5.0]))
    expect = (normalise(first) + normalise(second)) / 2
    assert np.allclose(aligned_posterior_mean(fit), expect, rtol=0, atol=1e-15)
    # the reference is the highest-joint draw, whatever the truth: its order is the mean's
    fit.log_joint = np.array([-5.0, -1.0])
    assert np.allclose(aligned_posterior_mean(fit), expect[[1, 2, 0]], rtol=0, atol=1e-15)
    # averaged without alignment the topics would blur together
    unaligned = normalise(draws).mean(axis=0)
    assert topic_support(unaligned, _TRUE_PHI, words_per_topic=2) < \
        topic_support(expect, _TRUE_PHI, words_per_topic=2) - 0.3


def test_topic_recovery_scores_of_the_draw_and_of_the_mean():
    uniform = np.ones((3, 6))
    fit = SimpleNamespace(samples={"phi": np.stack([uniform, _TRUE_PHI[[1, 2, 0]]])},
                          log_joint=np.array([-10.0, -1.0]))
    scores = topic_recovery_scores(fit, _TRUE_PHI, words_per_topic=2)
    assert scores["draw_support"] == pytest.approx(0.9)
    assert scores["draw_hellinger"] == pytest.approx(0.0, abs=1e-12)
    assert scores["mean_support"] == pytest.approx((0.9 + 2 / 6) / 2)
    mean = (_TRUE_PHI + uniform / 6) / 2
    hellinger = np.sqrt(0.5 * ((np.sqrt(mean) - np.sqrt(_TRUE_PHI)) ** 2).sum(axis=1)).mean()
    assert scores["mean_hellinger"] == pytest.approx(hellinger)
    with pytest.raises(ValueError, match="phi"):
        aligned_posterior_mean(SimpleNamespace(samples={}, log_joint=np.zeros(1)))
