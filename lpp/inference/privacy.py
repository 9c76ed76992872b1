"""The privacy step: draw the true counts ``y`` given the privatized counts and the rates.

Data model (Schein et al. 2019): ``y ~ Pois(mu)`` and ``y_tilde = y + tau`` with
``tau ~ 2Geo(alpha)``, ``P(tau) = (1 - alpha) / (1 + alpha) * alpha**|tau|``. Given the current
rates ``mu`` of any Poisson factorization model, the complete conditional of each count is

    P(y | y_tilde, mu)  ∝  Pois(y; mu) * alpha**|y_tilde - y|.

Two exact samplers of it are provided; both see only ``y_tilde``, ``alpha`` and ``mu`` — never
the true counts — and neither knows anything about the model that produced ``mu``:

* :class:`CollapsedPrivacy` draws ``y`` directly from that conditional (docs/design.md):
  ``y_tilde <= 0`` gives ``y ~ Pois(alpha * mu)``; ``y_tilde > 0`` gives a two-piece mixture of
  ``Pois(mu / alpha)`` truncated to ``{0..y_tilde}`` and ``Pois(alpha * mu)`` truncated to
  ``{y_tilde + 1, ...}``, with the piece chosen by its log weight. No auxiliary state.
* :class:`BesselPrivacy` is the paper's augmentation (eqs. 13-16): with per-entry noise rates
  ``lam+``, ``lam-`` kept as chain state, draw ``m ~ Bes(|y_tilde|, 2 sqrt((lam+ + mu) lam-))``,
  split it into ``y_tilde+`` and ``g-``, thin ``y ~ Binom(y_tilde+, mu / (mu + lam+))`` and
  then redraw ``lam± ~ Gamma(1 + g±, rate = 1 / alpha)``. (Eq. 16 of the ICML text prints the
  rate as ``alpha / (1 - alpha) + 1 = 1 / (1 - alpha)``; the prior ``lam ~ Exp(rate
  (1 - alpha) / alpha)`` times the Poisson likelihood gives rate ``(1 - alpha) / alpha + 1 =
  1 / alpha``. The Geweke test in ``tests/lpp/inference`` fails with the printed rate.)

``alpha`` may be a scalar, one value per row (leading index) or one value per entry, or any
array that broadcasts to the data. Entries that the model does not observe (``observed`` False)
carry no likelihood; the step leaves them at ``y = 0`` and does not touch their noise state.

Random numbers: the kernels work on fixed blocks of :data:`BLOCK_SIZE` consecutive entries (C
order) and seed each block's stream with ``(seed, iteration, block)``, so a draw depends on the
seed and the iteration only — not on the number of threads.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from lpp._rng import Tag, as_generator, base_seed, derive_seed, seed_stream
from lpp.inference._capabilities import lapse_overridden
from lpp.distributions import (
    poisson_logcdf_nb,
    poisson_logsf_nb,
    poisson_nb,
    sample_bessel_nb,
    standard_gamma_nb,
    truncated_poisson_above_nb,
    truncated_poisson_at_most_nb,
)
from lpp.distributions.bessel import MAX_PARAMETER as BESSEL_MAX_PARAMETER
from lpp.distributions.poisson import MAX_MEAN
from lpp.inference._numerics import (
    CALL_STEPS,
    SERIAL_BELOW,
    call_ranges,
    check_counts_drawn,
    parallel_and_serial,
)
from lpp._validation import count_array, noise_level_array

#: entries per random-stream block of the privacy kernels
BLOCK_SIZE = 4096
#: the direct inversion of the positive case serves y_tilde up to this and mu / alpha up to
#: INVERSION_MAX_RATE (its terms, scaled to P(0) = 1, stay below e^500); beyond, log-space pieces
INVERSION_MAX_COUNT = 256
INVERSION_MAX_RATE = 500.0
_SERIES_TOL = 1e-17
#: 1/j for the inversion's ratios (a product per term instead of a division); beyond the table's
#: end the division is done
_RECIPROCALS = 1.0 / np.arange(1, 2 * INVERSION_MAX_COUNT + 2, dtype=np.float64)
_N_RECIPROCALS = _RECIPROCALS.size

#: the methods whose behaviour each capability of a privacy step vouches for
CAPABILITY_METHODS = {"exact_conditional": ("sample", "init_state"),
                      "known_counts": ("sample", "init_state", "initial_counts")}


# ---------------------------------------------------------------------------------------------
# noise levels
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NoiseLevels:
    """``alpha`` in a compact layout: entry ``e`` (C order) has ``values[e // stride]``.

    A scalar has one value and ``stride`` = number of entries; a per-row alpha has one value per
    leading index and ``stride`` = entries per row; anything else is stored per entry.
    """

    values: np.ndarray
    stride: int
    shape: tuple[int, ...]

    def full(self) -> np.ndarray:
        """``alpha`` for every entry, in the data's shape."""
        return np.repeat(self.values, self.stride)[: math.prod(self.shape)].reshape(self.shape)

    def per_row(self) -> np.ndarray | None:
        """One value per leading index when alpha is constant within rows, else ``None``."""
        row_len = math.prod(self.shape[1:])
        if self.values.size == 1:
            return np.full(self.shape[0], self.values[0])
        if self.stride == row_len:
            return self.values
        return None


def noise_levels(alpha, shape: tuple[int, ...]) -> NoiseLevels:
    """Validate ``alpha`` (each in the open interval (0, 1)) against the data shape."""
    if alpha is None:
        raise TypeError("alpha is required for the private methods (the mechanism's noise level)")
    arr = noise_level_array(alpha)
    try:
        np.broadcast_shapes(arr.shape, shape)
    except ValueError:
        raise ValueError(f"alpha of shape {arr.shape} does not broadcast to the data's shape "
                         f"{tuple(shape)}") from None
    if np.broadcast_shapes(arr.shape, shape) != tuple(shape):
        raise ValueError(f"alpha of shape {arr.shape} would enlarge the data's shape "
                         f"{tuple(shape)}")
    n = math.prod(shape)
    padded = arr.reshape((1,) * (len(shape) - arr.ndim) + arr.shape)
    if padded.size == 1:
        return NoiseLevels(padded.reshape(1).copy(), n, tuple(shape))
    if all(s == 1 for s in padded.shape[1:]) and padded.shape[0] == shape[0]:
        rows = np.ascontiguousarray(padded.reshape(shape[0]))
        return NoiseLevels(rows, n // shape[0], tuple(shape))
    full = np.ascontiguousarray(np.broadcast_to(padded, shape).reshape(n))
    return NoiseLevels(full, 1, tuple(shape))


# ---------------------------------------------------------------------------------------------
# collapsed kernel
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def _positive_by_inversion(y_tilde, alpha, mu):
    """Exact draw for ``y_tilde > 0`` by inversion of the whole conditional.

    With weights scaled so that ``w_0 = 1``, successive ratios are ``w_j / w_(j-1) = mu /
    (alpha j)`` for ``j <= y_tilde`` and ``alpha mu / j`` beyond, so the normaliser is a sum of
    products (no logarithms, no special functions). The uniform ``u`` is drawn first and the
    target ``u * total`` is located lazily: the pieces up to ``y_tilde`` are summed exactly and
    the upper tail is first bracketed by its leading term and a geometric bound on the rest.
    When the whole bracket of the target falls inside one cell of the lower piece — nearly
    always when ``alpha mu`` is small, as it is on noise entries — that cell is the draw, the
    same one a fully summed normaliser would give. Otherwise the upper tail is summed until the
    rest is below 1e-17 of the total and the target is located in the full series.
    """
    lam_low = mu / alpha
    lam_high = alpha * mu
    u = np.random.random()
    low = 1.0
    t = 1.0
    for j in range(1, y_tilde + 1):
        t *= lam_low * _RECIPROCALS[j - 1]
        low += t
    top = t  # w_(y_tilde)
    if y_tilde + 1 < _N_RECIPROCALS:
        ratio_first = lam_high * _RECIPROCALS[y_tilde]
        ratio_rest = lam_high * _RECIPROCALS[y_tilde + 1]  # bounds every later ratio
        if ratio_rest < 1.0:
            first = top * ratio_first
            target_lo = u * (low + first)
            target_hi = u * (low + first / (1.0 - ratio_rest))
            if target_hi < low:
                acc = 1.0
                t = 1.0
                j = 0
                while acc <= target_lo:  # stops by j = y_tilde, where acc == low
                    j += 1
                    t *= lam_low * _RECIPROCALS[j - 1]
                    acc += t
                if acc > target_hi:
                    return j
    total = low
    t = top
    j = y_tilde
    while True:
        j += 1
        r = lam_high * _RECIPROCALS[j - 1] if j <= _N_RECIPROCALS else lam_high / j
        t *= r
        total += t
        r = lam_high / (j + 1.0) if j >= _N_RECIPROCALS else lam_high * _RECIPROCALS[j]
        if r < 1.0 and t * r <= _SERIES_TOL * total * (1.0 - r):
            break
    last = j
    target = u * total
    acc = 1.0
    t = 1.0
    j = 0
    while acc <= target and j < last:
        j += 1
        lam = lam_low if j <= y_tilde else lam_high
        t *= lam * _RECIPROCALS[j - 1] if j <= _N_RECIPROCALS else lam / j
        acc += t
    return j


@njit(cache=True)
def sample_true_count_collapsed_nb(y_tilde, alpha, mu):
    """One exact draw from ``P(y | y_tilde, mu) ∝ Pois(y; mu) alpha**|y_tilde - y|``; -1 for a
    rate that is NaN, infinite or above :data:`lpp.distributions.poisson.MAX_MEAN`."""
    if mu <= 0.0:
        return 0
    if not mu <= MAX_MEAN:
        return -1
    if y_tilde <= 0:
        return poisson_nb(alpha * mu)
    if y_tilde <= INVERSION_MAX_COUNT and mu <= INVERSION_MAX_RATE * alpha:
        return _positive_by_inversion(y_tilde, alpha, mu)
    log_alpha = math.log(alpha)
    lam_low = mu / alpha
    lam_high = alpha * mu
    log_cdf_low = poisson_logcdf_nb(y_tilde, lam_low)
    log_sf_high = poisson_logsf_nb(y_tilde, lam_high)
    # weights of the pieces y <= y_tilde and y > y_tilde (common factor e^-mu dropped)
    log_w_low = y_tilde * log_alpha + lam_low + log_cdf_low
    log_w_high = -y_tilde * log_alpha + lam_high + log_sf_high
    diff = log_w_low - log_w_high
    if diff > 700.0:
        p_high = 0.0
    else:
        p_high = 1.0 / (1.0 + math.exp(diff))
    if np.random.random() < p_high:
        return truncated_poisson_above_nb(lam_high, y_tilde, log_sf_high)
    return truncated_poisson_at_most_nb(lam_low, y_tilde, log_cdf_low)


@njit(cache=True)
def _collapsed_block(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration, b, out):
    seed_stream(seed, iteration, b)
    for e in range(b * BLOCK_SIZE, min(y_tilde.size, (b + 1) * BLOCK_SIZE)):
        if observed[e]:
            alpha = alpha_values[e // alpha_stride]
            out[e] = sample_true_count_collapsed_nb(y_tilde[e], alpha, mu[e])
        else:
            out[e] = 0


def _collapsed_loop(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration, b_lo,
                    b_hi, out):
    for b in prange(b_hi - b_lo):
        _collapsed_block(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration,
                         b_lo + b, out)


_collapsed_parallel, _collapsed_serial = parallel_and_serial(_collapsed_loop)


def _collapsed_kernel(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration, out):
    kernel = _collapsed_serial if y_tilde.size < SERIAL_BELOW else _collapsed_parallel
    for b_lo, b_hi in call_ranges(_collapsed_steps(y_tilde)):
        kernel(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration, b_lo, b_hi,
               out)


#: steps of the collapsed draw of a positive count y~ at most: about 9 sqrt(y~) terms of a tail
#: sum near the centre (:mod:`lpp.distributions.poisson`), never more than this
_COLLAPSED_MAX_STEPS = 10_000


def _collapsed_steps(y_tilde: np.ndarray) -> np.ndarray:
    """Steps per block of :func:`_collapsed_kernel` (bounded by the largest count when that
    fits one call)."""
    n_blocks = (y_tilde.size + BLOCK_SIZE - 1) // BLOCK_SIZE
    top = float(max(y_tilde.max(), 0))
    per_entry = 16.0 + min(9.0 * math.sqrt(top), _COLLAPSED_MAX_STEPS)
    if per_entry * y_tilde.size <= CALL_STEPS:
        return np.full(n_blocks, per_entry * BLOCK_SIZE)
    positive = np.sqrt(np.maximum(y_tilde, 0).astype(np.float64))
    steps = 16.0 + np.minimum(9.0 * positive, _COLLAPSED_MAX_STEPS)
    return np.add.reduceat(steps, np.arange(0, y_tilde.size, BLOCK_SIZE))


# ---------------------------------------------------------------------------------------------
# Bessel kernels
# ---------------------------------------------------------------------------------------------

@njit(cache=True)
def _bessel_counts_block(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration, b,
                         y_out, g_plus_out, g_minus_out):
    seed_stream(seed, iteration, b)
    for e in range(b * BLOCK_SIZE, min(y_tilde.size, (b + 1) * BLOCK_SIZE)):
        if not observed[e]:
            y_out[e] = 0
            g_plus_out[e] = 0
            g_minus_out[e] = 0
            continue
        yt = y_tilde[e]
        m_e = mu[e]
        lp = lam_plus[e]
        a = 2.0 * math.sqrt((lp + m_e) * lam_minus[e])
        if not a <= BESSEL_MAX_PARAMETER:  # NaN or beyond the sampler: marked for the caller
            y_out[e] = -1
            g_plus_out[e] = 0
            g_minus_out[e] = 0
            continue
        # m = min(y_tilde+, g-) given their difference y_tilde (Theorem 3)
        m = sample_bessel_nb(abs(yt), a)
        if yt <= 0:
            y_plus = m
            g_minus = m - yt
        else:
            g_minus = m
            y_plus = m + yt
        if m_e <= 0.0 or y_plus == 0:
            y = 0
        else:
            y = np.random.binomial(y_plus, m_e / (m_e + lp))
        y_out[e] = y
        g_plus_out[e] = y_plus - y
        g_minus_out[e] = g_minus


def _bessel_counts_loop(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration, b_lo, b_hi,
                        y_out, g_plus_out, g_minus_out):
    for b in prange(b_hi - b_lo):
        _bessel_counts_block(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration,
                             b_lo + b, y_out, g_plus_out, g_minus_out)


_bessel_counts_parallel, _bessel_counts_serial = parallel_and_serial(_bessel_counts_loop)

#: steps of one entry of the Bessel step (a Bessel, a binomial and two Gamma draws)
_BESSEL_STEPS = 32.0


def _block_ranges(size: int, steps_per_entry: float) -> list[tuple[int, int]]:
    n_blocks = (size + BLOCK_SIZE - 1) // BLOCK_SIZE
    return call_ranges(np.full(n_blocks, steps_per_entry * BLOCK_SIZE))


def _bessel_counts_kernel(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration, *out):
    kernel = _bessel_counts_serial if y_tilde.size < SERIAL_BELOW else _bessel_counts_parallel
    for b_lo, b_hi in _block_ranges(y_tilde.size, _BESSEL_STEPS):
        kernel(y_tilde, mu, observed, lam_plus, lam_minus, seed, iteration, b_lo, b_hi, *out)


@njit(cache=True)
def _lambda_block(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration, b,
                  lam_plus, lam_minus):
    seed_stream(seed, iteration, b)
    for e in range(b * BLOCK_SIZE, min(g_plus.size, (b + 1) * BLOCK_SIZE)):
        if observed[e]:
            scale = scale_values[e // scale_stride]
            lam_plus[e] = standard_gamma_nb(1.0 + g_plus[e]) * scale
            lam_minus[e] = standard_gamma_nb(1.0 + g_minus[e]) * scale


def _lambda_loop(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration, b_lo,
                 b_hi, lam_plus, lam_minus):
    for b in prange(b_hi - b_lo):
        _lambda_block(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration,
                      b_lo + b, lam_plus, lam_minus)


_lambda_parallel, _lambda_serial = parallel_and_serial(_lambda_loop)


def _lambda_kernel(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration,
                   lam_plus, lam_minus):
    """``lam± ~ Gamma(1 + g±, scale)`` in place, for observed entries."""
    kernel = _lambda_serial if g_plus.size < SERIAL_BELOW else _lambda_parallel
    for b_lo, b_hi in _block_ranges(g_plus.size, _BESSEL_STEPS):
        kernel(g_plus, g_minus, observed, scale_values, scale_stride, seed, iteration, b_lo,
               b_hi, lam_plus, lam_minus)


# ---------------------------------------------------------------------------------------------
# the step objects
# ---------------------------------------------------------------------------------------------

class PrivacyStep(ABC):
    """Interface of a privacy step: ``y | y_tilde, alpha, mu`` (plus its own auxiliary state).

    A privacy step is the model-agnostic half of a sweep: it sees the privatized counts, the
    noise levels and the current rates ``mu``, never the model. ``sample`` must leave
    ``P(y, state | y_tilde, mu)`` invariant and return fresh arrays (it never mutates its
    inputs), so that an interrupted sweep leaves the chain consistent. Subclass it and pass an
    instance as ``fit_private(method=...)``; :data:`PRIVACY_STEPS` holds the built-in ones by
    name.

    Attributes
    ----------
    name : str
        Recorded as the fit's ``method``.
    models_noise : bool
        Whether the step treats ``y_tilde`` as ``y`` plus 2Geo noise; the log joint then
        includes the noise's log density. A step that does not (the naive method) gives log
        joints of the model alone, and ``alpha`` is optional for it.
    capabilities : frozenset of str
        Promises that fused engines (:mod:`lpp.inference.fused`) rely on.
        ``"exact_conditional"``: ``y`` is drawn exactly from ``Pois(y; mu) alpha**|y_tilde - y|``
        with no auxiliary state. ``"known_counts"``: every draw of ``y`` is
        ``initial_counts(y_tilde)``, whatever ``mu``, with no auxiliary state.
    """

    name: str = ""
    models_noise: bool = True
    capabilities: frozenset = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        lapse_overridden(cls, CAPABILITY_METHODS)

    def init_state(self, y_tilde: np.ndarray, noise: NoiseLevels | None,
                   seed: int) -> dict[str, np.ndarray]:
        """Auxiliary state at the start of a chain (none by default)."""
        return {}

    def initial_counts(self, y_tilde: np.ndarray) -> np.ndarray:
        """The best guess of the true counts before any sweep: ``max(y_tilde, 0)``."""
        return np.maximum(y_tilde, 0)

    @abstractmethod
    def sample(self, y_tilde: np.ndarray, noise: NoiseLevels | None, mu: np.ndarray,
               observed: np.ndarray, state: dict[str, np.ndarray], seed: int,
               iteration: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Draw ``y`` (int64, the shape of ``y_tilde``) and the new auxiliary state."""


def _flat(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1)


class CollapsedPrivacy(PrivacyStep):
    """Exact draw from ``P(y | y_tilde, mu)`` with the noise marginalised (docs/design.md,
    "The collapsed conditional of a count")."""

    name = "collapsed"
    capabilities = frozenset({"exact_conditional"})

    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        out = np.empty(y_tilde.shape, dtype=np.int64)
        _collapsed_kernel(_flat(y_tilde), _flat(np.ascontiguousarray(mu, dtype=np.float64)),
                          _flat(observed), noise.values, noise.stride,
                          derive_seed(seed, Tag.COUNTS), iteration, _flat(out))
        check_counts_drawn(out)
        return out, {}


class BesselPrivacy(PrivacyStep):
    """The paper's Bessel augmentation; keeps the noise rates ``lam_plus``, ``lam_minus``.

    One call is one blocked Gibbs scan: ``(m, y, g+, g-) | lam, mu, y_tilde`` jointly (Bessel,
    then binomial thinning), then ``lam± | g±``. The chain's stationary distribution of ``y`` is
    ``P(y | y_tilde, mu)``, but successive draws are autocorrelated through ``lam``.
    """

    name = "bessel"

    def lambda_scale(self, noise: NoiseLevels) -> np.ndarray:
        """Scale of the Gamma complete conditional of ``lam±``: ``alpha`` (rate ``1/alpha``)."""
        return noise.values

    def init_state(self, y_tilde, noise, seed):
        rng = as_generator(derive_seed(seed, Tag.LAMBDA))
        mean = noise.full() / (1.0 - noise.full())  # prior: lam ~ Exp with mean alpha / (1 - alpha)
        return {"lam_plus": rng.exponential(mean), "lam_minus": rng.exponential(mean)}

    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        y = np.empty(y_tilde.shape, dtype=np.int64)
        g_plus = np.empty(y_tilde.shape, dtype=np.int64)
        g_minus = np.empty(y_tilde.shape, dtype=np.int64)
        lam_plus = np.array(state["lam_plus"], dtype=np.float64, order="C", copy=True)
        lam_minus = np.array(state["lam_minus"], dtype=np.float64, order="C", copy=True)
        _bessel_counts_kernel(_flat(y_tilde), _flat(np.ascontiguousarray(mu, dtype=np.float64)),
                              _flat(observed), _flat(lam_plus), _flat(lam_minus),
                              derive_seed(seed, Tag.COUNTS), iteration,
                              _flat(y), _flat(g_plus), _flat(g_minus))
        check_counts_drawn(y, g_plus, g_minus)
        _lambda_kernel(_flat(g_plus), _flat(g_minus), _flat(observed),
                       np.ascontiguousarray(self.lambda_scale(noise), dtype=np.float64),
                       noise.stride, derive_seed(seed, Tag.LAMBDA), iteration,
                       _flat(lam_plus), _flat(lam_minus))
        return y, {"lam_plus": lam_plus, "lam_minus": lam_minus}


class NaivePrivacy(PrivacyStep):
    """The naive method: take ``max(y_tilde, 0)`` as if it were the true counts.

    It ignores the noise (and ``mu``), which is what a non-private analysis of privatized data
    does; the fits' log joints are then those of the model alone.
    """

    name = "naive"
    models_noise = False
    capabilities = frozenset({"known_counts"})

    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        return self.initial_counts(y_tilde), {}


#: the built-in privacy steps by name (``fit_private(method=name)``)
PRIVACY_STEPS: dict[str, type[PrivacyStep]] = {
    CollapsedPrivacy.name: CollapsedPrivacy,
    BesselPrivacy.name: BesselPrivacy,
    NaivePrivacy.name: NaivePrivacy,
}


def make_privacy_step(method) -> PrivacyStep:
    """A privacy step from a :data:`PRIVACY_STEPS` name or a :class:`PrivacyStep` instance.

    Parameters
    ----------
    method : str or PrivacyStep
        ``"collapsed"``, ``"bessel"``, ``"naive"``, or your own step (returned as is).

    Raises
    ------
    ValueError
        For an unknown name.
    TypeError
        For anything else.
    """
    if isinstance(method, PrivacyStep):
        return method
    if isinstance(method, str):
        if method not in PRIVACY_STEPS:
            raise ValueError(f"method must be one of {tuple(PRIVACY_STEPS)} or a PrivacyStep "
                             f"instance, got {method!r}")
        return PRIVACY_STEPS[method]()
    raise TypeError(f"method must be a name or a PrivacyStep instance, got {type(method).__name__}")


def sample_true_counts(y_tilde, alpha, mu, *, rng=None, observed=None,
                       iteration: int = 0) -> np.ndarray:
    """One exact draw of the true counts from ``P(y | y_tilde, mu)`` (collapsed step).

    ``y_tilde``: privatized counts (any shape, integers, may be negative); ``alpha``: noise
    level(s) broadcastable to it; ``mu``: Poisson rates (same shape, >= 0); ``rng``: int,
    Generator or None; ``observed``: optional bool array, False entries return 0.
    """
    y_tilde = count_array(y_tilde, "y_tilde", signed=True)
    noise = noise_levels(alpha, y_tilde.shape)
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    if mu.shape != y_tilde.shape:
        raise ValueError(f"mu has shape {mu.shape} but y_tilde has shape {y_tilde.shape}")
    if not np.isfinite(mu).all() or np.any(mu < 0):
        raise ValueError("mu must be finite and non-negative")
    obs = (np.ones(y_tilde.shape, dtype=bool) if observed is None
           else np.ascontiguousarray(observed, dtype=bool))
    if obs.shape != y_tilde.shape:
        raise ValueError(f"observed has shape {obs.shape} but y_tilde has shape {y_tilde.shape}")
    y, _ = CollapsedPrivacy().sample(y_tilde, noise, mu, obs, {}, base_seed(rng), iteration)
    return y
