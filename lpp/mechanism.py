"""The geometric mechanism: ``y~ = y + tau``, ``tau ~ 2Geo(alpha)``, ``alpha = exp(-epsilon/N)``.

``P(tau) = (1 - alpha)/(1 + alpha) alpha^|tau|`` gives (N, epsilon)-limited-precision local
privacy (Schein et al. 2019, Theorem 1; their Sec. 5.1 prints ``alpha = -exp(epsilon/N)``, a
typo).  Two samplers:

* **fast** (default): ``G1 - G2`` with G1, G2 iid numpy geometrics of success probability
  ``1 - alpha`` (numpy's geometric counts trials, support 1, 2, ...; the offsets cancel in the
  difference).  Floating point inside, like every numpy sampler: fine for simulation and
  research, **not** for a formal privacy claim (cf. Mironov 2012 on floating-point noise).
* **exact** (``exact=True``): the discrete Laplace sampler of Canonne, Kamath & Steinke
  (2020, Alg. 2) with ``Bernoulli(exp(-gamma))`` built from Bernoulli trials of rational
  probability: integer arithmetic only, no floating point touches the noise.  It needs
  ``epsilon/N`` as an exact rational, given as :class:`ExactAlpha` (``exact_alpha(eps, N)``).
  Its random bits come from ``rng``: ``None`` (the default) or ``rng="system"`` — the
  operating system's CSPRNG (``os.urandom``), which is what a deployment making a formal
  privacy claim should use — or a numpy Generator or int seed (reproducible, for simulation
  studies only: whoever holds the seed can regenerate the noise).  It runs in pure Python, about
  two orders of magnitude slower than the fast path (``python -m bench.mechanism``).

:class:`GeometricMechanism` holds one privacy level as an object: given ``epsilon`` and ``N``
once, it privatizes, gives the noise's log-pmf and the privatized count's likelihood, and is
what the fits (``lpp.inference.fit_private``, ``lpp.vi.fit_variational``) and the estimators
take wherever they take ``alpha``; a bare ``alpha`` is still accepted there and read by
:func:`alpha_of`.
"""
from __future__ import annotations

import numbers
import os
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from lpp.distributions.geometric import two_sided_geometric_logpmf
from lpp.distributions.privatized_poisson import privatized_poisson_logpmf
from lpp.randomness import as_generator
from lpp.validation import (broadcast_params, densify, finish, integer_array, noise_level_array,
                            real_array, size_shape)

__all__ = ["ExactAlpha", "exact_alpha", "alpha_from_epsilon", "epsilon_from_alpha",
           "sample_two_sided_geometric", "privatize", "truncate", "GeometricMechanism",
           "alpha_of"]

#: counts above this are refused (y + tau must not overflow int64)
_MAX_COUNT = 2**62
#: smallest privacy level epsilon/N: below it the noise's scale (about N/epsilon) leaves int64
#: (P(|tau| >= 2**62) = alpha**(2**62) < exp(-4600) at this level)
MIN_EPSILON_OVER_N = Fraction(1, 10**15)


def alpha_from_epsilon(epsilon, N):
    """``alpha = exp(-epsilon / N)`` (vectorised); epsilon > 0, N > 0, finite.

    Raises ``ValueError`` when the result rounds to 0 or 1 in double precision (then the
    mechanism is degenerate; use :func:`exact_alpha` and ``exact=True`` instead).
    """
    eps = real_array(epsilon, "epsilon", low=0.0, low_open=True)
    n = real_array(N, "N", low=0.0, low_open=True)
    (eps, n), shape = broadcast_params((eps, n), ("epsilon", "N"))
    alpha = np.exp(-eps / n)
    if np.any(alpha <= 0.0) or np.any(alpha >= 1.0):
        raise ValueError("epsilon/N is so large or small that alpha rounds to 0 or 1")
    return finish(alpha, shape)


def epsilon_from_alpha(alpha, N):
    """``epsilon = N log(1/alpha)`` (vectorised); 0 < alpha < 1, N > 0."""
    a = real_array(alpha, "alpha", low=0.0, low_open=True, high=1.0, high_open=True)
    n = real_array(N, "N", low=0.0, low_open=True)
    (a, n), shape = broadcast_params((a, n), ("alpha", "N"))
    return finish(-n * np.log(a), shape)


