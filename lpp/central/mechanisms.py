"""Central-model mechanisms: Laplace on aggregate statistics, OPS temperatures, Gibbs costs.

A trusted curator holds the records. Two ways to release something ``epsilon``-differentially
private about a conjugate exponential-family model:

* **Laplace route** — add Laplace noise of scale ``Delta_S / epsilon`` to each coordinate of
  the aggregate sufficient statistics ``S(X) = sum_i S(x_i)`` (``Delta_S`` their L1
  sensitivity), then project back onto valid statistics (non-negative counts, optionally with
  a public total). Everything computed from the released statistics afterwards (posteriors,
  Gibbs chains, any prior) is post-processing and costs nothing more.
* **OPS route** (one posterior sample; the exponential mechanism with utility
  ``log p(theta, X)``) — draw once from the posterior at temperature
  ``T = 2 Delta_logp / epsilon``, where ``Delta_logp`` bounds how much one record can change
  ``log p(x | theta)``; it is finite only for a truncated parameter space
  (:func:`ops_sensitivity_beta`, :func:`ops_sensitivity_dirichlet`).

Neighbouring relation. Each function says which one it assumes:

* ``"replace"`` — the data sets have the same size and differ in one record (the paper's
  setting, and the one under which ``N`` may be treated as public);
* ``"add_remove"`` — one data set has one record more.

For one categorical field (one-hot statistics) replacing a record moves one count down and
another up: L1 sensitivity 2; adding or removing one moves one count: sensitivity 1.

The noise is exact. The statistics are counts, so the Laplace route adds the *discrete*
Laplace — the two-sided geometric ``P(tau) = (1 - alpha)/(1 + alpha) alpha^|tau|`` with

    alpha = exp(-epsilon / Delta)  =  exp(-1 / b),   b = Delta / epsilon the Laplace scale,

(:func:`discrete_laplace_alpha`, :func:`laplace_scale`) — drawn with integer arithmetic only
by the sampler of the local mechanism, :func:`lpp.mechanism.sample_two_sided_geometric`
(``exact=True``; Canonne, Kamath & Steinke 2020), from the operating system's CSPRNG unless a
seed is given. It is ``epsilon``-DP for integer statistics of L1 sensitivity ``Delta``
(Ghosh, Roughgarden & Sundararajan 2009), with no floating-point step between the statistics
and the noise. Floating-point Laplace noise is not offered: it is open to Mironov's
least-significant-bit attack (CCS 2012), and at large counts it rounds away (a count of
2**56 came back unchanged for every seed). A real-valued statistic is refused: discretise it
(and its sensitivity) first.

The release is integer arithmetic end to end: the statistics are read as int64, the noise is
added in int64, clipping at zero keeps them integers, and row totals are summed exactly (in
int64 where no partial sum can leave it, in Python integers otherwise). Only integer dtypes,
or floats holding whole numbers, are statistics: bools, ``timedelta64``, ``datetime64`` and
object arrays are refused, never read as integers. Statistics beyond
``MAX_STATISTIC = 2**53`` in magnitude are refused, and so are row totals beyond it where the
release projects onto them: the projection and every posterior read the released counts as
float64, which holds every integer only up to 2**53. Every error names the caller's own
argument.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from lpp.randomness import as_generator
from lpp.validation import check_int, positive_float, real_array
from lpp.mechanism import (MIN_EPSILON_OVER_N, ExactAlpha, exact_alpha,
                           sample_two_sided_geometric)

__all__ = ["RELATIONS", "MAX_STATISTIC", "check_epsilon", "split_epsilon", "release_source",
           "integer_statistics", "exact_sum", "count_sensitivity", "laplace_scale",
           "discrete_laplace_alpha", "laplace_mechanism", "project_counts", "privatize_counts",
           "release_fields", "ops_sensitivity_beta", "ops_sensitivity_dirichlet",
           "ops_temperature", "ops_epsilon", "gibbs_scan_epsilon", "gibbs_chain_epsilon"]

#: the neighbouring relations the functions of this module know
RELATIONS = ("replace", "add_remove")
#: the largest magnitude of a statistic the Laplace route releases: float64, which the
#: projections and the posteriors read the released counts in, holds every integer up to it
MAX_STATISTIC = 2**53
_INT64_MAX = int(np.iinfo(np.int64).max)
#: the largest noise magnitude added to a statistic: with ``|statistic| <= MAX_STATISTIC`` the
#: int64 sum cannot wrap
_MAX_NOISE = _INT64_MAX - MAX_STATISTIC


def check_epsilon(epsilon) -> float:
    """``epsilon`` as a float; ValueError unless it is finite and > 0."""
    return positive_float(epsilon, "epsilon")


def split_epsilon(epsilon, parts: int) -> Fraction:
    """``epsilon / parts`` as an exact rational: ``parts`` releases at this level compose
    (sequentially) to exactly ``epsilon`` (a float ``epsilon`` is taken at its binary value)."""
    check_epsilon(epsilon)
    return Fraction(epsilon) / check_int(parts, "parts", minimum=1)


def release_source(rng):
    """The random source that several releases share: ``"system"`` (the operating system's
    CSPRNG) for None or ``"system"``, else one numpy Generator (``as_generator(rng)``), so
    successive releases draw from one reproducible stream."""
    if rng is None or isinstance(rng, str):
        return "system" if rng is None else rng
    return as_generator(rng)


def laplace_scale(epsilon, sensitivity) -> float:
    """The Laplace mechanism's scale ``b = sensitivity / epsilon`` (both > 0, finite)."""
    eps = check_epsilon(epsilon)
    return positive_float(sensitivity, "sensitivity") / eps


