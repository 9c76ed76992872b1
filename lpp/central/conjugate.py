"""Conjugate posteriors for the central-model study: beta–Bernoulli and Dirichlet–categorical.

* the exact posterior, and the posterior given Laplace-privatised statistics (the statistics
  simply replace the true ones: Foulds et al., eq. 16);
* the OPS sample: the posterior at temperature ``T`` restricted to the truncated parameter
  space, ``p(theta | X)^(1/T)`` on ``[a0, 1 - a0]`` (Beta) or ``{theta_k >= a0}``
  (Dirichlet). With a ``Beta(a, b)`` prior the tempered density is
  ``Beta((n_+ + a - 1)/T + 1, (n_- + b - 1)/T + 1)`` truncated; likewise per category for
  the Dirichlet;
* samplers for those truncated laws, and the asymptotic relative efficiencies (ARE) of the
  estimators (Theorems 4, 5 and Remark 1).

The truncated Beta is drawn by inversion of the regularised incomplete beta function, from
whichever tail keeps precision; where the interval's mass underflows (posterior mode far
outside it) a tangent-exponential rejection sampler takes over, exact for the log-concave
case ``a, b >= 1``. The truncated Dirichlet is drawn by rejection from the untruncated one
when that accepts often enough; otherwise (and inside Gibbs samplers) by exact pairwise
Gibbs moves, each a truncated-Beta draw of one pair's split, which leave the truncated
Dirichlet invariant.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from lpp.randomness import as_generator
from lpp.validation import broadcast_params, finish, real_array
from . import mechanisms

__all__ = ["tempered_params", "truncated_beta_cdf", "truncated_beta_logpdf",
           "sample_truncated_beta", "sample_truncated_dirichlet", "truncated_dirichlet_step",
           "ops_beta_bernoulli", "laplace_beta_bernoulli", "posterior_beta_bernoulli",
           "bernoulli_fisher_information", "asymptotic_relative_efficiency",
           "relative_efficiency"]

_TINY = 1e-250  # below this the incomplete-beta inversion loses the interval


def tempered_params(counts, temperature, prior=1.0):
    """Shape parameters ``(counts + prior - 1) / T + 1`` of the tempered conjugate posterior.

    Parameters
    ----------
    counts : array_like
        Sufficient statistics (counts, >= 0; privatised counts allowed).
    temperature : float
        ``T > 0``.
    prior : float or array_like
        Beta / Dirichlet prior parameters (>= 1 keeps the tempered density log-concave),
        broadcast against ``counts``.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        Negative counts, ``T <= 0``, a prior <= 0, or shapes that do not broadcast.
    """
    c = real_array(counts, "counts", low=0.0)
    t = float(real_array(temperature, "temperature", low=0.0, low_open=True))
    pr = real_array(prior, "prior", low=0.0, low_open=True)
    try:
        return (c + pr - 1.0) / t + 1.0
    except ValueError:
        raise ValueError(f"counts {c.shape} and prior {pr.shape} do not broadcast") from None


def _check_interval(low, high):
    lo = real_array(low, "low", low=0.0, high=1.0)
    hi = real_array(high, "high", low=0.0, high=1.0)
    if np.any(np.broadcast_to(lo, np.broadcast_shapes(lo.shape, hi.shape))
              >= np.broadcast_to(hi, np.broadcast_shapes(lo.shape, hi.shape))):
        raise ValueError("need low < high")
    return lo, hi


def truncated_beta_logpdf(x, a, b, low, high):
    """Log density of ``Beta(a, b)`` truncated to ``[low, high]`` (``-inf`` outside).

    Parameters
    ----------
    x, a, b, low, high : array_like
        Broadcast together; ``a, b > 0``, ``0 <= low < high <= 1``.

    Returns
    -------
    ndarray
        The log density at each ``x``.
    """
    a = real_array(a, "a", low=0.0, low_open=True)
    b = real_array(b, "b", low=0.0, low_open=True)
    lo, hi = _check_interval(low, high)
    x = real_array(x, "x")
    mass = special.betainc(a, b, hi) - special.betainc(a, b, lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        logf = (special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x) - special.betaln(a, b)
                - np.log(mass))
    return np.where((x >= lo) & (x <= hi), logf, -np.inf)


def truncated_beta_cdf(x, a, b, low, high):
    """CDF of ``Beta(a, b)`` truncated to ``[low, high]`` (scipy's incomplete beta).

    Parameters
    ----------
    x, a, b, low, high : array_like
        As in :func:`truncated_beta_logpdf`.

    Returns
    -------
    ndarray
        ``P(X <= x)`` at each ``x``.
    """
    a = real_array(a, "a", low=0.0, low_open=True)
    b = real_array(b, "b", low=0.0, low_open=True)
    lo, hi = _check_interval(low, high)
    x = np.clip(real_array(x, "x"), lo, hi)
    f_lo = special.betainc(a, b, lo)
    s_lo = special.betainc(b, a, 1.0 - lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = (special.betainc(a, b, x) - f_lo) / (special.betainc(a, b, hi) - f_lo)
        upper = (s_lo - special.betainc(b, a, 1.0 - x)) / (s_lo - special.betainc(b, a, 1.0 - hi))
    # from the tail that holds the interval, where the incomplete beta keeps its precision
    return np.where(f_lo <= 0.5, lower, upper)


def _tangent_rejection(a, b, lo, hi, gen):
    """Draws for rows whose density decreases on ``[lo, hi]`` (a, b >= 1, mode <= lo)."""
    out = np.empty(a.size)
    todo = np.arange(a.size)
    while todo.size:
        aa, bb, l, h = a[todo], b[todo], lo[todo], hi[todo]
        slope = (aa - 1.0) / l - (bb - 1.0) / (1.0 - l)  # d/dx log f at lo, <= 0
        rate = np.maximum(-slope, 1e-300)
        width = h - l
        u = gen.random(todo.size)
        x = l - np.log1p(u * np.expm1(-rate * width)) / rate
        x = np.minimum(x, h)
        log_ratio = (special.xlogy(aa - 1.0, x / l)
                     + special.xlog1py(bb - 1.0, -(x - l) / (1.0 - l)) + rate * (x - l))
        ok = np.log(gen.random(todo.size)) <= np.minimum(log_ratio, 0.0)
        out[todo[ok]] = x[ok]
        todo = todo[~ok]
    return out


def _truncated_beta_flat(a, b, lo, hi, gen):
    """Vectorised core of :func:`sample_truncated_beta` on flat arrays."""
    out = np.empty(a.size)
    f_lo, f_hi = special.betainc(a, b, lo), special.betainc(a, b, hi)
    s_lo, s_hi = special.betainc(b, a, 1.0 - lo), special.betainc(b, a, 1.0 - hi)
    left = f_hi <= 0.5  # the interval sits in the lower tail: invert the CDF
    right = ~left & (s_lo <= 0.5)  # ... in the upper tail: invert the survival function
    middle = ~left & ~right
    u = gen.random(a.size)
    m_left = left & (f_hi - f_lo > _TINY)
    out[m_left] = special.betaincinv(a[m_left], b[m_left],
                                     f_lo[m_left] + u[m_left] * (f_hi[m_left] - f_lo[m_left]))
    m_right = right & (s_lo - s_hi > _TINY)
    out[m_right] = 1.0 - special.betaincinv(
        b[m_right], a[m_right], s_hi[m_right] + u[m_right] * (s_lo[m_right] - s_hi[m_right]))
    out[middle] = special.betaincinv(a[middle], b[middle],
                                     f_lo[middle] + u[middle] * (f_hi[middle] - f_lo[middle]))
    # the interval holds (almost) none of the untruncated mass: mode far outside it
    lost = (left & ~m_left) | (right & ~m_right)
    if np.any(lost):
        if np.any((a[lost] < 1.0) | (b[lost] < 1.0)):
            raise ValueError("the truncation interval holds no representable mass and a or b "
                             "< 1: the truncated Beta cannot be sampled")
        below = lost & left  # mass sits above hi: reflect so the density decreases from lo
        rows = np.flatnonzero(below)
        out[rows] = 1.0 - _tangent_rejection(b[rows], a[rows], 1.0 - hi[rows], 1.0 - lo[rows],
                                             gen)
        rows = np.flatnonzero(lost & right)
        out[rows] = _tangent_rejection(a[rows], b[rows], lo[rows], hi[rows], gen)
    return np.clip(out, lo, hi)


def sample_truncated_beta(a, b, low, high, *, size=None, rng=None):
    """Draws of ``Beta(a, b)`` truncated to ``[low, high]``, vectorised.

    Parameters
    ----------
    a, b : array_like
        Shape parameters, > 0 (>= 1 where the interval holds no representable mass).
    low, high : array_like
        ``0 <= low < high <= 1``.
    size : int or tuple, optional
        Output shape; the parameters broadcast to it.
    rng : Generator, int or None, keyword-only

    Returns
    -------
    ndarray or float
        The draws (a float for scalar parameters and no ``size``).

    Raises
    ------
    ValueError
        Parameters out of range or shapes that do not broadcast.
    """
    a = real_array(a, "a", low=0.0, low_open=True)
    b = real_array(b, "b", low=0.0, low_open=True)
    lo, hi = _check_interval(low, high)
    (a, b, lo, hi), shape = broadcast_params((a, b, lo, hi), ("a", "b", "low", "high"), size)
    return finish(_truncated_beta_flat(a, b, lo, hi, as_generator(rng)), shape)


def _check_dirichlet(alpha, a0):
    alpha = real_array(alpha, "alpha", low=0.0, low_open=True)
    if alpha.ndim == 0 or alpha.shape[-1] < 2:
        raise ValueError("alpha needs a last axis of >= 2 categories")
    k = alpha.shape[-1]
    a0 = float(real_array(a0, "a0"))
    if not 0.0 <= a0 < 1.0 / k:
        raise ValueError(f"a0 must lie in [0, 1/{k}) for {k} categories, got {a0}")
    return alpha, a0


def truncated_dirichlet_step(theta, alpha, a0, *, rng=None, n_sweeps=1):
    """Pairwise Gibbs sweeps that leave ``Dirichlet(alpha)`` on ``{theta_k >= a0}`` invariant.

    Each move picks a pair ``(i, j)`` (the same for every row), keeps ``s = theta_i +
    theta_j`` and draws ``theta_i / s`` from ``Beta(alpha_i, alpha_j)`` truncated to
    ``[a0 / s, 1 - a0 / s]`` — the exact conditional. A sweep makes ``K`` such moves.

    Parameters
    ----------
    theta : array_like, shape (..., K)
        Current points, each on the simplex with every entry >= ``a0``.
    alpha : array_like, shape (..., K)
        Dirichlet parameters (> 0; >= 1 recommended), same shape as ``theta``.
    a0 : float
        Truncation, in ``[0, 1/K)``.
    rng : Generator, int or None, keyword-only
    n_sweeps : int, keyword-only

    Returns
    -------
    ndarray
        New points, same shape.

    Raises
    ------
    ValueError
        Shapes that disagree, or ``theta`` outside the truncated simplex.
    """
    alpha, a0 = _check_dirichlet(alpha, a0)
    theta = real_array(theta, "theta", low=0.0, high=1.0).copy()
    if theta.shape != alpha.shape:
        raise ValueError(f"theta {theta.shape} and alpha {alpha.shape} disagree")
    if np.any(np.abs(theta.sum(axis=-1) - 1.0) > 1e-9) or np.any(theta < a0 * (1 - 1e-12)):
        raise ValueError("theta must lie on the simplex with every entry >= a0")
    gen = as_generator(rng)
    k = theta.shape[-1]
    flat_t = theta.reshape(-1, k)
    flat_a = np.ascontiguousarray(alpha).reshape(-1, k)
    for _ in range(n_sweeps * k):
        i, j = gen.choice(k, size=2, replace=False)
        s = flat_t[:, i] + flat_t[:, j]
        lo = np.minimum(a0 / s, 0.5)
        u = _truncated_beta_flat(flat_a[:, i].copy(), flat_a[:, j].copy(), lo, 1.0 - lo, gen)
        flat_t[:, i] = s * u
        flat_t[:, j] = s - flat_t[:, i]
    return flat_t.reshape(theta.shape)


def sample_truncated_dirichlet(alpha, a0, *, rng=None, max_tries=64, n_sweeps=100):
    """Draws of ``Dirichlet(alpha)`` restricted to ``{theta_k >= a0 for all k}``.

    Rows are drawn by rejection from the untruncated Dirichlet (exact); a row still rejected
    after ``max_tries`` proposals starts at the truncated simplex's centre and runs
    ``n_sweeps`` sweeps of :func:`truncated_dirichlet_step` (an MCMC approximation whose
    error shrinks geometrically with ``n_sweeps``).

    Parameters
    ----------
    alpha : array_like, shape (..., K)
        Dirichlet parameters, > 0.
    a0 : float
        Truncation, in ``[0, 1/K)``.
    rng : Generator, int or None, keyword-only
    max_tries, n_sweeps : int, keyword-only

    Returns
    -------
    ndarray, shape of ``alpha``

    Raises
    ------
    ValueError
        ``alpha <= 0``, fewer than 2 categories, or ``a0`` outside ``[0, 1/K)``.
    """
    alpha, a0 = _check_dirichlet(alpha, a0)
    gen = as_generator(rng)
    k = alpha.shape[-1]
    flat_a = alpha.reshape(-1, k)
    out = np.empty_like(flat_a)
    todo = np.arange(flat_a.shape[0])
    for _ in range(max_tries):
        if not todo.size:
            break
        g = gen.standard_gamma(flat_a[todo])
        prop = g / g.sum(axis=1, keepdims=True)
        ok = np.all(prop >= a0, axis=1) & np.isfinite(prop).all(axis=1)
        out[todo[ok]] = prop[ok]
        todo = todo[~ok]
    if todo.size:
        start = np.full((todo.size, k), 1.0 / k)
        out[todo] = truncated_dirichlet_step(start, flat_a[todo], a0, rng=gen,
                                             n_sweeps=n_sweeps)
    return out.reshape(alpha.shape)


def _check_bernoulli_stats(n_pos, n_neg):
    p = real_array(n_pos, "n_pos", low=0.0)
    n = real_array(n_neg, "n_neg", low=0.0)
    try:
        shape = np.broadcast_shapes(p.shape, n.shape)
    except ValueError:
        raise ValueError(f"n_pos {p.shape} and n_neg {n.shape} disagree") from None
    return np.broadcast_to(p, shape), np.broadcast_to(n, shape)


def posterior_beta_bernoulli(n_pos, n_neg, prior=(1.0, 1.0)):
    """Parameters ``(n_+ + a, n_- + b)`` of the exact (or privatised-statistics) posterior.

    Parameters
    ----------
    n_pos, n_neg : array_like
        Success and failure counts (>= 0; privatised, projected counts are allowed).
    prior : (float, float)
        ``Beta(a, b)`` prior, ``a, b > 0``.

    Returns
    -------
    (ndarray, ndarray)

    Raises
    ------
    ValueError
        Negative counts (statistics outside the model's support), bad prior, disagreeing
        shapes.
    """
    p, n = _check_bernoulli_stats(n_pos, n_neg)
    a, b = (float(v) for v in real_array(prior, "prior", low=0.0, low_open=True))
    return p + a, n + b


def ops_beta_bernoulli(n_pos, n_neg, epsilon, a0, *, prior=(1.0, 1.0), size=None, rng=None):
    """One posterior sample per data set, epsilon-DP under ``"replace"`` (OPS).

    ``T = 2 log((1 - a0)/a0) / epsilon`` (capped below at 1), density
    ``p(theta | X)^(1/T)`` on ``[a0, 1 - a0]``.

    Parameters
    ----------
    n_pos, n_neg : array_like of int
        True counts, >= 0.
    epsilon : float
        > 0.
    a0 : float
        Truncation, in ``(0, 1/2)``.
    prior : (float, float), keyword-only
        ``Beta(a, b)`` prior (>= 1 each).
    size : int or tuple, keyword-only
        Output shape (the counts broadcast to it).
    rng : Generator, int or None, keyword-only

    Returns
    -------
    ndarray or float
        The draws of ``theta`` (a float for scalar counts and no ``size``).

    Raises
    ------
    ValueError
        ``epsilon <= 0``, ``a0`` outside ``(0, 1/2)``, negative counts, disagreeing shapes.
    """
    t = mechanisms.ops_temperature(epsilon, mechanisms.ops_sensitivity_beta(a0))
    p, n = _check_bernoulli_stats(n_pos, n_neg)
    pr = real_array(prior, "prior", low=0.0, low_open=True)
    if pr.shape != (2,):
        raise ValueError("prior must be (a, b)")
    a = tempered_params(p, t, pr[0])
    b = tempered_params(n, t, pr[1])
    return sample_truncated_beta(a, b, a0, 1.0 - a0, size=size, rng=rng)


def laplace_beta_bernoulli(n_pos, n_neg, epsilon, *, relation="replace", project="clip",
                           prior=(1.0, 1.0), rng=None):
    """Posterior parameters from Laplace-privatised ``(n_+, n_-)``.

    The statistics are released once (:func:`lpp.central.mechanisms.privatize_counts`,
    sensitivity 2 under ``"replace"``, 1 under ``"add_remove"``); the posterior, any sample
    from it and its mean are post-processing.

    Parameters
    ----------
    n_pos, n_neg : array_like of int
        True counts, >= 0, shapes that broadcast (one data set per entry): integers (or
        floats holding whole numbers, :func:`lpp.central.mechanisms.integer_statistics`),
        read exactly.
    epsilon : float
        > 0.
    relation, project
        As in :func:`lpp.central.mechanisms.privatize_counts` (``project="clip"``, the
        paper's projection, by default); the noise is the exact discrete Laplace, added in
        int64.
    prior : (float, float), keyword-only
    rng : keyword-only

    Returns
    -------
    (ndarray, ndarray)
        Beta parameters of the privatised posterior.

    Raises
    ------
    TypeError
        ``n_pos`` or ``n_neg`` of bools, durations, dates or objects.
    ValueError
        As :func:`lpp.central.mechanisms.privatize_counts`, naming ``n_pos``, ``n_neg`` or
        both; shapes that disagree.
    """
    p = mechanisms.integer_statistics(n_pos, "n_pos", non_negative=True)
    n = mechanisms.integer_statistics(n_neg, "n_neg", non_negative=True)
    try:
        p, n = np.broadcast_arrays(p, n)
    except ValueError:
        raise ValueError(f"n_pos {p.shape} and n_neg {n.shape} disagree") from None
    released = mechanisms.privatize_counts(np.stack([p, n], axis=-1), epsilon,
                                           relation=relation, project=project, rng=rng,
                                           name="(n_pos, n_neg)")
    return posterior_beta_bernoulli(released[..., 0], released[..., 1], prior)


def bernoulli_fisher_information(p):
    """Fisher information ``1 / (p (1 - p))`` of one Bernoulli(p) record, ``0 < p < 1``."""
    p = real_array(p, "p", low=0.0, low_open=True, high=1.0, high_open=True)
    return 1.0 / (p * (1.0 - p))


def asymptotic_relative_efficiency(estimator, temperature=None) -> float:
    """ARE against the efficient ``I^-1 / N`` (Foulds et al. Thms 4, 5, Remark 1).

    Parameters
    ----------
    estimator : {"posterior_sample", "laplace_sample", "laplace_mean", "posterior_mean", "ops"}
        One exact or Laplace-privatised posterior sample: 2; the (privatised) posterior
        mean: 1; one OPS sample at temperature ``T >= 1``: ``1 + T``.
    temperature : float
        ``T`` for ``"ops"``.

    Returns
    -------
    float
        The ratio of the estimator's asymptotic variance to ``I^-1 / N``.

    Raises
    ------
    ValueError
        Unknown estimator, or a missing or < 1 temperature for ``"ops"``.
    """
    fixed = {"posterior_sample": 2.0, "laplace_sample": 2.0, "posterior_mean": 1.0,
             "laplace_mean": 1.0}
    if estimator in fixed:
        return fixed[estimator]
    if estimator != "ops":
        raise ValueError(f"estimator must be one of {sorted(fixed) + ['ops']}, got "
                         f"{estimator!r}")
    if temperature is None or float(temperature) < 1.0:
        raise ValueError(f"'ops' needs a temperature >= 1, got {temperature}")
    return 1.0 + float(temperature)


def relative_efficiency(estimates, truth, n, fisher_information) -> float:
    """Empirical ``N * mean((estimate - truth)^2) * I``: the finite-N counterpart of the ARE.

    Parameters
    ----------
    estimates : array_like
        Estimates from independent repeats.
    truth : float
    n : int
        Records per data set.
    fisher_information : float
        Per record, at ``truth``.

    Returns
    -------
    float
    """
    e = real_array(estimates, "estimates")
    return float(n * np.mean((e - float(truth)) ** 2) * float(fisher_information))