def _as_fraction(x, name):
    if isinstance(x, bool) or not isinstance(x, (numbers.Rational, float, Decimal, str,
                                                 np.integer, np.floating)):
        raise TypeError(f"{name} must be an int, Fraction, Decimal, str or float, got "
                        f"{type(x).__name__}")
    if isinstance(x, (float, np.floating, Decimal)) and not np.isfinite(float(x)):
        raise ValueError(f"{name} must be finite, got {x}")
    try:
        value = Fraction(int(x)) if isinstance(x, np.integer) else Fraction(
            float(x) if isinstance(x, np.floating) else x)
    except (ValueError, ZeroDivisionError) as err:
        raise ValueError(f"{name}={x!r} is not a rational number") from err
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


@dataclass(frozen=True)
class ExactAlpha:
    """``alpha = exp(-epsilon/N)`` represented exactly by the rational ``epsilon/N``.

    Build it with :func:`exact_alpha` (or ``ExactAlpha(Fraction(...))``).  ``float(a)``
    gives the (rounded) alpha, so an ExactAlpha also works on the fast path.
    """

    epsilon_over_n: Fraction

    def __post_init__(self):
        value = _as_fraction(self.epsilon_over_n, "epsilon_over_n")
        if value < MIN_EPSILON_OVER_N:
            raise ValueError(f"epsilon/N = {float(value):.3g} is below {float(MIN_EPSILON_OVER_N):g}: "
                             "the noise would not fit in 64-bit integers")
        object.__setattr__(self, "epsilon_over_n", value)

    def __float__(self) -> float:
        return float(np.exp(-float(self.epsilon_over_n)))


def exact_alpha(epsilon, N) -> ExactAlpha:
    """The exact ``alpha = exp(-epsilon/N)`` for the exact sampler.

    ``epsilon`` and ``N`` may be ints, ``Fraction``s, ``Decimal``s, strings such as ``"1/3"``
    or ``"0.5"`` (read exactly), or floats (taken at their exact binary value).
    """
    return ExactAlpha(_as_fraction(epsilon, "epsilon") / _as_fraction(N, "N"))


class _RandomBits:
    """Uniform random bits from a numpy Generator (reproducible) or the OS CSPRNG."""

    _CHUNK = 8192  # bytes per refill

    def __init__(self, rng):
        if isinstance(rng, str):
            if rng != "system":
                raise ValueError(f"rng must be a Generator, an int seed, None or 'system', "
                                 f"got {rng!r}")
            self._fill = lambda: os.urandom(self._CHUNK)
        else:
            gen = as_generator(rng)
            self._fill = lambda: gen.bytes(self._CHUNK)
        self._words = []
        self._word = 0
        self._left = 0

    def _take(self, k):
        out = 0
        got = 0
        while got < k:
            if self._left == 0:
                if not self._words:
                    self._words = np.frombuffer(self._fill(), dtype="<u8").tolist()[::-1]
                self._word = self._words.pop()
                self._left = 64
            use = min(k - got, self._left)
            out |= (self._word & ((1 << use) - 1)) << got
            self._word >>= use
            self._left -= use
            got += use
        return out

    def below(self, n):
        """Uniform integer in ``[0, n)`` (rejection on ``bit_length(n - 1)`` bits)."""
        if n == 1:
            return 0
        k = (n - 1).bit_length()
        while True:
            r = self._take(k)
            if r < n:
                return r

    def bernoulli(self, num, den):
        """Bernoulli(num/den) for integers ``0 <= num <= den``."""
        return self.below(den) < num

    def bernoulli_exp(self, num, den):
        """Bernoulli(exp(-num/den)) for ``0 <= num/den``, exactly (CKS20, Alg. 1)."""
        while num > den:  # exp(-g) = exp(-1)^floor(g) exp(-(g - floor g))
            if not self._bernoulli_exp_unit(1, 1):
                return False
            num -= den
        return self._bernoulli_exp_unit(num, den)

    def _bernoulli_exp_unit(self, num, den):  # 0 <= num/den <= 1
        k = 1
        while self.bernoulli(num, den * k):
            k += 1
        return k % 2 == 1

    def discrete_laplace(self, s, t):
        """Y with ``P(Y = y) ∝ exp(-|y| s / t)`` (CKS20, Alg. 2), integers s, t >= 1."""
        while True:
            u = self.below(t)
            if not self.bernoulli_exp(u, t):
                continue
            v = 0
            while self.bernoulli_exp(1, 1):
                v += 1
            y = (u + t * v) // s
            negative = self.bernoulli(1, 2)
            if negative and y == 0:
                continue
            return -y if negative else y