def discrete_laplace_alpha(epsilon, sensitivity) -> ExactAlpha:
    """The discrete Laplace release's ``alpha = exp(-epsilon / sensitivity)``, exactly.

    The two-sided geometric ``P(tau) ∝ alpha^|tau|`` with this alpha is the integer
    counterpart of the Laplace distribution of scale ``b = sensitivity / epsilon``
    (:func:`laplace_scale`): ``alpha = exp(-1 / b)``, and its density ratio at neighbouring
    integer statistics ``S``, ``S'`` with ``||S - S'||_1 <= sensitivity`` is at most
    ``exp(epsilon)``. ``epsilon`` and ``sensitivity`` are read as exact rationals (a float at
    its exact binary value, a ``Fraction`` such as ``Fraction(1, 10)`` exactly).

    Returns
    -------
    lpp.mechanism.ExactAlpha
        ``float()`` of it is the (rounded) alpha.

    Raises
    ------
    ValueError
        ``epsilon`` or ``sensitivity`` not positive and finite, or ``epsilon / sensitivity``
        below ``1e-15`` (the noise would not fit in 64-bit integers).
    TypeError
        Either of them not a number.
    """
    check_epsilon(epsilon)
    positive_float(sensitivity, "sensitivity")
    return _exact_alpha(epsilon, sensitivity, "epsilon / sensitivity")


def _exact_alpha(epsilon, sensitivity, ratio: str) -> ExactAlpha:
    """:func:`lpp.mechanism.exact_alpha` of checked arguments; its refusal of a too small
    ratio is raised again naming ``ratio``, written in the caller's own arguments (the
    sampler's message names its own ``N``)."""
    try:
        return exact_alpha(epsilon, sensitivity)
    except ValueError:
        raise ValueError(f"{ratio} = {float(epsilon) / float(sensitivity):.3g} is below "
                         f"{float(MIN_EPSILON_OVER_N):g}: the noise would not fit in 64-bit "
                         "integers") from None


def _holds_bool(values) -> bool:
    """Whether ``values`` (a scalar, an array or nested lists) holds a bool anywhere. Looked
    at before numpy converts it: ``numpy.asarray([True, 2])`` is an integer array."""
    if isinstance(values, (bool, np.bool_)):
        return True
    if isinstance(values, np.ndarray):
        return values.dtype == bool
    if isinstance(values, (list, tuple)):
        return any(_holds_bool(v) for v in values)
    return False


def _statistics_array(values, name: str) -> np.ndarray:
    """``values`` as a non-empty array of an integer or real floating dtype; a TypeError
    naming ``name`` for anything else."""
    if _holds_bool(values):
        raise TypeError(f"{name} must hold integers, not bools (cast them explicitly)")
    try:
        arr = np.asarray(values)
    except ValueError:
        raise ValueError(f"{name} is not a rectangular array of numbers") from None
    # by kind, not np.issubdtype: numpy files timedelta64 under the signed integers
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of integers (or of floats holding whole "
                        f"numbers), got dtype {arr.dtype}; durations, dates, bools and Python "
                        "objects (such as integers beyond int64) are not statistics")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    return arr


