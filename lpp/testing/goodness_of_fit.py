"""Draws of a sampler against an exact pmf: Pearson's chi-square test with pooled tails, at the
false-alarm rate the whole test suite uses."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["FALSE_ALARM", "GofResult", "chisquare_gof"]

#: per-call false-alarm rate used throughout the test suite
FALSE_ALARM = 1e-3


@dataclass(frozen=True)
class GofResult:
    statistic: float
    dof: int
    pvalue: float
    n_bins: int

    def __bool__(self) -> bool:  # truthy when the sampler passes at FALSE_ALARM
        return self.pvalue >= FALSE_ALARM


def _pool(expected: np.ndarray, min_expected: float) -> np.ndarray:
    """Bin labels that pool adjacent cells from both tails until each has ``min_expected``."""
    n = expected.size
    labels = np.empty(n, dtype=np.int64)
    label, acc = 0, 0.0
    for i in range(n):
        labels[i] = label
        acc += expected[i]
        if acc >= min_expected:
            label += 1
            acc = 0.0
    if acc < min_expected and label > 0:  # a thin right tail joins its neighbour
        labels[labels == label] = label - 1
    return labels


def chisquare_gof(draws, support, pmf, *, min_expected: float = 5.0) -> GofResult:
    """Pearson chi-square test of integer ``draws`` against an exact pmf.

    ``support`` is a run of consecutive integers and ``pmf`` their probabilities; together
    they must hold all but 1e-8 of the mass (the rest is added to the right-most cell).
    Adjacent cells are pooled from the left until each expects ``min_expected`` draws, and
    draws outside ``support`` count in the outer cells. Returns statistic, degrees of
    freedom, p-value.
    """
    draws = np.asarray(draws)
    support = np.asarray(support, dtype=np.int64)
    pmf = np.asarray(pmf, dtype=np.float64)
    if support.ndim != 1 or support.shape != pmf.shape or support.size == 0:
        raise ValueError("support and pmf must be 1-d arrays of the same, non-zero length")
    if np.any(np.diff(support) != 1):
        raise ValueError("support must be consecutive integers")
    if np.any(pmf < 0) or not np.isfinite(pmf).all():
        raise ValueError("pmf must be finite and non-negative")
    missing = 1.0 - pmf.sum()
    if abs(missing) > 1e-8:
        raise ValueError(f"support holds {pmf.sum():.12g} of the mass; widen it")
    n = draws.size
    expected = n * pmf
    expected[-1] += n * max(missing, 0.0)
    idx = np.clip(draws.astype(np.int64) - support[0], 0, support.size - 1)
    observed = np.bincount(idx, minlength=support.size).astype(np.float64)
    labels = _pool(expected, min_expected)
    n_bins = int(labels.max()) + 1
    exp_b = np.bincount(labels, weights=expected, minlength=n_bins)
    obs_b = np.bincount(labels, weights=observed, minlength=n_bins)
    if n_bins < 2:
        return GofResult(0.0, 0, 1.0, n_bins)
    stat = float(np.sum((obs_b - exp_b) ** 2 / exp_b))
    dof = n_bins - 1
    return GofResult(stat, dof, float(stats.chi2.sf(stat, dof)), n_bins)