def _exact_alphas(alpha):
    """Object array of ExactAlpha (a scalar becomes a 0-d array)."""
    if isinstance(alpha, ExactAlpha):
        out = np.empty((), dtype=object)
        out[()] = alpha
        return out
    arr = np.asarray(alpha, dtype=object)
    if arr.size == 0:
        raise ValueError("alpha is empty")
    for a in arr.flat:
        if not isinstance(a, ExactAlpha):
            raise TypeError("exact=True needs alpha as ExactAlpha (build it with "
                            f"exact_alpha(epsilon, N)), got {type(a).__name__}")
    return arr


def _float_alphas(alpha):
    if isinstance(alpha, ExactAlpha):
        return np.asarray(float(alpha))
    arr = np.asarray(alpha)
    if arr.dtype == object:
        arr = np.vectorize(float, otypes=[np.float64])(arr) if arr.size else arr
    if arr.size == 0:
        raise ValueError("alpha is empty")
    return noise_level_array(arr)


def sample_two_sided_geometric(alpha, size=None, rng=None, exact=False):
    """Draws of ``tau ~ 2Geo(alpha)``: ``P(tau) = (1 - alpha)/(1 + alpha) alpha^|tau|``, int64.

    ``alpha`` is a scalar or array broadcast against ``size`` (numpy semantics).  The fast
    path (default) takes floats in (0, 1) and a Generator / int seed / None.  ``exact=True``
    takes :class:`ExactAlpha` values (``exact_alpha(epsilon, N)``) and reads the operating
    system's CSPRNG when ``rng`` is None or ``"system"`` (use it for a formal privacy claim),
    a reproducible stream for a Generator or int seed.
    """
    if not exact:
        if isinstance(rng, str):
            raise ValueError("rng='system' is only for exact=True (the fast path uses numpy)")
        (a,), shape = broadcast_params((_float_alphas(alpha),), ("alpha",), size=size)
        gen = as_generator(rng)
        p = 1.0 - a  # numpy's geometric: P(G = g) = (1 - p)^(g - 1) p, g >= 1
        tau = gen.geometric(p) - gen.geometric(p)
        return finish(tau.astype(np.int64), shape)
    arr = _exact_alphas(alpha)
    size = None if size is None else size_shape(size)
    try:
        shape = arr.shape if size is None else np.broadcast_shapes(arr.shape, size)
        if size is not None and shape != size:
            raise ValueError
    except ValueError:
        raise ValueError(f"alpha of shape {arr.shape} does not broadcast to size {size}") \
            from None
    flat = np.broadcast_to(arr, shape).ravel()
    bits = _RandomBits("system" if rng is None else rng)
    out = np.empty(flat.size, dtype=np.int64)
    for i, a in enumerate(flat):
        ratio = a.epsilon_over_n
        out[i] = bits.discrete_laplace(ratio.numerator, ratio.denominator)
    return finish(out, shape)


def _as_counts(y):
    counts = integer_array(densify(y), "y")  # scipy.sparse densified: the noise is dense anyway
    if np.any(counts < 0):
        raise ValueError("y must hold non-negative counts")
    if np.any(counts > _MAX_COUNT):
        raise ValueError(f"counts above {_MAX_COUNT} are not supported")
    return counts


def privatize(y, alpha, rng=None, exact=None):
    """The geometric mechanism: ``y + tau`` with independent ``tau ~ 2Geo(alpha)``, int64.

    ``y`` holds non-negative integer counts: an integer array, a float array of whole
    numbers, or a scipy.sparse matrix (densified: the privatized data are dense).  Booleans
    are refused (cast them explicitly).  ``alpha`` is a scalar or broadcasts *to* ``y.shape``:
    per entry (same shape), per row of a matrix (``alpha[:, None]``), per column (shape
    ``(V,)``).  With ``exact=True`` alpha must be :class:`ExactAlpha`; see
    :func:`sample_two_sided_geometric` for ``rng`` and the exactness trade-off.

    A ``numpy.ma`` masked array keeps its mask (True = missing, as everywhere in lpp): only
    its unmasked entries are noised (one draw each, in row-major order) and the result is a
    masked array with the same mask, whose masked entries hold 0 — never the value that was
    under the mask, which is not released. Masked entries are not checked.

    ``alpha`` may also be a :class:`GeometricMechanism`: its level, and its ``exact`` unless
    ``exact`` is given (None, the default, means False for a bare ``alpha``).
    """
    if isinstance(alpha, GeometricMechanism):
        exact = alpha.exact if exact is None else exact
        alpha = alpha.level
    exact = bool(exact)
    if isinstance(y, np.ma.MaskedArray):
        return _privatize_masked(y, alpha, rng, exact)
    counts = _as_counts(y)
    _check_alpha_shape(alpha, counts.shape)
    tau = sample_two_sided_geometric(alpha, size=counts.shape, rng=rng, exact=exact)
    return np.asarray(counts + tau, dtype=np.int64)