def _check_whole(arr: np.ndarray, name: str) -> None:
    """A ValueError naming ``name`` unless the float array ``arr`` holds finite whole
    numbers: a non-integer is refused, never truncated."""
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contain NaN or infinity")
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold integers: the central Laplace route releases "
                         "integer statistics with exact discrete Laplace noise and refuses "
                         "a real-valued release (floating-point Laplace noise is open to "
                         "Mironov's attack, CCS 2012): discretise the statistic and its "
                         "sensitivity first")


def _check_magnitude(arr: np.ndarray, name: str) -> None:
    """A ValueError naming ``name`` where ``|arr|`` exceeds :data:`MAX_STATISTIC`."""
    if arr.dtype.kind == "f":
        beyond = np.abs(arr) > MAX_STATISTIC
    else:  # compared as integers: exact, and no abs() to wrap at -2**63
        beyond = (arr > MAX_STATISTIC) | ((arr < -MAX_STATISTIC) if arr.dtype.kind == "i"
                                          else False)
    if np.any(beyond):
        largest = arr.reshape(-1)[np.flatnonzero(beyond)[0]]
        raise ValueError(f"{name} beyond MAX_STATISTIC = 2**53 in magnitude are refused (e.g. "
                         f"{largest}): the projections and posteriors read the released "
                         "counts as float64, which holds every integer only up to 2**53, so "
                         "the noise would round away there; scale the statistics down")


def integer_statistics(values, name: str = "statistics", *, non_negative=False) -> np.ndarray:
    """``values`` as int64 statistics for an exact release, or a clear refusal.

    Parameters
    ----------
    values : array_like
        An integer array, or floats holding whole numbers, of magnitude at most
        :data:`MAX_STATISTIC`.
    name : str
        The caller's own name for ``values``; every error names it.
    non_negative : bool, keyword-only
        Refuse negative values too (counts).

    Returns
    -------
    ndarray of int64
        The same values, exactly.

    Raises
    ------
    TypeError
        Bools (an array or any element of a list), ``timedelta64``, ``datetime64``, object,
        complex or string data.
    ValueError
        Empty or ragged input, NaN or infinity, non-integer floats, values beyond
        :data:`MAX_STATISTIC`, or negative values when ``non_negative``.
    """
    arr = _statistics_array(values, name)
    if arr.dtype.kind == "f":
        _check_whole(arr, name)
    _check_magnitude(arr, name)
    if non_negative and np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative")
    return arr.astype(np.int64, copy=False)


def _sum_in_range(arr: np.ndarray, axis: int) -> np.ndarray:
    """Exact sums of int64 ``arr`` (``|arr| <= MAX_STATISTIC``) along ``axis``: in int64 when
    no partial sum can leave it (checked on the shape first, so ordinary data pays no extra
    pass), else in Python integers (an object array)."""
    n = arr.shape[axis]
    if n * MAX_STATISTIC <= _INT64_MAX:
        return arr.sum(axis=axis)
    top = max(int(arr.max()), -int(arr.min())) if arr.size else 0
    if n * top <= _INT64_MAX:
        return arr.sum(axis=axis)
    return arr.astype(object).sum(axis=axis)


def exact_sum(statistics, name: str = "statistics", *, axis=-1) -> np.ndarray:
    """Sums of integer statistics along ``axis``, exact, as int64 (never wrapped or rounded).

    Parameters
    ----------
    statistics : array_like
        As :func:`integer_statistics` takes them.
    name : str
        The caller's own name for ``statistics``; every error names it.
    axis : int, keyword-only

    Returns
    -------
    ndarray of int64

    Raises
    ------
    TypeError, ValueError
        As :func:`integer_statistics`; ValueError for a 0-d ``statistics`` or where a sum
        leaves int64.
    """
    arr = integer_statistics(statistics, name)
    if arr.ndim == 0:
        raise ValueError(f"{name} needs an axis to sum along")
    sums = _sum_in_range(arr, axis)
    if sums.dtype == object:
        over = [s for s in np.ravel(sums) if not -_INT64_MAX - 1 <= s <= _INT64_MAX]
        if over:
            raise ValueError(f"{name} add up to {over[0]} along axis {axis}, beyond int64 (2**63 "
                             "- 1): such totals are refused, never wrapped")
    return sums.astype(np.int64)


