"""Simulators of the paper's synthetic experiments (``make_*``, apart from the estimators).

:func:`make_network` — directed networks from the mixed-membership SBM (paper §5.2,
Figure 1); :func:`make_topics` — well-separated topics and documents (paper §5.1, Figure 3);
:func:`make_private_factorization` — a small factorization and its privatized copy (the VI
paper's Figure 1: 20 x 20, K = 3; the paper does not print the factors' Gamma prior, and
shape 0.5, rate 1 put the collapsed CAVI's MAE near the paper's 0.507).
Randomness
is the keyword-only ``rng`` (a Generator, an int seed or None).

Networks. The paper generates ``V = 20`` actors and ``C = 5`` communities with
``theta[i, c], pi[c, d] ~ Gamma(0.01, rate 0.5)``, draws ``y[i, j] ~ Pois(mu[i, j])`` (``i != j``), sets ``N`` to the
empirical mean of ``y`` and privatizes with ``alpha = exp(-epsilon / N)``, ``epsilon in {2.5,
1, 0.75}``. Taken literally, that prior makes the network empty: the expected rate is about
``25 * 0.02**3 = 2e-4`` per pair, and for seeds 1-9 of ``numpy.random.default_rng`` every
count is 0 (so ``N = 0`` and ``alpha`` is undefined), unlike the dense block structure of the
paper's Figure 1. The generator below keeps the paper's sizes and its sparse Gamma family but
uses ``shape = 0.1``, ``rate = 0.25`` by default, which gives ``N`` of order 1 (seeds 0 and 1:
``N = 1.03`` and ``0.96``), i.e. the paper's noise regime ``epsilon / N`` from 0.75 to 2.5.
Pass ``shape=0.01, rate=0.5`` to reproduce the literal set-up.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpp.randomness import as_generator
from lpp.mechanism import privatize
from lpp.validation import positive_float, positive_int


@dataclass(frozen=True)
class SyntheticNetwork:
    """True memberships ``theta`` (V x C), block rates ``pi`` (C x C), rates ``mu``, counts ``y``.

    ``mu`` and ``y`` are 0 on the diagonal (no self-loops); ``mean_count`` is the paper's N,
    the mean of the off-diagonal counts.
    """

    theta: np.ndarray
    pi: np.ndarray
    mu: np.ndarray
    y: np.ndarray

    @property
    def off_diagonal(self) -> np.ndarray:
        return ~np.eye(self.y.shape[0], dtype=bool)

    @property
    def mean_count(self) -> float:
        return float(self.y[self.off_diagonal].mean())


def make_network(*, rng=None, n_nodes: int = 20, n_communities: int = 5, shape: float = 0.1,
                 rate: float = 0.25) -> SyntheticNetwork:
    """Draw a directed network from the mixed-membership SBM with Gamma(shape, rate) factors.

    Parameters
    ----------
    rng : int, numpy.random.Generator or None
        Source of randomness.
    n_nodes, n_communities : int
        Actors and communities (the paper's 20 and 5).
    shape, rate : float
        Gamma prior of the memberships and block rates (rate parameterisation).

    Returns
    -------
    SyntheticNetwork
    """
    n_nodes = positive_int(n_nodes, "n_nodes")
    n_communities = positive_int(n_communities, "n_communities")
    shape = positive_float(shape, "shape")
    rate = positive_float(rate, "rate")
    rng = as_generator(rng)
    theta = rng.gamma(shape, 1.0 / rate, (n_nodes, n_communities))
    pi = rng.gamma(shape, 1.0 / rate, (n_communities, n_communities))
    mu = theta @ pi @ theta.T
    np.fill_diagonal(mu, 0.0)
    y = rng.poisson(mu)
    return SyntheticNetwork(theta, pi, mu, y)


@dataclass(frozen=True)
class SyntheticCorpus:
    """True document-topic weights ``theta`` (D x K), topics ``phi`` (K x V), rates, counts."""

    theta: np.ndarray
    phi: np.ndarray
    mu: np.ndarray
    y: np.ndarray


def make_topics(*, rng=None, n_docs: int = 90, n_topics: int = 3, n_words: int = 15,
                words_per_topic: int = 5, topic_mass: float = 0.9, doc_mass: float = 0.8,
                doc_length: float = 30.0) -> SyntheticCorpus:
    """Well-separated topics and documents, as in the paper's topic-recovery figure (Fig. 3).

    Topic k puts ``topic_mass`` of its probability on its own ``words_per_topic`` words
    (``n_words = n_topics * words_per_topic`` by default) and spreads the rest evenly; the
    documents fall into ``n_topics`` equal groups, each putting ``doc_mass`` of its expected
    ``doc_length`` tokens on its group's topic. The paper gives the shape of this design but
    not its numbers; these are ours. Counts are ``y ~ Pois(theta @ phi)``.
    """
    n_docs = positive_int(n_docs, "n_docs")
    n_topics = positive_int(n_topics, "n_topics")
    n_words = positive_int(n_words, "n_words")
    if n_words < n_topics * words_per_topic:
        raise ValueError(f"{n_topics} topics x {words_per_topic} own words need n_words >= "
                         f"{n_topics * words_per_topic}, got {n_words}")
    if n_docs % n_topics:
        raise ValueError(f"n_docs={n_docs} must split into {n_topics} equal groups")
    for name, mass in (("topic_mass", topic_mass), ("doc_mass", doc_mass)):
        if not 0.0 < mass <= 1.0:
            raise ValueError(f"{name} must lie in (0, 1], got {mass}")
    doc_length = positive_float(doc_length, "doc_length")
    rng = as_generator(rng)
    phi = np.full((n_topics, n_words), (1.0 - topic_mass) / (n_words - words_per_topic))
    for k in range(n_topics):
        phi[k, k * words_per_topic:(k + 1) * words_per_topic] = topic_mass / words_per_topic
    group = np.repeat(np.arange(n_topics), n_docs // n_topics)
    other = (1.0 - doc_mass) / (n_topics - 1) if n_topics > 1 else 0.0
    theta = np.full((n_docs, n_topics), other * doc_length)
    theta[np.arange(n_docs), group] = doc_mass * doc_length
    mu = theta @ phi
    return SyntheticCorpus(theta, phi, mu, rng.poisson(mu))


@dataclass(frozen=True)
class PrivatizedFactorization:
    """True factors, rates ``mu``, true counts ``y``, privatized counts and ``alpha``."""

    theta: np.ndarray
    phi: np.ndarray
    mu: np.ndarray
    y: np.ndarray
    y_tilde: np.ndarray
    alpha: float


def make_private_factorization(n_rows: int = 20, n_cols: int = 20, k: int = 3, *,
                                   epsilon_over_n: float = 1.0, shape: float = 0.5,
                                   rate: float = 1.0, rng=None) -> PrivatizedFactorization:
    """Draw factors, counts and their privatized copy (``alpha = exp(-epsilon / N)``).

    Parameters
    ----------
    n_rows, n_cols, k : int
        Matrix size and number of components (each >= 1).
    epsilon_over_n : float
        Privacy level per unit of precision (> 0).
    shape, rate : float
        Gamma prior of every factor (> 0).
    rng : numpy.random.Generator, int or None

    Returns
    -------
    PrivatizedFactorization

    Raises
    ------
    ValueError
        Sizes below 1 or non-positive ``epsilon_over_n``, ``shape`` or ``rate``.
    """
    if min(n_rows, n_cols, k) < 1:
        raise ValueError("n_rows, n_cols and k must be >= 1")
    if not (epsilon_over_n > 0 and shape > 0 and rate > 0):
        raise ValueError("epsilon_over_n, shape and rate must be > 0")
    gen = as_generator(rng)
    theta = gen.gamma(shape, 1.0 / rate, (n_rows, k))
    phi = gen.gamma(shape, 1.0 / rate, (k, n_cols))
    mu = theta @ phi
    y = gen.poisson(mu)
    alpha = float(np.exp(-epsilon_over_n))
    return PrivatizedFactorization(theta, phi, mu, y, privatize(y, alpha, rng=gen), alpha)