def _check_alpha_shape(alpha, shape):
    alpha_shape = np.shape(alpha) if not isinstance(alpha, ExactAlpha) else ()
    try:
        ok = np.broadcast_shapes(alpha_shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        hint = " (for one alpha per row use alpha[:, None])" if len(alpha_shape) == 1 else ""
        raise ValueError(f"alpha of shape {alpha_shape} does not broadcast to y's shape "
                         f"{shape}{hint}")


def _privatize_masked(y, alpha, rng, exact):
    missing = np.ma.getmaskarray(y)
    counts = _as_counts(y.filled(0))  # what lies under the mask is neither read nor released
    _check_alpha_shape(alpha, counts.shape)
    observed = ~missing
    out = np.zeros(counts.shape, dtype=np.int64)
    if observed.any():
        if isinstance(alpha, ExactAlpha) or np.ndim(alpha) == 0:
            per_entry = alpha
        else:
            per_entry = np.broadcast_to(np.asarray(alpha, dtype=object if exact else None),
                                        counts.shape)[observed]
        out[observed] = counts[observed] + sample_two_sided_geometric(
            per_entry, size=int(observed.sum()), rng=rng, exact=exact)
    return np.ma.MaskedArray(out, mask=missing.copy())


def truncate(y_tilde):
    """``max(y~, 0)`` entrywise, int64: the naive baseline's truncated geometric mechanism."""
    return np.maximum(integer_array(densify(y_tilde), "y_tilde"), 0)


def _exact_levels(epsilon, N):
    """ExactAlpha of ``epsilon / N`` (rationals), a scalar or an object array broadcast."""
    if np.ndim(epsilon) == 0 and np.ndim(N) == 0:
        return exact_alpha(_scalar(epsilon), _scalar(N))
    eps, n = np.broadcast_arrays(np.asarray(epsilon, dtype=object), np.asarray(N, dtype=object))
    out = np.empty(eps.shape, dtype=object)
    for index in np.ndindex(eps.shape):
        out[index] = exact_alpha(eps[index], n[index])
    return out


def _scalar(x):
    return x.item() if isinstance(x, np.ndarray) else x


class GeometricMechanism:
    """The geometric mechanism at a privacy level: ``y~ = y + tau``, ``tau ~ 2Geo(alpha)``.

    One object for one level of (N, epsilon)-limited-precision local privacy, given as the
    numbers a privacy analysis speaks in, ``epsilon`` and ``N``, once: it privatizes, it
    gives the noise's log-pmf and the privatized count's likelihood, and the fits and
    estimators take it wherever they take ``alpha``.

    Every parameter is named (``epsilon=`` or ``alpha=``): the two are easy to mistake for
    each other, and a number in the wrong place would be a silently wrong privacy level.

    Parameters
    ----------
    epsilon : float or array_like, optional
        The privacy budget, > 0: one number, or one per row (shape ``(D, 1)``) or per entry,
        for people who chose different levels.
    N : float or array_like, default=1
        The precision: counts that differ by at most ``N`` are protected at ``epsilon``.
    alpha : float, array_like or ExactAlpha, optional
        The noise level ``exp(-epsilon / N)`` in (0, 1) itself, instead of ``epsilon``
        (for those who have it; give one of the two).
    exact : bool, default=False
        Draw the noise with the integer-only sampler (:func:`privatize`'s ``exact=True``):
        ``epsilon`` and ``N`` are then read as exact rationals (ints, ``Fraction``, strings
        such as ``"1/3"``, floats at their binary value), or ``alpha`` must be an
        :class:`ExactAlpha`.

    Attributes
    ----------
    level : float, ndarray or ExactAlpha
        ``alpha = exp(-epsilon / N)``: what the sampler and the likelihood read (an
        :class:`ExactAlpha`, or an object array of them, when ``exact``).
    epsilon_over_n : float or ndarray
        ``epsilon / N`` (``log(1 / alpha)``), the level's cost for one unit of a count.

    Examples
    --------
    >>> from lpp.mechanism import GeometricMechanism
    >>> mechanism = GeometricMechanism(epsilon=1.0, N=2)
    >>> round(mechanism.level, 4), mechanism.epsilon_over_n
    (0.6065, 0.5)
    >>> mechanism.privatize([[0, 3], [1, 0]], rng=0).dtype
    dtype('int64')
    """

    def __init__(self, *, epsilon=None, N=1, alpha=None, exact=False):
        self.epsilon = epsilon
        self.N = N
        self.alpha = alpha
        self.exact = exact
        self.level  # a wrong setting fails here, where it was written

    @property
    def level(self):
        if not isinstance(self.exact, (bool, np.bool_)):
            raise TypeError(f"exact must be True or False, got {self.exact!r}")
        if self.alpha is not None and self.epsilon is not None:
            raise ValueError("give epsilon (with N) or alpha, not both: alpha = exp(-epsilon / N)")
        if self.alpha is None and self.epsilon is None:
            raise ValueError("epsilon is required: the privacy budget, > 0 (or alpha, the noise "
                             "level exp(-epsilon / N) in (0, 1))")
        if self.alpha is not None:
            if self.exact:
                _exact_alphas(self.alpha)  # TypeError unless ExactAlpha values
                return self.alpha
            if isinstance(self.alpha, ExactAlpha):
                return self.alpha
            return _plain(noise_level_array(self.alpha))
        if self.exact:
            return _exact_levels(self.epsilon, self.N)
        return _plain(noise_level_array(alpha_from_epsilon(self.epsilon, self.N)))

    @property
    def epsilon_over_n(self):
        level = self.level
        if self.epsilon is not None and not self.exact:  # as given, not through exp and log
            return _plain(np.asarray(real_array(self.epsilon, "epsilon")
                                     / real_array(self.N, "N"), dtype=np.float64))
        if isinstance(level, ExactAlpha):
            return float(level.epsilon_over_n)
        if isinstance(level, np.ndarray) and level.dtype == object:
            return np.vectorize(lambda a: float(a.epsilon_over_n), otypes=[np.float64])(level)
        return _plain(-np.log(level))

    def privatize(self, y, rng=None):
        """``y + tau``, int64: :func:`privatize` at this level (see it for ``y`` and ``rng``)."""
        return privatize(y, self.level, rng=rng, exact=self.exact)

    def sample_noise(self, size=None, rng=None):
        """Draws of the noise ``tau`` (:func:`sample_two_sided_geometric` at this level)."""
        return sample_two_sided_geometric(self.level, size=size, rng=rng, exact=self.exact)

    def noise_logpmf(self, tau):
        """``log P(tau)`` of the noise, ``log((1 - alpha)/(1 + alpha)) + |tau| log(alpha)``."""
        return two_sided_geometric_logpmf(tau, _float_alphas(self.level))

    def privatized_logpmf(self, y_tilde, mu):
        """``log P(y~ | mu)``: a privatized count whose true count is ``Pois(mu)``, entrywise
        (the noise summed out in closed form; one level for every entry)."""
        level = _float_alphas(self.level)
        if level.ndim:
            raise ValueError("privatized_logpmf takes one noise level for every entry")
        y_tilde, mu = np.broadcast_arrays(integer_array(y_tilde, "y_tilde"),
                                          real_array(mu, "mu", low=0.0))
        return privatized_poisson_logpmf(y_tilde, mu, float(level))

    def __repr__(self):
        given = ([f"epsilon={self.epsilon!r}", f"N={self.N!r}"] if self.alpha is None
                 else [f"alpha={self.alpha!r}"])
        if self.exact:
            given.append("exact=True")
        return f"{type(self).__name__}({', '.join(given)})"


def _plain(level: np.ndarray):
    """A 0-d level as a Python float, any other as the array."""
    return float(level) if level.ndim == 0 else level


def alpha_of(mechanism_or_alpha):
    """The noise level ``alpha`` as the likelihood reads it (floats): a mechanism's level, an
    :class:`ExactAlpha`'s value, or a bare ``alpha`` as it was given (None stays None)."""
    if isinstance(mechanism_or_alpha, GeometricMechanism):
        level = mechanism_or_alpha.level
        return _plain(_float_alphas(level))
    if isinstance(mechanism_or_alpha, ExactAlpha):
        return float(mechanism_or_alpha)
    return mechanism_or_alpha