def _check_relation(relation):
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    return relation


def count_sensitivity(relation="replace", n_fields=1) -> int:
    """L1 sensitivity of the category counts of ``n_fields`` categorical fields per record.

    Parameters
    ----------
    relation : {"replace", "add_remove"}
        Neighbouring relation: replacing one record changes two counts per field by one
        (sensitivity ``2 n_fields``); adding or removing one changes one count per field
        (``n_fields``). The beta–Bernoulli statistics ``(n_+, n_-)`` are one field of two
        categories.
    n_fields : int
        Categorical fields per record whose counts are released together.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        For an unknown relation or ``n_fields < 1``.
    """
    _check_relation(relation)
    return (2 if relation == "replace" else 1) * check_int(n_fields, "n_fields", minimum=1)


def laplace_mechanism(statistics, epsilon, sensitivity, *, rng=None):
    """``S + Y`` with iid discrete Laplace ``Y_j``: the exact eq. 3 of Foulds et al. for counts.

    ``P(Y_j = y) = (1 - alpha)/(1 + alpha) alpha^|y|`` with ``alpha = exp(-epsilon /
    sensitivity)`` (:func:`discrete_laplace_alpha`; the Laplace scale
    ``b = sensitivity / epsilon`` gives ``alpha = exp(-1 / b)``), drawn with integer
    arithmetic only (:func:`lpp.mechanism.sample_two_sided_geometric`, ``exact=True``). The
    relation is whichever ``sensitivity`` was computed for (see :func:`count_sensitivity`); the
    mechanism itself is relation-agnostic.

    Parameters
    ----------
    statistics : array_like of int
        The aggregate statistics (any shape): integers (an integer array, or floats holding
        whole numbers) of magnitude at most :data:`MAX_STATISTIC` (2**53).
    epsilon : float or Fraction
        Privacy level, > 0 (read exactly: a float at its binary value).
    sensitivity : int, float or Fraction
        L1 sensitivity of ``statistics`` under the chosen relation, > 0 (read exactly).
    rng : None, "system", Generator or int, keyword-only
        None (default) or ``"system"``: the operating system's CSPRNG, what a formal privacy
        claim needs. A Generator or an int seed: a reproducible stream, for simulation only
        (whoever holds the seed can regenerate the noise).

    Returns
    -------
    ndarray of int64
        The noisy statistics, same shape.

    Raises
    ------
    TypeError
        Statistics of bools, durations, dates or objects (:func:`integer_statistics`).
    ValueError
        ``epsilon <= 0``, ``sensitivity <= 0``, statistics that are not integers (a
        real-valued release is refused), non-finite, or beyond :data:`MAX_STATISTIC`.
    """
    alpha = discrete_laplace_alpha(epsilon, sensitivity)
    return _add_noise(integer_statistics(statistics, "statistics"), alpha, rng)


def _add_noise(stats: np.ndarray, alpha: ExactAlpha, rng) -> np.ndarray:
    """``stats + Y``, int64, with iid discrete Laplace ``Y`` drawn exactly."""
    noise = sample_two_sided_geometric(alpha, size=stats.shape,
                                       rng="system" if rng is None else rng, exact=True)
    # the alphas exact_alpha admits make such noise vanishingly rare (P < exp(-4600)), but an
    # int64 sum must never wrap; refusing depends on the noise only, never on the data
    if np.any(noise > _MAX_NOISE) or np.any(noise < -_MAX_NOISE):
        raise ValueError("the noise drawn leaves too little room in int64 for the statistics; "
                         "raise epsilon")
    return stats + noise


