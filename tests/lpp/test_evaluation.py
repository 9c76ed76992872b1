from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from lpp.evaluation import community_scores, topic_scores
from lpp.metrics import mean_over_topics, mimno_coherence, npmi, top_words


def _fit(mu_hat, **samples):
    return SimpleNamespace(mu_hat=mu_hat, samples=samples)


def test_topic_scores_average_over_samples():
    rng = np.random.default_rng(1)
    y = sp.csr_array(rng.poisson(1.0, (30, 12)))
    phi = rng.gamma(1.0, 1.0, (3, 2, 12))
    scores = topic_scores(_fit(np.ones((30, 12)), phi=phi), y, n_top=4)
    assert scores["mae"] == pytest.approx(np.abs(1.0 - y.toarray()).mean())
    expect = np.mean([mean_over_topics(npmi(top_words(p, 4), y)) for p in phi])
    assert scores["npmi"] == pytest.approx(expect)
    expect = np.mean([mean_over_topics(mimno_coherence(top_words(p, 4), y)) for p in phi])
    assert scores["coherence"] == pytest.approx(expect) and scores["n_samples"] == 3


def test_community_scores_leave_out_the_diagonal():
    y = np.array([[9, 1, 2], [3, 9, 4], [5, 6, 9]])
    mu = np.zeros((3, 3))
    heldout = np.zeros((3, 3), dtype=bool)
    heldout[0, 2] = True
    scores = community_scores(_fit(mu), y, heldout)
    assert scores["mae"] == pytest.approx(np.mean([1, 2, 3, 4, 5, 6]))
    assert scores["heldout_mae"] == pytest.approx(2.0)
    assert "heldout_mae" not in community_scores(_fit(mu), y, None)


def test_shape_errors():
    with pytest.raises(ValueError, match="phi"):
        topic_scores(_fit(np.ones((2, 2))), np.ones((2, 2), dtype=int))
    with pytest.raises(ValueError, match="square"):
        community_scores(_fit(np.ones((2, 3))), np.ones((2, 3), dtype=int), None)
