"""The scalar functions every thread of the GPU engine calls: a counter-based generator and the
exact samplers built on it.

They are written once, as plain Python, and compiled for a target by :func:`build_functions`:
``numba.cuda.jit(device=True)`` for the GPU (or numba-cuda's simulator), ``numba.njit`` for the
CPU, where the tests check them against exact distributions in milliseconds.

Random numbers come from **Philox4x32-10** (Salmon et al., SC 2011): a keyed bijection of a
128-bit counter. A draw is named by ``(key, item, iteration, index)``: the key is a phase's
63-bit seed (:func:`lpp.randomness.derive_seed`), ``item`` the entry, row or cell the thread
works on, ``index`` the draw's place in that item's sequence. Nothing depends on which thread
or block runs the item, so the result is the same for every launch configuration. All
arithmetic is on 64-bit unsigned words holding 32-bit values: it never overflows, so the same
code runs unchanged in the simulator (where numpy warns on overflow).

Large counts are split by ``binomial`` (the CPU's method, :mod:`lpp.distributions.binomial`:
inversion for a small mean, order-statistic splits on two Gamma draws above), whose cost does
not grow with the number of trials, and ``split_bulk`` (conditional binomials over topics).
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from lpp.distributions import TINY
from lpp.distributions.poisson import MAX_MEAN

__all__ = ["BULK_COUNT", "INVERSION_MEAN", "MAX_MEAN", "SERIES_TOL", "TINY", "build_functions",
           "philox_reference"]

_MASK32 = np.uint64(0xFFFFFFFF)
_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)
_S32 = np.uint64(32)
_S6 = np.uint64(6)
_S26 = np.uint64(26)
_TWO52_INV = 1.0 / 4503599627370496.0

#: a series is summed until what it leaves out is below this fraction of its total
SERIES_TOL = 1e-17
#: below this a weight total is treated as underflowed and the weights are redone in log space
#: (:mod:`lpp.inference.engines.cuda.kernels`)
UNDERFLOW = 1e-280
#: counts up to this are split over topics token by token (a uniform each); larger ones by
#: conditional binomials, whose cost does not grow with the count. The CPU engine's threshold
#: (:data:`lpp.distributions.LARGE_COUNT`): far above the counts of the shipped data sets, whose
#: draws are therefore token by token
BULK_COUNT = 8192
#: a binomial draw whose rarer outcome has a mean below this is made by inversion (as the CPU's
#: :data:`lpp.distributions.binomial.INVERSION_MEAN`)
INVERSION_MEAN = 16.0


def build_functions(jit):
    """The device functions compiled with ``jit``, as a namespace.

    ``jit`` is ``numba.cuda.jit(device=True)`` or ``numba.njit``. Every function that draws
    takes the stream as ``(k0, k1, item, iteration, index)`` and returns the next ``index``
    beside its result.
    """

    @jit
    def philox(k0, k1, c0, c1, c2, c3):
        """Philox4x32-10 of the counter ``(c0, c1, c2, c3)`` under the key ``(k0, k1)``."""
        for r in range(10):
            if r > 0:
                k0 = (k0 + _W0) & _MASK32
                k1 = (k1 + _W1) & _MASK32
            p0 = _M0 * c0
            p1 = _M1 * c2
            n0 = (p1 >> _S32) ^ c1 ^ k0
            n2 = (p0 >> _S32) ^ c3 ^ k1
            c0, c1, c2, c3 = n0, p1 & _MASK32, n2, p0 & _MASK32
        return c0, c1, c2, c3

    @jit
    def uniform(k0, k1, item, iteration, index):
        """A double in (0, 1) with 52 random bits, ``(m + 1/2) / 2**52``: draw ``index`` of
        ``item`` at ``iteration``. (With 53 bits the largest value would round to 1.)"""
        it = np.uint64(item)
        x0, x1, _, _ = philox(k0, k1, it & _MASK32, it >> _S32, np.uint64(iteration),
                              np.uint64(index))
        m = ((x0 >> _S6) << _S26) | (x1 >> _S6)
        return (np.float64(m) + 0.5) * _TWO52_INV

    @jit
    def ratio(y, y_tilde, lam_low, lam_high):
        """``w_y / w_(y-1)`` of the two-piece weights (see :func:`two_piece`)."""
        if y <= y_tilde:
            return lam_low / y
        return lam_high / y

    @jit
    def two_piece(y_tilde, lam_low, lam_high, k0, k1, item, iteration, index):
        """One exact draw from ``w_y = lam_low**y / y!`` for ``y <= y_tilde`` and
        ``(lam_low / lam_high)**y_tilde lam_high**y / y!`` beyond (``lam_low >= lam_high``).

        With ``lam_low = mu / alpha`` and ``lam_high = alpha mu`` this is the collapsed privacy
        step's conditional ``P(y | y_tilde, mu) ∝ Pois(y; mu) alpha**|y_tilde - y|``; with
        ``y_tilde <= 0`` it is ``Pois(lam_high)``. The weights are log-concave (their ratios
        fall with y), so they are summed outward from the mode, each side until a geometric
        bound puts what is left below :data:`SERIES_TOL` of the total, and one uniform is
        located by inversion over that range. The cost is O(sqrt(mode)); no special function
        is called. Returns ``(y, index)``; y is -1 for a rate that is NaN or above
        :data:`MAX_MEAN`.
        """
        if not lam_low <= MAX_MEAN or not lam_high <= MAX_MEAN:
            return -1, index
        if lam_high <= 0.0:
            return 0, index
        if lam_low < 1.0:
            # every ratio w_y / w_(y-1) is at most lam_low, so the total is below
            # 1 / (1 - lam_low): a uniform below 1 - lam_low is located in w_0 whatever the
            # total (the same uniform and the same draw as the full inversion below; the
            # common case of noise entries, decided without a series)
            u = uniform(k0, k1, item, iteration, index)
            if u < 1.0 - lam_low:
                return 0, index + 1
        y_tilde = max(y_tilde, 0)
        if y_tilde >= 1 and math.floor(lam_low) < y_tilde:
            mode = int(math.floor(lam_low))
        else:
            mode = max(y_tilde, int(math.floor(lam_high)))
        # weights scaled so that w_mode = 1
        total = 1.0
        t = 1.0
        hi = mode
        while True:
            r = ratio(hi + 1, y_tilde, lam_low, lam_high)
            if t * r <= 0.0:
                break
            if r < 1.0 and t * r <= SERIES_TOL * total * (1.0 - r):
                break
            hi += 1
            t *= r
            total += t
        t = 1.0
        lo = mode
        while lo > 0:
            q = lo / (lam_low if lo <= y_tilde else lam_high)  # w_(lo-1) / w_lo
            if t * q <= 0.0:
                break
            if q < 1.0 and t * q <= SERIES_TOL * total * (1.0 - q):
                break
            lo -= 1
            t *= q
            total += t
        u = uniform(k0, k1, item, iteration, index)
        target = u * total
        acc = t  # w_lo
        y = lo
        while acc <= target and y < hi:
            y += 1
            t *= ratio(y, y_tilde, lam_low, lam_high)
            acc += t
        return y, index + 1

    @jit
    def standard_normal(k0, k1, item, iteration, index):
        """Box-Muller from two uniforms (the cosine branch only)."""
        u1 = uniform(k0, k1, item, iteration, index)
        u2 = uniform(k0, k1, item, iteration, index + 1)
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2), index + 2

    @jit
    def standard_gamma_at_least_one(shape, k0, k1, item, iteration, index):
        """Marsaglia and Tsang (2000) for ``shape >= 1``."""
        d = shape - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * d)
        while True:
            x, index = standard_normal(k0, k1, item, iteration, index)
            v = 1.0 + c * x
            if v <= 0.0:
                continue
            v = v * v * v
            u = uniform(k0, k1, item, iteration, index)
            index += 1
            if u < 1.0 - 0.0331 * (x * x) * (x * x):
                return d * v, index
            if math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
                return d * v, index

    @jit
    def gamma_rate(shape, rate, k0, k1, item, iteration, index):
        """One ``Gamma(shape, rate)`` draw, floored at :data:`TINY` (as the CPU sampler,
        :func:`lpp.distributions.gamma_rate_nb`); NaN for a non-positive shape or rate."""
        if not (shape > 0.0 and rate > 0.0):
            return math.nan, index
        if shape >= 1.0:
            g, index = standard_gamma_at_least_one(shape, k0, k1, item, iteration, index)
            x = g / rate
        else:
            g, index = standard_gamma_at_least_one(shape + 1.0, k0, k1, item, iteration, index)
            u = uniform(k0, k1, item, iteration, index)
            index += 1
            x = math.exp(math.log(g) + math.log(u) / shape - math.log(rate))
        if x < TINY:
            x = TINY
        return x, index

    @jit
    def pick(cum, total, u):
        """The first ``k`` with ``cum[k] > u * total`` (binary search)."""
        target = u * total
        lo = 0
        hi = cum.size - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if cum[mid] > target:
                hi = mid
            else:
                lo = mid + 1
        return lo

    @jit
    def split_count(count, cum, total, hits, k0, k1, item, iteration, index):
        """``hits[k]``: ``count`` tokens split over topics with probabilities ``cum``'s
        increments over ``total`` (one uniform and a binary search per token)."""
        for k in range(hits.size):
            hits[k] = 0
        for _ in range(count):
            u = uniform(k0, k1, item, iteration, index)
            index += 1
            hits[pick(cum, total, u)] += 1
        return index

    @jit
    def binomial_inversion(n, p, k0, k1, item, iteration, index):
        """``Binom(n, p)`` for ``p <= 1/2`` and ``n p`` below :data:`INVERSION_MEAN`: one
        uniform against the pmf's running sum, each term from the last by
        ``(n - k) / (k + 1) * p / (1 - p)`` (about ``n p`` steps)."""
        ratio = p / (1.0 - p)
        term = math.exp(n * math.log1p(-p))  # at least exp(-2 INVERSION_MEAN): no underflow
        acc = term
        u = uniform(k0, k1, item, iteration, index)
        k = 0
        # stops where the pmf vanishes, should rounding leave the sum just below u
        while acc <= u and term > 0.0 and k < n:
            term *= (n - k) / (k + 1.0) * ratio
            k += 1
            acc += term
        return k, index + 1

    @jit
    def binomial(n, p, k0, k1, item, iteration, index):
        """One exact ``Binom(n, p)`` draw (``n >= 0``), in ``O(log n)`` expected work at any
        ``n``: the CPU's method (:func:`lpp.distributions.binomial.binomial_nb`) on this
        stream.

        With ``m = n min(p, 1 - p)`` below :data:`INVERSION_MEAN`, by inversion; above, by
        splitting at an order statistic (Knuth, TAOCP vol. 2, 3.4.1; Devroye 1986, X.4): the
        ``i``-th smallest of ``n`` uniforms is ``X ~ Beta(i, n + 1 - i)``, drawn as
        ``G1 / (G1 + G2)`` from two Gamma variates; if ``X > p`` the count is
        ``Binom(i - 1, p / X)``, else ``i + Binom(n - i, (p - X) / (1 - X))``. With ``i`` near
        ``n p`` each step shrinks the trials by a factor of about ``sqrt(n p)``. Returns
        ``(k, index)``; k is -1 for a NaN ``p``.
        """
        if not p == p:
            return -1, index
        n = np.int64(n)
        # the draw is base + sign * Binom(n, p); Binom(n, p) = n - Binom(n, 1 - p) keeps p <= 1/2
        base = np.int64(0)
        sign = np.int64(1)
        while True:
            if n <= 0 or p <= 0.0:
                return base, index
            if p >= 1.0:
                return base + sign * n, index
            if p > 0.5:
                base += sign * n
                sign = -sign
                p = 1.0 - p
            if n * p < INVERSION_MEAN:
                k, index = binomial_inversion(n, p, k0, k1, item, iteration, index)
                return base + sign * k, index
            i = int(n * p) + 1  # 1 <= i <= n, as n p <= n / 2 and n p >= INVERSION_MEAN
            g1, index = standard_gamma_at_least_one(float(i), k0, k1, item, iteration, index)
            g2, index = standard_gamma_at_least_one(float(n + 1 - i), k0, k1, item, iteration,
                                                    index)
            x = g1 / (g1 + g2)
            if x > p:
                n = i - 1
                p = p / x
            else:
                base += sign * i
                n -= i
                p = (p - x) / (1.0 - x)

    @jit
    def split_bulk(count, cum, hits, k0, k1, item, iteration, index):
        """``hits[k]``: ``count`` tokens split over topics with probabilities ``cum``'s
        increments over its last value (the law of :func:`split_count`), by conditional
        binomials from the last topic down: ``hits[k] ~ Binom(left, w_k / cum[k])``, where
        ``left`` is what the topics above k did not take. ``O(K log count)`` whatever the count.

        From the top down each denominator is a prefix sum itself, not a difference of sums
        that would lose digits; the lowest topic of positive weight has ``cum[k] == w_k``
        exactly (its prefix below is exactly 0), so it takes what is left."""
        for k in range(hits.size):
            hits[k] = 0
        left = np.int64(count)
        k = hits.size - 1
        while k > 0 and left > 0:
            upto = cum[k]
            w = upto - cum[k - 1]
            if w > 0.0:
                c, index = binomial(left, w / upto, k0, k1, item, iteration, index)
                if c < 0:  # a NaN weight: nothing sensible to split by; the rest goes below
                    c = 0
                hits[k] = c
                left -= c
            k -= 1
        hits[0] += left
        return index

    return SimpleNamespace(
        philox=philox, uniform=uniform, two_piece=two_piece, standard_normal=standard_normal,
        gamma_rate=gamma_rate, pick=pick, split_count=split_count, binomial=binomial,
        split_bulk=split_bulk)


def philox_reference(key: tuple[int, int], counter: tuple[int, int, int, int]):
    """Philox4x32-10 in plain Python integers, written from the paper's description: the
    reference the compiled generator is tested against, beside the published answers."""
    k0, k1 = key
    c0, c1, c2, c3 = counter
    mask = 0xFFFFFFFF
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & mask, (k1 + 0xBB67AE85) & mask
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (p1 >> 32) ^ c1 ^ k0, p1 & mask, (p0 >> 32) ^ c3 ^ k1, p0 & mask
    return c0, c1, c2, c3
