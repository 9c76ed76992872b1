"""Matching inferred topics to true topics (label switching) with the Hungarian algorithm."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from lpp.validation import check_finite

__all__ = ["TopicAlignment", "topic_distances", "align_topics"]

METRICS = ("l1", "hellinger")


@dataclass(frozen=True)
class TopicAlignment:
    """A one-to-one matching of ``min(K_hat, K)`` estimated topics to true topics.

    ``true_topics[i]`` (ascending) is matched with ``estimated_topics[i]`` at distance
    ``distances[i]``. When ``K_hat >= K`` every true topic is matched and
    ``phi_hat[estimated_topics]`` lists the estimated topics in the true topics' order;
    when ``K_hat < K`` only ``K_hat`` true topics appear in ``true_topics``.
    """

    true_topics: np.ndarray
    estimated_topics: np.ndarray
    distances: np.ndarray
    metric: str

    @property
    def mean_distance(self) -> float:
        return float(self.distances.mean())


def _normalised_rows(phi, name: str) -> np.ndarray:
    phi = np.asarray(phi)
    if phi.ndim != 2:
        raise ValueError(f"{name} must be a K x V matrix, got {phi.ndim}-d")
    if phi.size == 0:
        raise ValueError(f"{name} is empty (shape {phi.shape})")
    check_finite(phi, name)
    phi = phi.astype(np.float64)
    if np.any(phi < 0):
        raise ValueError(f"{name} must be non-negative (topic-word weights)")
    totals = phi.sum(axis=1, keepdims=True)
    if np.any(totals <= 0):
        raise ValueError(f"every row (topic) of {name} needs positive total weight")
    return phi / totals


def topic_distances(phi_hat, phi_true, metric: str = "hellinger") -> np.ndarray:
    """K_hat x K matrix of distances between the rows of ``phi_hat`` and ``phi_true``.

    Rows are first normalised to topic-word distributions ``p`` (so unnormalised Gamma
    factors are fine). ``metric``:

    - ``"hellinger"`` (default): ``sqrt(sum_v (sqrt p_v - sqrt q_v)^2 / 2)``, in [0, 1];
    - ``"l1"``: ``sum_v |p_v - q_v|``, in [0, 2] (twice the total-variation distance).

    Computed by explicit differences (no ``1 - sum sqrt(p q)`` shortcut), so near-identical
    topics get accurate small distances.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}; got {metric!r}")
    p = _normalised_rows(phi_hat, "phi_hat")
    q = _normalised_rows(phi_true, "phi_true")
    if p.shape[1] != q.shape[1]:
        raise ValueError(
            f"phi_hat and phi_true must share the vocabulary: V = {p.shape[1]} vs {q.shape[1]}"
        )
    if metric == "hellinger":
        p, q = np.sqrt(p), np.sqrt(q)
    out = np.empty((p.shape[0], q.shape[0]), dtype=np.float64)
    for k, row in enumerate(p):  # one K x V slab at a time bounds the memory
        diff = q - row
        if metric == "l1":
            out[k] = np.abs(diff).sum(axis=1)
        else:
            out[k] = np.sqrt(0.5 * (diff * diff).sum(axis=1))
    return out


def align_topics(phi_hat, phi_true, metric: str = "hellinger") -> TopicAlignment:
    """Match estimated to true topics, minimising the total distance (Hungarian algorithm).

    ``phi_hat`` is K_hat x V and ``phi_true`` K x V, with topics as rows (non-negative, not
    necessarily normalised); ``K_hat != K`` is allowed, and ``min(K_hat, K)`` pairs are
    matched. ``metric`` is ``"hellinger"`` or ``"l1"`` between the normalised rows (see
    :func:`topic_distances`). Ties between equally good matchings are resolved by
    ``scipy.optimize.linear_sum_assignment``.
    """
    cost = topic_distances(phi_hat, phi_true, metric)
    true_idx, hat_idx = linear_sum_assignment(cost.T)
    return TopicAlignment(
        true_topics=true_idx.astype(np.int64),
        estimated_topics=hat_idx.astype(np.int64),
        distances=cost[hat_idx, true_idx],
        metric=metric,
    )
