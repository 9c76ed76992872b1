"""Measured privacy: the histogram-ratio test of a mechanism on two neighbouring data sets.

An ``epsilon``-DP mechanism ``M`` satisfies ``P(M(X) in S) <= e^epsilon P(M(X') in S)`` for
every event ``S`` and neighbours ``X, X'``. Given draws of ``M(X)`` and ``M(X')`` we take the
events to be the cells of a histogram and test, in every cell with enough draws on both
sides, the null hypothesis ``|log P(S | X) - log P(S | X')| <= epsilon`` against the
alternative that it is larger. The estimated log-ratio of a cell has delta-method standard
error ``sqrt(1/c - 1/n + 1/c' - 1/n')``; the stated tolerance of a cell is
``z * se`` with ``z`` the one-sided normal quantile at ``false_alarm / n_cells`` (Bonferroni),
so a mechanism that honours ``epsilon`` fails with probability at most about ``false_alarm``.
Its power depends on the draws: the tests show it rejects a mechanism with half the noise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from lpp.testing import FALSE_ALARM
from .mechanisms import check_epsilon

__all__ = ["PrivacyRatioResult", "histogram_privacy_test"]


@dataclass(frozen=True)
class PrivacyRatioResult:
    """``log_ratio``, ``se`` and ``z`` per tested cell; truthy when no cell rejects."""

    epsilon: float
    log_ratio: np.ndarray
    se: np.ndarray
    z: np.ndarray
    threshold: float
    n_cells: int

    @property
    def max_abs_log_ratio(self) -> float:
        return float(np.max(np.abs(self.log_ratio)))

    @property
    def tolerance(self) -> float:
        """``threshold * se`` of the cell whose ``|log ratio|`` is largest."""
        return float(self.threshold * self.se[int(np.argmax(np.abs(self.log_ratio)))])

    def __bool__(self) -> bool:
        return bool(np.all(self.z <= self.threshold))

    def __str__(self) -> str:
        return (f"max |log ratio| = {self.max_abs_log_ratio:.3f} over {self.n_cells} cells "
                f"(epsilon = {self.epsilon:g}, tolerance {self.tolerance:.3f}); max z = "
                f"{float(np.max(self.z)):.2f} vs threshold {self.threshold:.2f}")


def histogram_privacy_test(draws, draws_neighbour, bins, epsilon, *, min_count=200,
                           false_alarm=FALSE_ALARM) -> PrivacyRatioResult:
    """Test that the output laws on two neighbouring data sets stay within ``e^epsilon``.

    Parameters
    ----------
    draws, draws_neighbour : array_like, shape (n,) or (n, d)
        Independent outputs of the mechanism on ``X`` and on a neighbour ``X'``.
    bins : int, sequence or list of sequences
        Histogram cells, as ``numpy.histogramdd`` takes them; outputs outside the outer edges
        are dropped (a coarser event set, still a valid test).
    epsilon : float
        The claimed privacy level, > 0.
    min_count : int, keyword-only
        Cells with fewer draws on either side are not tested (their ratio is too noisy).
    false_alarm : float, keyword-only
        Overall false-alarm rate of the test (Bonferroni over the tested cells).

    Returns
    -------
    PrivacyRatioResult

    Raises
    ------
    ValueError
        ``epsilon <= 0``, draws of different dimension, or no cell with ``min_count`` draws.
    """
    eps = check_epsilon(epsilon)
    a = np.asarray(draws, dtype=np.float64)
    b = np.asarray(draws_neighbour, dtype=np.float64)
    a = a[:, None] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"draws {np.shape(draws)} and draws_neighbour "
                         f"{np.shape(draws_neighbour)} must have the same dimension")
    if a.shape[1] == 1 and np.ndim(bins) == 1:
        bins = [bins]  # one edge array for one-dimensional outputs
    ca, edges = np.histogramdd(a, bins=bins)
    cb, _ = np.histogramdd(b, bins=edges)
    na, nb = a.shape[0], b.shape[0]
    keep = (ca >= min_count) & (cb >= min_count)
    if not keep.any():
        raise ValueError(f"no cell holds {min_count} draws on both sides; use more draws or "
                         "coarser bins")
    ca, cb = ca[keep], cb[keep]
    log_ratio = np.log(ca / na) - np.log(cb / nb)
    se = np.sqrt(1.0 / ca - 1.0 / na + 1.0 / cb - 1.0 / nb)
    z = (np.abs(log_ratio) - eps) / se
    threshold = float(stats.norm.isf(false_alarm / ca.size))
    return PrivacyRatioResult(eps, log_ratio, se, z, threshold, int(ca.size))