def _project_simplex(v, total):
    """Euclidean projection of each row of ``v`` onto ``{s >= 0, sum(s) = total}``."""
    u = np.sort(v, axis=-1)[..., ::-1]
    css = np.cumsum(u, axis=-1) - total[..., None]
    k = np.arange(1, v.shape[-1] + 1)
    cond = u - css / k > 0
    rho = v.shape[-1] - 1 - np.argmax(cond[..., ::-1], axis=-1)
    theta = np.take_along_axis(css, rho[..., None], axis=-1) / (rho[..., None] + 1)
    out = np.maximum(v - theta, 0.0)
    out[total == 0] = 0.0  # no condition holds then; the only valid statistic is zero
    return out


def project_counts(noisy, total=None):
    """Project noisy counts back onto valid count statistics (post-processing: free).

    Parameters
    ----------
    noisy : array_like
        Noisy counts, categories along the last axis.
    total : None or array_like
        None: clip at zero (the right projection under ``"add_remove"``, where the number of
        records is itself private). Otherwise the public number of records per row
        (``"replace"``; shape ``noisy.shape[:-1]``, >= 0): the Euclidean projection onto
        ``{s >= 0, sum(s) = total}``.

    Returns
    -------
    ndarray
        float64 counts (integer-valued input stays integer-valued when ``total`` is None).

    Raises
    ------
    ValueError
        Non-finite input, a negative total, or a total whose shape disagrees.
    """
    v = real_array(noisy, "noisy")
    if total is None:
        return np.maximum(v, 0.0)
    if v.ndim == 0:
        raise ValueError("with a total, noisy needs a category axis")
    t = real_array(total, "total", low=0.0)
    if t.shape != v.shape[:-1]:
        raise ValueError(f"total has shape {t.shape}, expected noisy.shape[:-1] = "
                         f"{v.shape[:-1]}")
    return _project_simplex(v, t)


def _row_totals(y: np.ndarray, name: str, relation: str) -> np.ndarray:
    """The exact row totals of the checked counts ``y``, which the projection onto them reads
    in float64: a ValueError naming ``name`` beyond :data:`MAX_STATISTIC` (rounded, they
    would no longer be the totals)."""
    if y.ndim == 0:
        raise ValueError(f"{name} need a category axis under relation={relation!r}")
    totals = _sum_in_range(y, -1)
    beyond = totals > MAX_STATISTIC
    if np.any(beyond):
        raise ValueError(f"row totals of {name} beyond MAX_STATISTIC = 2**53 are refused (e.g. "
                         f"{np.ravel(totals)[np.flatnonzero(beyond)[0]]}): project='auto' "
                         "projects onto them in float64, which holds every integer only up "
                         "to 2**53; project='clip' or 'none' releases such counts exactly")
    return totals.astype(np.int64)


def privatize_counts(counts, epsilon, *, relation="replace", project="auto", rng=None,
                     name="counts"):
    """Release the category counts of one categorical field with the Laplace mechanism.

    Each record adds 1 to exactly one category of its row (e.g. its state, or its time
    step), so the whole array has L1 sensitivity :func:`count_sensitivity` ``(relation)``;
    the noise is the exact discrete Laplace of :func:`laplace_mechanism`, added in int64.

    Parameters
    ----------
    counts : array_like of int
        Non-negative counts, categories along the last axis, at most :data:`MAX_STATISTIC`
        (an integer array, or floats holding whole numbers; see :func:`integer_statistics`).
    epsilon : float
        Privacy level of this release, > 0.
    relation : {"replace", "add_remove"}
        Neighbouring relation; it sets the sensitivity (2 or 1).
    project : {"auto", "clip", "none"}
        ``"auto"``: the projection the relation allows — onto the row totals under
        ``"replace"`` (valid when a replaced record stays in its row, so each row's total is
        public, e.g. one row per data set of known size; the totals are summed exactly and
        must not exceed :data:`MAX_STATISTIC`), clipping at zero under ``"add_remove"``.
        ``"clip"``: clip at zero only (what Foulds et al. describe, under either relation).
        ``"none"``: the raw noisy counts.
    rng
        As in :func:`laplace_mechanism`.
    name : str, keyword-only
        What the errors call ``counts``: the caller's own name for them (e.g. ``"totals[0]"``
        when a model releases its fields).

    Returns
    -------
    ndarray
        Released statistics: int64 and exactly ``counts + noise`` with ``project="none"``,
        clipped at zero (still int64, exact) when clipped; float64 when projected onto the
        row totals (a Euclidean projection, whose values are not integers in general).

    Raises
    ------
    TypeError
        ``counts`` of bools, durations, dates or objects.
    ValueError
        Negative, non-integer or too large counts, row totals beyond :data:`MAX_STATISTIC`
        where the release projects onto them, ``epsilon <= 0`` or too small, an unknown
        relation or projection.
    """
    _check_relation(relation)
    if project not in ("auto", "clip", "none"):
        raise ValueError(f"project must be 'auto', 'clip' or 'none', got {project!r}")
    delta = count_sensitivity(relation)
    check_epsilon(epsilon)
    alpha = _exact_alpha(epsilon, delta, f"epsilon / {delta} (the count sensitivity under "
                                         f"relation={relation!r})")
    y = integer_statistics(counts, name, non_negative=True)
    # the totals are checked before any noise is drawn: a refusal depends on public data only
    totals = (_row_totals(y, name, relation) if project == "auto" and relation == "replace"
              else None)
    noisy = _add_noise(y, alpha, rng)
    if project == "none":
        return noisy
    if totals is None:
        return np.maximum(noisy, 0)  # in int64: a clipped count is still exactly an integer
    return project_counts(noisy, totals)


