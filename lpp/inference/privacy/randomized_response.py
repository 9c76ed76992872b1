"""k-ary randomized response on clipped counts: a second mechanism, in one module.

Each count is clipped to ``c = min(y, M)`` and reported as ``c`` with probability
``e**epsilon / (e**epsilon + M)``, or as any one of the other ``M`` values of ``{0, ..., M}``
with probability ``1 / (e**epsilon + M)`` each (k-ary randomized response with ``k = M + 1``).
The ratio of the probabilities of a report under any two counts is at most ``e**epsilon``, so
it is epsilon-local privacy for every pair of counts, where the geometric mechanism protects
counts that differ by at most N; it pays for that with the clipping (counts above ``M`` look
like ``M``) and a report that carries no magnitude beyond ``M``. The report probabilities are
floats, so the guarantee holds up to their rounding (relative 1e-16).

Given the rates ``mu``, the true count's complete conditional is

    P(y | y_tilde, mu)  ∝  Pois(y; mu) * (q + (p - q) * [min(y, M) = y_tilde]),

with ``p`` and ``q`` the two report probabilities: a mixture of a plain ``Pois(mu)`` draw
(weight ``q``) and, with weight ``(p - q) * Pois(y_tilde; mu)``, the count ``y_tilde`` itself
when ``y_tilde < M``, or, with weight ``(p - q) * P(Pois(mu) >= M)``, a ``Pois(mu)`` draw
truncated to ``{M, M + 1, ...}`` when ``y_tilde = M``. :class:`RandomizedResponseStep` draws
from it exactly (method ``"exact"``); the naive method fits the reports as if they were the
counts.

Everything the chain needs is here, registered at the bottom
(:func:`lpp.inference.privacy.register_mechanism`): the mechanism, its noise model and its
step. It is also the worked example of how a mechanism plugs in.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from lpp.inference.privacy.mechanisms import register_mechanism
from lpp.inference.privacy.steps import NaivePrivacy, PrivacyStep
from lpp.randomness import Tag, as_generator, derive_seed
from lpp.validation import count_array


class RandomizedResponse:
    """k-ary randomized response on counts clipped to ``{0, ..., M}``, at privacy ``epsilon``.

    Parameters
    ----------
    epsilon : float
        The privacy budget, > 0: for any two counts, a report is at most ``e**epsilon`` times
        as likely under one as under the other.
    M : int
        The largest count reported, >= 1 (larger counts are reported as ``M``).

    Examples
    --------
    >>> from lpp.inference.privacy import RandomizedResponse
    >>> mechanism = RandomizedResponse(epsilon=2.0, M=4)
    >>> round(mechanism.report_probabilities[0], 4)
    0.6488
    >>> mechanism.privatize([[0, 7], [2, 1]], rng=0).max() <= 4
    np.True_
    """

    def __init__(self, epsilon: float, M: int):
        if not (isinstance(epsilon, (int, float, np.integer, np.floating))
                and math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
        if isinstance(M, (bool, np.bool_)) or not isinstance(M, (int, np.integer)) or M < 1:
            raise ValueError(f"M must be a whole number >= 1 (the largest count reported), "
                             f"got {M!r}")
        self.epsilon, self.M = float(epsilon), int(M)

    @property
    def report_probabilities(self) -> tuple[float, float]:
        """``(p, q)``: the probability of reporting the clipped count, and of each other
        value."""
        log_p, log_q = self._log_report_probabilities()
        return math.exp(log_p), math.exp(log_q)

    def _log_report_probabilities(self) -> tuple[float, float]:
        # e**epsilon / (e**epsilon + M) and 1 / (e**epsilon + M), divided through by
        # e**epsilon so that a large epsilon does not overflow
        log_p = -math.log1p(self.M * math.exp(-self.epsilon))
        return log_p, log_p - self.epsilon

    def privatize(self, y, rng=None) -> np.ndarray:
        """The reports of the counts ``y`` (whole numbers >= 0), int64 in ``{0, ..., M}``."""
        y = count_array(y, "y", signed=False)
        rng = as_generator(rng)
        clipped = np.minimum(y, self.M)
        p, _ = self.report_probabilities
        keep = rng.random(y.shape) < p
        other = rng.integers(0, self.M, size=y.shape)  # one of the M values other than c
        other += other >= clipped
        return np.where(keep, clipped, other).astype(np.int64)

    def log_likelihood(self, y_tilde, y) -> np.ndarray:
        """``log P(y_tilde | y)``, entrywise."""
        log_p, log_q = self._log_report_probabilities()
        return np.where(np.minimum(y, self.M) == y_tilde, log_p, log_q)

    def __repr__(self):
        return f"RandomizedResponse(epsilon={self.epsilon!r}, M={self.M!r})"


class RandomizedResponseNoise:
    """The noise model of :class:`RandomizedResponse` for data of one shape: what the step and
    the log joint read."""

    def __init__(self, mechanism: RandomizedResponse, shape: tuple[int, ...]):
        # every shape fits: the reports are checked against M where the step reads them
        self.mechanism = mechanism

    def check(self, y_tilde: np.ndarray) -> None:
        """ValueError unless every report is in ``{0, ..., M}``."""
        if y_tilde.size and (y_tilde.min() < 0 or y_tilde.max() > self.mechanism.M):
            raise ValueError(f"y_tilde holds reports outside 0..{self.mechanism.M}, which "
                             f"{self.mechanism!r} cannot give: another mechanism's data?")

    def log_density_rows(self, y_tilde, y, observed) -> np.ndarray:
        """Per row, the sum over its observed entries of ``log P(y_tilde | y)``."""
        terms = np.where(observed.is_observed, self.mechanism.log_likelihood(y_tilde, y), 0.0)
        return terms.reshape(terms.shape[0], -1).sum(axis=1)

    def fingerprint_parts(self) -> list[np.ndarray]:
        return [np.array([self.mechanism.epsilon, self.mechanism.M], dtype=np.float64)]


class RandomizedResponseStep(PrivacyStep):
    """Exact draw of the true counts from their complete conditional under
    :class:`RandomizedResponse` (the module's docstring); no auxiliary state. Its stream is
    keyed by the chain's seed and the iteration."""

    name = "exact"

    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        noise.check(y_tilde)
        mechanism = noise.mechanism
        p, q = mechanism.report_probabilities
        rng = np.random.default_rng([derive_seed(seed, Tag.COUNTS), iteration])
        mu = np.asarray(mu, dtype=np.float64)
        below = y_tilde < mechanism.M
        # the weight of the piece where the report is the clipped count, against q's
        inside = np.where(below, stats.poisson.pmf(y_tilde, mu),
                          stats.poisson.sf(mechanism.M - 1, mu))
        weight = (p - q) * inside
        first = rng.random(y_tilde.shape) * (weight + q) < weight
        y = rng.poisson(mu)
        y[first & below] = y_tilde[first & below]
        top = first & ~below
        y[top] = _poisson_at_least(mechanism.M, mu[top], inside[top], rng)
        return np.where(observed, y, 0).astype(np.int64), {}


def _poisson_at_least(m: int, mu: np.ndarray, tail: np.ndarray, rng) -> np.ndarray:
    """Draws of ``Pois(mu)`` truncated to ``{m, m + 1, ...}``, one per rate of the 1-d ``mu``;
    ``tail`` is each rate's ``P(Pois(mu) >= m)``, which the caller has already formed.

    Where that tail holds at least a quarter of the mass, plain draws until one lands in it
    (four tries on average); elsewhere (then ``mu < m``, so the terms fall at least
    geometrically) inversion over the tail's terms relative to its first,
    ``P(Y = k) / P(Y = m) = prod_{j=m+1..k} mu / j`` (scipy's tail inverse loses its precision
    out there: it gives NaN at ``mu = 1e-5``, ``m = 4``). A zero rate gives ``m``.
    """
    out = np.empty(mu.shape, dtype=np.int64)
    roomy = tail >= 0.25
    pending = np.flatnonzero(roomy)
    while pending.size:
        draws = rng.poisson(mu[pending])
        landed = draws >= m
        out[pending[landed]] = draws[landed]
        pending = pending[~landed]
    for i in np.flatnonzero(~roomy):
        terms = [1.0]
        k = m
        while terms[-1] > 1e-17 * terms[0]:
            k += 1
            terms.append(terms[-1] * mu[i] / k)
        cumulative = np.cumsum(terms)
        out[i] = m + int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return out


register_mechanism(RandomizedResponse, noise_model=RandomizedResponseNoise,
                   steps={RandomizedResponseStep.name: RandomizedResponseStep,
                          NaivePrivacy.name: NaivePrivacy})
