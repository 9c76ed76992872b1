"""align_topics / topic_distances: distances vs scipy, permutation recovery, optimality."""
from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
from scipy.spatial import distance

from lpp.metrics import align_topics, topic_distances


def test_distances_by_hand_and_against_scipy():
    p = np.array([[0.5, 0.5, 0.0]])
    q = np.array([[0.0, 1.0, 1.0]])  # unnormalised: [0, 0.5, 0.5]
    assert topic_distances(p, q, "l1")[0, 0] == pytest.approx(1.0)
    # Hellinger: sqrt(1 - sum sqrt(p q)) = sqrt(1 - 0.5)
    assert topic_distances(p, q, "hellinger")[0, 0] == pytest.approx(np.sqrt(0.5))

    rng = np.random.default_rng(0)
    a = rng.gamma(0.3, size=(4, 50))
    b = rng.gamma(0.3, size=(6, 50))
    pa, pb = a / a.sum(1, keepdims=True), b / b.sum(1, keepdims=True)
    l1 = distance.cdist(pa, pb, "cityblock")
    np.testing.assert_allclose(topic_distances(a, b, "l1"), l1, rtol=1e-12)
    hellinger = distance.cdist(np.sqrt(pa), np.sqrt(pb), "euclidean") / np.sqrt(2)
    np.testing.assert_allclose(topic_distances(a, b), hellinger, rtol=1e-12)
    np.testing.assert_allclose(topic_distances(a, a).diagonal(), 0.0, atol=1e-15)


def _noisy_permuted_topics(rng, n_topics, n_words, sigma):
    """phi_hat[j] is a noisy, rescaled copy of phi_true[sigma[j]]."""
    phi_true = rng.dirichlet(np.full(n_words, 0.1), size=n_topics)
    noise = rng.gamma(20.0, 1 / 20.0, size=(len(sigma), n_words))
    scale = rng.gamma(5.0, 10.0, size=(len(sigma), 1))
    return phi_true, scale * (phi_true[sigma] * noise + 1e-4)


@pytest.mark.parametrize("metric", ["hellinger", "l1"])
def test_recovers_a_known_permutation(metric):
    rng = np.random.default_rng(1)
    sigma = rng.permutation(12)
    phi_true, phi_hat = _noisy_permuted_topics(rng, 12, 300, sigma)
    result = align_topics(phi_hat, phi_true, metric)
    assert result.metric == metric
    assert result.true_topics.tolist() == list(range(12))
    # true topic k was copied into estimated topic sigma^{-1}(k)
    assert result.estimated_topics.tolist() == np.argsort(sigma).tolist()
    unaligned = topic_distances(phi_hat, phi_true, metric).diagonal()
    assert result.mean_distance < 0.5 * unaligned.mean()
    np.testing.assert_allclose(
        result.distances,
        topic_distances(phi_hat, phi_true, metric)[result.estimated_topics, result.true_topics],
    )


def test_more_and_fewer_estimated_topics():
    rng = np.random.default_rng(2)
    sigma = np.array([3, 0, 4, 1, 2])
    phi_true, phi_hat = _noisy_permuted_topics(rng, 5, 200, sigma)
    junk = rng.gamma(1.0, size=(3, 200))
    more = align_topics(np.vstack([junk[:2], phi_hat, junk[2:]]), phi_true)
    assert more.true_topics.tolist() == [0, 1, 2, 3, 4]
    assert more.estimated_topics.tolist() == (np.argsort(sigma) + 2).tolist()

    fewer = align_topics(phi_hat[:3], phi_true)  # estimates of true topics 3, 0, 4
    assert fewer.true_topics.tolist() == [0, 3, 4]
    assert fewer.estimated_topics.tolist() == [1, 0, 2]


def test_total_distance_is_optimal_by_brute_force():
    rng = np.random.default_rng(4)
    for _ in range(5):
        phi_hat = rng.gamma(0.5, size=(6, 20))
        phi_true = rng.gamma(0.5, size=(6, 20))
        cost = topic_distances(phi_hat, phi_true, "l1")
        best = min(sum(cost[perm[k], k] for k in range(6)) for perm in permutations(range(6)))
        total = align_topics(phi_hat, phi_true, "l1").distances.sum()
        assert total == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize(
    "phi_hat, phi_true, metric, error, match",
    [
        (np.ones((2, 5)), np.ones((2, 4)), "l1", ValueError, "vocabulary"),
        (np.ones(5), np.ones((2, 5)), "l1", ValueError, "K x V"),
        (np.ones((0, 5)), np.ones((2, 5)), "l1", ValueError, "empty"),
        (-np.ones((2, 5)), np.ones((2, 5)), "l1", ValueError, "non-negative"),
        (np.zeros((2, 5)), np.ones((2, 5)), "l1", ValueError, "positive total"),
        (np.full((2, 5), np.inf), np.ones((2, 5)), "l1", ValueError, "finite"),
        (np.ones((2, 5)), np.ones((2, 5)), "kl", ValueError, "metric"),
    ],
)
def test_bad_input(phi_hat, phi_true, metric, error, match):
    with pytest.raises(error, match=match):
        align_topics(phi_hat, phi_true, metric)