def release_fields(tables, epsilon, name: str, rng=None) -> tuple:
    """Laplace release of each of ``D`` fields' count tables at ``epsilon / D`` each.

    The fields' releases compose (sequentially) to exactly ``epsilon``
    (:func:`split_epsilon`); each is :func:`privatize_counts` under ``"replace"``, clipped at
    zero (a record may move within a field's table, so no total of it is public).

    Parameters
    ----------
    tables : sequence of array_like of int
        One count table per field, each as :func:`privatize_counts` takes it.
    epsilon : float
        Total privacy level, > 0 (each field's share is exactly ``epsilon / D``).
    name : str
        What the errors call the tables: field d's is ``f"{name}[{d}]"``.
    rng
        As in :func:`laplace_mechanism`; the fields draw from one stream
        (:func:`release_source`).

    Returns
    -------
    tuple of ndarray of int64
        Released tables: exactly ``tables[d] + noise``, clipped at zero.

    Raises
    ------
    TypeError, ValueError
        As :func:`privatize_counts`, naming the field's table.
    """
    eps = split_epsilon(epsilon, len(tables))
    gen = release_source(rng)
    return tuple(privatize_counts(t, eps, relation="replace", project="clip", rng=gen,
                                  name=f"{name}[{d}]")
                 for d, t in enumerate(tables))

def _check_a0(a0, high, what):
    x = float(real_array(a0, "a0"))
    if np.ndim(a0) != 0:
        raise ValueError("a0 must be a scalar")
    if not 0.0 < x < high:
        raise ValueError(f"a0 must lie in (0, {high:g}) for {what}, got {a0}")
    return x


def ops_sensitivity_beta(a0) -> float:
    """``Delta log p = log((1 - a0) / a0)``: Bernoulli likelihood, ``p`` in ``[a0, 1 - a0]``.

    Eq. 15 of Foulds et al.; relation ``"replace"`` (one record ``x`` becomes ``x'``).

    Parameters
    ----------
    a0 : float
        Truncation point, in ``(0, 1/2)``.

    Returns
    -------
    float
        ``log((1 - a0) / a0)``.

    Raises
    ------
    ValueError
        ``a0`` outside ``(0, 1/2)``.
    """
    x = _check_a0(a0, 0.5, "the truncated Beta")
    return float(np.log1p(-x) - np.log(x))


def ops_sensitivity_dirichlet(a0, n_categories) -> float:
    """``Delta log p`` of a categorical likelihood with every ``theta_k >= a0``.

    ``|log theta_k - log theta_j|`` is largest at ``theta_j = a0``,
    ``theta_k = 1 - (K - 1) a0``: ``log(1 - (K - 1) a0) - log(a0)``. Relation
    ``"replace"``. For ``K = 2`` this is :func:`ops_sensitivity_beta`.

    Parameters
    ----------
    a0 : float
        Truncation point, in ``(0, 1/K)``.
    n_categories : int
        ``K >= 2``.

    Returns
    -------
    float
        ``log(1 - (K - 1) a0) - log(a0)``.

    Raises
    ------
    ValueError
        ``K < 2`` or ``a0`` outside ``(0, 1/K)``.
    """
    k = check_int(n_categories, "n_categories", minimum=2)
    x = _check_a0(a0, 1.0 / k, f"a truncated Dirichlet of {k} categories")
    return float(np.log1p(-(k - 1) * x) - np.log(x))


