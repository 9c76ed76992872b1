"""The beta–Bernoulli study of Foulds et al. (Section 3): Figures 1 and 2, Table 1, the AREs.

Every data set is ``N`` Bernoulli(p) records summarised by ``(n_+, n_-)``; the prior is
uniform. Neighbouring relation: ``"replace"`` (the paper's), so the Laplace route's
sensitivity is 2 and the OPS sensitivity ``log((1 - a0)/a0)``; the Laplace statistics are
clipped at zero, as the paper describes (``project="clip"``).
"""
from __future__ import annotations

import numpy as np
from scipy import stats
from tqdm import tqdm

from lpp.randomness import as_generator
from lpp.central import conjugate, mechanisms

__all__ = ["figure1_densities", "l1_error_curve", "laplace_overtakes_ops", "table1",
           "are_by_simulation"]


def figure1_densities(n, p, epsilon, a0, *, n_laplace=30, grid=None, rng=None):
    """Densities of Figure 1 on a grid: true posterior, OPS law, Laplace-privatised posteriors.

    Parameters
    ----------
    n : int
        Records.
    p : float
        True success probability.
    epsilon : float
        Privacy level of each release.
    a0 : float
        OPS truncation, in ``(0, 1/2)``.
    n_laplace : int, keyword-only
        Independent Laplace releases drawn.
    grid : array_like, optional
        Points in (0, 1); 999 points by default.
    rng : Generator, int or None, keyword-only

    Returns
    -------
    dict
        ``grid``, ``n_pos``, ``temperature``, ``posterior``, ``ops`` (arrays on the grid)
        and ``laplace`` (``n_laplace`` × grid).
    """
    gen = as_generator(rng)
    x = np.linspace(0.001, 0.999, 999) if grid is None else np.asarray(grid, dtype=float)
    n_pos = int(gen.binomial(n, p))
    t = mechanisms.ops_temperature(epsilon, mechanisms.ops_sensitivity_beta(a0))
    a, b = conjugate.posterior_beta_bernoulli(n_pos, n - n_pos)
    ops = np.exp(conjugate.truncated_beta_logpdf(
        x, conjugate.tempered_params(n_pos, t), conjugate.tempered_params(n - n_pos, t),
        a0, 1 - a0))
    la, lb = conjugate.laplace_beta_bernoulli(np.full(n_laplace, n_pos),
                                              np.full(n_laplace, n - n_pos), epsilon, rng=gen)
    laplace = stats.beta.pdf(x[None, :], la[:, None], lb[:, None])
    return {"grid": x, "n_pos": n_pos, "temperature": t,
            "posterior": stats.beta.pdf(x, a, b), "ops": ops, "laplace": laplace}


def l1_error_curve(ns, p, epsilon, a0, repeats, *, rng=None, progress=False):
    """Mean ``|theta_sample - p|`` of one sample per method, at each ``N`` (Figure 2).

    Methods: ``"posterior"`` (non-private sample), ``"laplace"`` (one sample from the
    posterior of Laplace-privatised statistics), ``"ops"`` (one OPS sample). Each repeat
    draws fresh data.

    Parameters
    ----------
    ns : sequence of int
        Data-set sizes, >= 1.
    p, epsilon, a0 : float
    repeats : int
    rng : Generator, int or None, keyword-only
    progress : bool, keyword-only
        Show a tqdm bar over ``ns``.

    Returns
    -------
    dict
        ``n`` and, per method, ``mean`` and ``se`` arrays of length ``len(ns)``.

    Raises
    ------
    ValueError
        ``N < 1`` or ``repeats < 2``.
    """
    ns = np.asarray(ns, dtype=np.int64)
    if ns.ndim != 1 or ns.size == 0 or np.any(ns < 1):
        raise ValueError("ns must be a non-empty list of sizes >= 1")
    if int(repeats) < 2:
        raise ValueError("repeats must be >= 2")
    gen = as_generator(rng)
    out = {"n": ns.tolist()}
    errors = {k: np.empty((ns.size, int(repeats))) for k in ("posterior", "laplace", "ops")}
    for i, n in enumerate(tqdm(ns, disable=not progress, desc="N")):
        n_pos = gen.binomial(n, p, size=int(repeats))
        n_neg = n - n_pos
        a, b = conjugate.posterior_beta_bernoulli(n_pos, n_neg)
        errors["posterior"][i] = np.abs(gen.beta(a, b) - p)
        la, lb = conjugate.laplace_beta_bernoulli(n_pos, n_neg, epsilon, rng=gen)
        errors["laplace"][i] = np.abs(gen.beta(la, lb) - p)
        errors["ops"][i] = np.abs(conjugate.ops_beta_bernoulli(n_pos, n_neg, epsilon, a0,
                                                               rng=gen) - p)
    for k, e in errors.items():
        out[k] = {"mean": e.mean(axis=1).tolist(),
                  "se": (e.std(axis=1, ddof=1) / np.sqrt(e.shape[1])).tolist()}
    return out


