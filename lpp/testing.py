"""Statistical checks shared by the test suite and by users who plug in their own samplers.

``chisquare_gof`` checks draws against an exact pmf; ``geweke_test`` compares the two
simulators of Geweke's (2004) joint-distribution test of a posterior sampler (the simulators
of this package's samplers are in ``lpp.inference.geweke``).

The tests of this project call these with fixed seeds and a stated false-alarm rate
(``FALSE_ALARM``, per call), so a correct sampler fails a given test with probability
about ``FALSE_ALARM`` for the seed drawn — and, the seeds being fixed, never flakes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

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


@dataclass(frozen=True)
class GewekeResult:
    """Per test function: ``z``, two-sided ``pvalues``; ``threshold`` is the Bonferroni level."""

    names: tuple[str, ...]
    z: np.ndarray
    pvalues: np.ndarray
    threshold: float
    batch_autocorr: np.ndarray

    def __bool__(self) -> bool:  # truthy when no test function rejects at FALSE_ALARM overall
        return bool(np.all(self.pvalues >= self.threshold))

    def __str__(self) -> str:
        rows = [f"{n:>24s}  z={z:+7.3f}  p={p:.3g}  batch-acf={r:+.2f}"
                for n, z, p, r in zip(self.names, self.z, self.pvalues, self.batch_autocorr)]
        return "\n".join(rows + [f"{'Bonferroni threshold':>24s}  {self.threshold:.3g}"])


def geweke_test(forward, chain, *, n_batches: int = 50) -> GewekeResult:
    """Geweke's (2004) "getting it right" test of a posterior sampler.

    ``forward[name]`` holds iid draws of a test function from the *marginal-conditional*
    simulator (parameters from the prior, data given parameters); ``chain[name]`` holds its
    successive values along the *successive-conditional* simulator (alternate one transition of
    the sampler given the data with fresh data given the parameters). Both target the same
    joint distribution exactly when the sampler is right.

    For each function: ``z = (mean_forward - mean_chain) / sqrt(se_forward^2 + se_chain^2)``,
    the chain's standard error from ``n_batches`` contiguous batch means; the p-value is
    two-sided from Student's t with Welch-Satterthwaite degrees of freedom. The sampler passes
    when every p-value is at least ``FALSE_ALARM / n_functions`` (Bonferroni: overall false-alarm
    rate at most ``FALSE_ALARM``). ``batch_autocorr`` is the lag-1 autocorrelation of each
    function's batch means; values far above ~0.2 mean the batches are too short for the chain's
    mixing and the standard error is optimistic.
    """
    names = tuple(forward)
    if not names or set(names) != set(chain):
        raise ValueError("forward and chain must name the same, non-empty set of test functions")
    if n_batches < 10:
        raise ValueError("use at least 10 batches")
    z, pvals, acf = [], [], []
    for name in names:
        f = np.asarray(forward[name], dtype=np.float64)
        c = np.asarray(chain[name], dtype=np.float64)
        if f.ndim != 1 or c.ndim != 1 or f.size < 10 or c.size < n_batches * 10:
            raise ValueError(f"{name}: need 1-d draws, >= 10 forward and "
                             f">= {10 * n_batches} chain values")
        if not (np.isfinite(f).all() and np.isfinite(c).all()):
            raise ValueError(f"{name}: draws must be finite")
        size = c.size // n_batches
        batches = c[: size * n_batches].reshape(n_batches, size).mean(axis=1)
        v_f = f.var(ddof=1) / f.size
        v_c = batches.var(ddof=1) / n_batches
        if v_f + v_c == 0.0:
            stat = 0.0 if f.mean() == batches.mean() else np.inf
            df = 1.0
        else:
            stat = (f.mean() - batches.mean()) / np.sqrt(v_f + v_c)
            df = (v_f + v_c) ** 2 / (v_f ** 2 / (f.size - 1) + v_c ** 2 / (n_batches - 1))
        z.append(stat)
        pvals.append(float(2.0 * stats.t.sf(abs(stat), df)))
        centred = batches - batches.mean()
        denom = float(np.dot(centred, centred))
        acf.append(float(np.dot(centred[:-1], centred[1:]) / denom) if denom > 0 else 0.0)
    return GewekeResult(names, np.array(z), np.array(pvals), FALSE_ALARM / len(names),
                        np.array(acf))
