"""Exact standard-normal and Gamma variates for numba kernels, cheaper than ``np.random``'s.

numba's ``np.random.standard_normal`` is the polar method (two uniforms, a log and a square root
per pair, about 43 ns on our machine) and ``np.random.gamma`` uses it inside Marsaglia and
Tsang's method, so one Gamma draw of the models' updates cost 90-145 ns — a third of a sweep
of the sparse topic sampler at epsilon/N = 3. Here:

* :func:`standard_normal_nb` — the ziggurat method of Marsaglia and Tsang (2000) in Doornik's
  (2005) form (ZIGNOR): 128 strips; the strip index and the abscissa come from *separate*
  bits of one 53-bit uniform, which removes the correlation Doornik found in the original;
  exact (the wedges are resolved by rejection against the density, the base strip's tail by
  Marsaglia's exponential rejection). One uniform per draw 98.8% of the time.
* :func:`standard_gamma_nb` — Marsaglia and Tsang (2000) for shape >= 1 on that normal; for
  shape < 1, ``Gamma(a) = Gamma(a + 1) * U**(1/a)`` (Stuart's theorem).

* :func:`gamma_rate_nb` — ``Gamma(shape, rate)`` for the models' updates, small shapes in log
  space and never below :data:`TINY`; :func:`gamma_rate_np` is its NumPy twin (the same law,
  for priors and simulators outside the kernels).

The numba functions take a stream of :mod:`lpp.randomness` as their first argument and draw
their uniforms from it, as every other kernel draw does.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lpp.randomness import uniform

#: strips of the ziggurat (Doornik's ZIGNOR uses 128)
_STRIPS = 128
#: right edge of the base strip (the tail starts here) and the common area of the strips, for
#: 128 strips of the unnormalised density exp(-x^2 / 2)
_R = 3.442619855899
_AREA = 9.91256303526217e-3
_BITS_PER_INDEX = 7
_INDEX_MASK = _STRIPS - 1
_TWO_53 = 9007199254740992.0
#: the 46 bits left after the strip index, scaled to (0, 2)
_ABSCISSA_SCALE = 2.0 ** -45


def _ziggurat_tables():
    """``x[i]``: the strips' right edges (``x[0]`` is the base strip's equivalent width);
    ``ratio[i] = x[i + 1] / x[i]``: the share of strip i that lies wholly under the curve."""
    x = np.empty(_STRIPS + 1)
    f = math.exp(-0.5 * _R * _R)
    x[0] = _AREA / f
    x[1] = _R
    for i in range(2, _STRIPS):
        x[i] = math.sqrt(-2.0 * math.log(_AREA / x[i - 1] + f))
        f = math.exp(-0.5 * x[i] * x[i])
    x[_STRIPS] = 0.0
    ratio = x[1:] / x[:-1]
    return x, ratio


_X, _RATIO = _ziggurat_tables()


@njit(cache=True)
def _normal_tail(rng, negative):
    """A draw from the standard normal beyond ``_R`` (Marsaglia 1964), with the given sign."""
    while True:
        x = -math.log(uniform(rng)) / _R
        y = -math.log(uniform(rng))
        if y + y >= x * x:
            break
    return -(_R + x) if negative else _R + x


@njit(cache=True)
def standard_normal_nb(rng):
    """One exact N(0, 1) draw (ziggurat; see the module docstring)."""
    xs = _X
    ratio = _RATIO
    while True:
        bits = np.int64(uniform(rng) * _TWO_53)
        i = bits & _INDEX_MASK
        u = ((bits >> _BITS_PER_INDEX) + 0.5) * _ABSCISSA_SCALE - 1.0  # in (-1, 1)
        if abs(u) < ratio[i]:
            return u * xs[i]
        if i == 0:
            return _normal_tail(rng, u < 0.0)
        x = u * xs[i]
        f0 = math.exp(-0.5 * (xs[i] * xs[i] - x * x))
        f1 = math.exp(-0.5 * (xs[i + 1] * xs[i + 1] - x * x))
        if f1 + uniform(rng) * (f0 - f1) < 1.0:
            return x


@njit(cache=True)
def marsaglia_tsang_constants(shape):
    """``(d, c)`` of Marsaglia and Tsang's method for ``shape >= 1``: ``d = shape - 1/3``,
    ``c = 1 / sqrt(9 d)``."""
    d = shape - 1.0 / 3.0
    return d, 1.0 / math.sqrt(9.0 * d)


@njit(cache=True)
def _marsaglia_tsang(rng, d, c):
    """Marsaglia and Tsang (2000): a transformed normal, accepted by a squeeze or its log test."""
    while True:
        while True:
            x = standard_normal_nb(rng)
            v = 1.0 + c * x
            if v > 0.0:
                break
        v = v * v * v
        u = uniform(rng)
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2:
            return d * v
        if math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d * v


@njit(cache=True)
def _standard_gamma_at_least_one(rng, shape):
    d, c = marsaglia_tsang_constants(shape)
    return _marsaglia_tsang(rng, d, c)


@njit(cache=True)
def standard_gamma_nb(rng, shape):
    """One exact Gamma(shape, 1) draw, ``shape > 0``.

    Below shape 1 the power ``U**(1/shape)`` can underflow to 0 although the variate is
    positive (with shape 0.01, about once in a thousand draws); a caller that needs ``log X``
    or a positive floor forms ``standard_gamma_nb(shape + 1)`` and ``log(U) / shape`` itself,
    as :func:`gamma_rate_nb` does.

    A shape that is NaN or not positive gives NaN, for the caller to refuse: on a NaN shape,
    or one that makes ``d = shape - 1/3`` negative, every candidate of Marsaglia and Tsang's
    loop is NaN and the loop never ends.
    """
    if not shape > 0.0:
        return math.nan
    if shape >= 1.0:
        return _standard_gamma_at_least_one(rng, shape)
    return _standard_gamma_at_least_one(rng, shape + 1.0) * math.exp(
        math.log(uniform(rng)) / shape)


#: smallest positive normal double: the floor of every Gamma draw (see :func:`gamma_rate_nb`)
TINY = float(np.finfo(np.float64).tiny)

#: above this ``log(U) / shape`` the power is formed directly (``exp`` is far from underflow)
_LOG_POWER_LINEAR = -600.0


@njit(cache=True)
def gamma_rate_nb(rng, shape, rate):
    """One Gamma(shape, rate) draw (mean ``shape / rate``), never below :data:`TINY`.

    Variates from :func:`lpp.distributions.standard_gamma_nb` (ziggurat normal inside Marsaglia
    and Tsang). For ``shape < 1`` the draw is ``Gamma(shape + 1) * U**(1/shape)``; when the
    power would underflow it is formed in log space, since the variate itself usually does not
    (with shape 0.01 a plain draw is 0.0 about once in a thousand), and a zero factor would make
    rates, allocation probabilities and the log prior degenerate. The result is floored at the
    smallest normal double; the floor moves only the mass below 2.2e-308, i.e. probability
    about ``(2.2e-308 * rate)**shape``. A NaN or non-positive shape or rate gives NaN.
    """
    if not (shape > 0.0 and rate > 0.0):
        return math.nan
    if shape >= 1.0:
        x = standard_gamma_nb(rng, shape) / rate
        if x < TINY:
            return TINY
        return x
    d, c = marsaglia_tsang_constants(shape + 1.0)
    return gamma_rate_below_one_nb(rng, shape, d, c, rate)


@njit(cache=True)
def gamma_rate_below_one_nb(rng, shape, d, c, rate):
    """:func:`gamma_rate_nb` for ``0 < shape < 1`` given ``(d, c) =
    marsaglia_tsang_constants(shape + 1)``: the same draw, for kernels that draw many variates
    of one small shape and form the constants once. NaN for a rate that is NaN or not
    positive."""
    if not rate > 0.0:
        return math.nan
    g = _marsaglia_tsang(rng, d, c)
    log_power = math.log(uniform(rng)) / shape
    if log_power > _LOG_POWER_LINEAR:
        x = g * math.exp(log_power) / rate
    else:
        x = math.exp(math.log(g) + log_power - math.log(rate))
    if x < TINY:
        return TINY
    return x


def gamma_rate_np(rng, shape, rate, size) -> np.ndarray:
    """NumPy twin of the kernels' Gamma(shape, rate) draw (log space below shape 1, floor TINY)."""
    if np.ndim(shape) == 0 and np.ndim(rate) == 0 and shape >= 1.0:
        return np.maximum(rng.gamma(shape, 1.0 / rate, size), TINY)
    shape = np.broadcast_to(np.asarray(shape, dtype=np.float64), size)
    rate = np.broadcast_to(np.asarray(rate, dtype=np.float64), size)
    out = np.empty(size)
    big = shape >= 1.0
    out[big] = rng.gamma(shape[big]) / rate[big]
    small = ~big
    if small.any():
        a = shape[small]
        with np.errstate(divide="ignore", under="ignore"):
            log_x = (np.log(rng.gamma(a + 1.0)) + np.log(rng.random(a.shape)) / a
                     - np.log(rate[small]))
            out[small] = np.exp(log_x)
    return np.maximum(out, TINY)