def laplace_overtakes_ops(curve, *, max_crossing=100):
    """Figure 2's claim on an :func:`l1_error_curve` result: where Laplace overtakes OPS.

    Returns the smallest ``N`` from which the Laplace error stays below the OPS error at
    every larger ``N`` of the curve, and checks it against the paper's reading: OPS is at
    least as good at the smallest ``N``, the crossing is at small ``N`` (``<= max_crossing``)
    and Laplace is below OPS at the largest ``N`` by more than two standard errors.

    Parameters
    ----------
    curve : dict
        From :func:`l1_error_curve`.
    max_crossing : int, keyword-only

    Returns
    -------
    dict
        ``crossing_n``, ``ops_better_at_smallest_n``, ``gap_at_largest_n_in_se`` and ``holds``
        (all three conditions).
    """
    n = np.asarray(curve["n"])
    lap = np.asarray(curve["laplace"]["mean"])
    ops = np.asarray(curve["ops"]["mean"])
    se = np.hypot(curve["laplace"]["se"], curve["ops"]["se"])
    below = lap < ops
    # smallest index from which Laplace is below OPS at every later N
    tail = np.flip(np.logical_and.accumulate(np.flip(below)))
    crossing = int(n[np.argmax(tail)]) if tail.any() else None
    gap = float((ops[-1] - lap[-1]) / se[-1])
    ops_first = bool(ops[0] <= lap[0])
    holds = bool(ops_first and crossing is not None and crossing <= max_crossing and gap > 2)
    return {"crossing_n": crossing, "ops_better_at_smallest_n": ops_first,
            "gap_at_largest_n_in_se": gap, "holds": holds}


def table1(epsilon, a0):
    """Table 1 of Foulds et al. for the beta–Bernoulli model, computed.

    Parameters
    ----------
    epsilon : float
    a0 : float
        OPS truncation.

    Returns
    -------
    list of dict
        One row per released quantity: mechanism, sensitivity (relation ``"replace"``),
        what the statistics become, what is released, temperature, ARE, the Gibbs cost.
    """
    delta_s = mechanisms.count_sensitivity("replace")
    delta_ops = mechanisms.ops_sensitivity_beta(a0)
    t = mechanisms.ops_temperature(epsilon, delta_ops)
    return [
        {"mechanism": "Laplace", "release": "statistics (posterior mean)",
         "sensitivity": float(delta_s), "statistics": "noised", "temperature": 1.0,
         "are": conjugate.asymptotic_relative_efficiency("laplace_mean"),
         "gibbs_cost": "once"},
        {"mechanism": "Laplace", "release": "statistics (one sample)",
         "sensitivity": float(delta_s), "statistics": "noised", "temperature": 1.0,
         "are": conjugate.asymptotic_relative_efficiency("laplace_sample"),
         "gibbs_cost": "once"},
        {"mechanism": "Exponential (OPS)", "release": "one sample",
         "sensitivity": delta_ops, "statistics": "rescaled by 1/T", "temperature": t,
         "are": conjugate.asymptotic_relative_efficiency("ops", t),
         "gibbs_cost": f"per update ({mechanisms.gibbs_scan_epsilon(delta_ops):.3g} per "
                       "full scan unless converged)"},
    ]


def are_by_simulation(n, p, epsilon, a0, repeats, *, rng=None):
    """Empirical relative efficiencies ``N * MSE * I`` at one large ``N``.

    Parameters
    ----------
    n : int
        Records per data set (large, so the asymptotics apply).
    p, epsilon, a0 : float
    repeats : int
    rng : Generator, int or None, keyword-only

    Returns
    -------
    dict
        Per estimator (``posterior_sample``, ``posterior_mean``, ``laplace_sample``,
        ``laplace_mean``, ``ops``): ``{"measured", "theory", "se"}`` (``se`` from the
        delta method on the mean of squared errors).
    """
    gen = as_generator(rng)
    n_pos = gen.binomial(n, p, size=int(repeats))
    n_neg = n - n_pos
    fisher = float(conjugate.bernoulli_fisher_information(p))
    a, b = conjugate.posterior_beta_bernoulli(n_pos, n_neg)
    la, lb = conjugate.laplace_beta_bernoulli(n_pos, n_neg, epsilon, rng=gen)
    t = mechanisms.ops_temperature(epsilon, mechanisms.ops_sensitivity_beta(a0))
    estimates = {"posterior_sample": gen.beta(a, b), "posterior_mean": a / (a + b),
                 "laplace_sample": gen.beta(la, lb), "laplace_mean": la / (la + lb),
                 "ops": conjugate.ops_beta_bernoulli(n_pos, n_neg, epsilon, a0, rng=gen)}
    out = {}
    for name, e in estimates.items():
        sq = n * (e - p) ** 2 * fisher
        out[name] = {"measured": float(sq.mean()),
                     "theory": conjugate.asymptotic_relative_efficiency(
                         name, t if name == "ops" else None),
                     "se": float(sq.std(ddof=1) / np.sqrt(sq.size))}
    return out
