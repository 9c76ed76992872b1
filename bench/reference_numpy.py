"""A straightforward, vectorised NumPy implementation of the paper's Gibbs sweep (the baseline).

This is the comparison point of ``bench.sweep``: the locally private topic model (Poisson
matrix factorization, Gamma(a0, rate b0) priors) sampled with the Bessel augmentation of
Schein et al. (2019), eqs. 13-16, written the way a careful NumPy user would write it — dense
arrays, whole-array operations, no Python loop over entries:

1. ``mu = theta @ phi`` (BLAS);
2. ``m ~ Bessel(|y_tilde|, 2 sqrt((lam+ + mu) lam-))`` — drawn with
   :func:`lpp.distributions.sample_bessel`, the package's exact sampler (numba-vectorised:
   NumPy has no Bessel sampler, and an exact one in pure NumPy would be a strawman);
3. ``y_tilde <= 0``: ``y+ = m``, ``g- = m - y_tilde``; else ``g- = m``, ``y+ = m + y_tilde``;
4. ``y ~ Binomial(y+, mu / (mu + lam+))``, ``g+ = y+ - y``;
5. ``lam± ~ Gamma(1 + g±, rate 1 / alpha)``;
6. allocation ``(y[d, v, k])_k ~ Multinomial(y[d, v], theta[d] * phi[:, v])`` over the non-zero
   counts, in blocks (``Generator.multinomial`` with a matrix of probabilities);
7. ``phi ~ Gamma(a0 + topic-word counts, b0 + sum_d theta)``, then
   ``theta ~ Gamma(a0 + document-topic counts, b0 + sum_v phi)`` (the authors' order).

Everything except step 2 is NumPy with one ``numpy.random.Generator``. Factor draws are floored
at the smallest normal double, as in the package (small-shape Gamma draws can underflow to 0,
and a zero factor would break the multinomial). The sweep is correct, not a strawman:
``tests/bench/test_reference_numpy.py`` checks it with a Geweke joint-distribution test.
"""
from __future__ import annotations

import numpy as np

from lpp.distributions import sample_bessel

_TINY = float(np.finfo(np.float64).tiny)
#: non-zero entries per multinomial block (bounds the temporary (block x K) arrays)
_BLOCK = 1 << 16


class NumpyBesselTopicSampler:
    """Dense NumPy Gibbs sampler of the locally private topic model (Bessel augmentation).

    ``y_tilde`` (D x V ints), ``alpha`` (scalar, or shape (D, 1) per row), ``n_topics``; state
    ``theta`` (D x K), ``phi`` (K x V), ``lam_plus``, ``lam_minus`` (D x V), ``y`` (D x V).
    """

    def __init__(self, y_tilde, alpha, n_topics, *, a0=0.1, b0=1.0, seed=None, init=None):
        self.y_tilde = np.asarray(y_tilde, dtype=np.int64)
        self.alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), self.y_tilde.shape)
        self.a0, self.b0 = float(a0), float(b0)
        self.rng = np.random.default_rng(seed)
        n_docs, n_words = self.y_tilde.shape
        if init is None:
            init = {"theta": self._gamma(self.a0, self.b0, (n_docs, n_topics)),
                    "phi": self._gamma(self.a0, self.b0, (n_topics, n_words))}
        self.theta = np.array(init["theta"], dtype=np.float64)
        self.phi = np.array(init["phi"], dtype=np.float64)
        mean = self.alpha / (1.0 - self.alpha)  # lam ~ Exp(mean alpha / (1 - alpha)) a priori
        self.lam_plus = init.get("lam_plus", self.rng.exponential(mean))
        self.lam_minus = init.get("lam_minus", self.rng.exponential(mean))
        self.y = np.maximum(self.y_tilde, 0)

    def _gamma(self, shape, rate, size=None):
        return np.maximum(self.rng.gamma(shape, 1.0 / rate, size), _TINY)

    def privacy_step(self, mu):
        """Steps 2-5: the true counts and the noise rates given ``mu``."""
        yt = self.y_tilde
        m = sample_bessel(np.abs(yt), 2.0 * np.sqrt((self.lam_plus + mu) * self.lam_minus),
                          rng=self.rng)
        nonpos = yt <= 0
        y_plus = np.where(nonpos, m, m + yt)
        g_minus = np.where(nonpos, m - yt, m)
        y = self.rng.binomial(y_plus, mu / (mu + self.lam_plus))
        g_plus = y_plus - y
        self.lam_plus = self.rng.gamma(1.0 + g_plus, self.alpha)
        self.lam_minus = self.rng.gamma(1.0 + g_minus, self.alpha)
        self.y = y

    def allocate(self):
        """Step 6: document-topic (D x K) and topic-word (K x V) totals of the allocation."""
        n_docs, n_words = self.y.shape
        n_topics = self.theta.shape[1]
        rows, cols = np.nonzero(self.y)
        counts = self.y[rows, cols]
        doc_topic = np.zeros((n_docs, n_topics))
        word_topic = np.zeros((n_words, n_topics))
        for lo in range(0, rows.size, _BLOCK):
            r, c, n = rows[lo:lo + _BLOCK], cols[lo:lo + _BLOCK], counts[lo:lo + _BLOCK]
            p = self.theta[r] * self.phi[:, c].T
            p /= p.sum(axis=1, keepdims=True)
            alloc = self.rng.multinomial(n, p)
            for k in range(n_topics):  # K bincounts beat np.add.at by a wide margin
                doc_topic[:, k] += np.bincount(r, alloc[:, k], minlength=n_docs)
                word_topic[:, k] += np.bincount(c, alloc[:, k], minlength=n_words)
        return doc_topic, word_topic.T

    def sweep(self):
        """One full iteration (steps 1-7)."""
        self.privacy_step(self.theta @ self.phi)
        doc_topic, topic_word = self.allocate()
        self.phi = self._gamma(self.a0 + topic_word, (self.b0 + self.theta.sum(axis=0))[:, None])
        self.theta = self._gamma(self.a0 + doc_topic, self.b0 + self.phi.sum(axis=1))

    @property
    def mu(self):
        return self.theta @ self.phi