def ops_temperature(epsilon, sensitivity, *, cap=True) -> float:
    """OPS temperature ``T = 2 Delta / epsilon`` (eq. 14): the sample is ``p(theta, X)^(1/T)``.

    Parameters
    ----------
    epsilon : float
        Privacy level of the one released sample, > 0.
    sensitivity : float
        ``Delta log p`` under the relation it was computed for (> 0).
    cap : bool, keyword-only
        True (default): ``max(T, 1)`` — once ``epsilon >= 2 Delta`` the exact posterior
        is already private enough, and sampling colder would not be a posterior sample.

    Returns
    -------
    float
        The temperature ``T`` (at least 1 with ``cap``).

    Raises
    ------
    ValueError
        ``epsilon <= 0`` or ``sensitivity <= 0``.
    """
    eps = check_epsilon(epsilon)
    delta = float(real_array(sensitivity, "sensitivity", low=0.0, low_open=True))
    t = 2.0 * delta / eps
    return max(t, 1.0) if cap else t


def ops_epsilon(temperature, sensitivity) -> float:
    """The privacy level ``2 Delta / T`` of one sample at temperature ``T`` (> 0)."""
    t = float(real_array(temperature, "temperature", low=0.0, low_open=True))
    delta = float(real_array(sensitivity, "sensitivity", low=0.0, low_open=True))
    return 2.0 * delta / t


def gibbs_scan_epsilon(sensitivity, scan="full", *, n_updates=None, n_variables=None) -> float:
    """Privacy cost of one exact Gibbs scan, each update an exponential mechanism.

    Assumes each updated variable touches one record only (e.g. a record's own latent
    state), relation ``"replace"``. A single Gibbs update costs ``2 Delta``
    (eqs. 18–20); ``scan="full"``: a random-sequence scan updating all ``N`` variables once,
    ``2 Delta`` by parallel composition; ``scan="random"``: ``Q = n_updates`` of
    ``N = n_variables`` variables drawn at random, ``4 Delta Q / N`` by amplification by
    subsampling.

    Parameters
    ----------
    sensitivity : float
        ``Delta log p`` of the update (> 0).
    scan : {"full", "random"}
    n_updates, n_variables : int, keyword-only
        ``Q`` and ``N`` for ``scan="random"``, ``1 <= Q <= N``.

    Returns
    -------
    float
        The scan's privacy cost (an epsilon).

    Raises
    ------
    ValueError
        Bad sensitivity, an unknown scan, or ``Q``/``N`` missing or out of range.
    """
    delta = float(real_array(sensitivity, "sensitivity", low=0.0, low_open=True))
    if scan == "full":
        if n_updates is not None or n_variables is not None:
            raise ValueError("n_updates and n_variables are for scan='random'")
        return 2.0 * delta
    if scan != "random":
        raise ValueError(f"scan must be 'full' or 'random', got {scan!r}")
    n_updates = check_int(n_updates, "n_updates", minimum=1)
    n_variables = check_int(n_variables, "n_variables", minimum=1)
    if n_updates > n_variables:
        raise ValueError(f"n_updates ({n_updates}) exceeds n_variables ({n_variables})")
    return 4.0 * delta * n_updates / n_variables


def gibbs_chain_epsilon(per_scan, n_scans) -> float:
    """Basic (sequential) composition over ``n_scans`` released scans: ``n_scans * per_scan``.

    Parameters
    ----------
    per_scan : float
        Privacy cost of one scan (> 0), e.g. :func:`gibbs_scan_epsilon`.
    n_scans : int
        Scans whose states are released, >= 1.

    Returns
    -------
    float
        The chain's privacy cost (an epsilon).

    Raises
    ------
    ValueError
        ``per_scan <= 0`` or ``n_scans < 1``.
    """
    cost = float(real_array(per_scan, "per_scan", low=0.0, low_open=True))
    return cost * check_int(n_scans, "n_scans", minimum=1)
