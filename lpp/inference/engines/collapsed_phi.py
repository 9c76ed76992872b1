"""The topic model on known counts with the topics' directions summed out
(``TopicModel(K, collapse_phi=True)``).

Why. On long documents the known-counts engine (:mod:`lpp.inference.engines.known_topics`)
spends most of a sweep drawing ``phi``: ``K x V`` Gamma variates, one per topic and word
whether or not the word has tokens in the topic. This engine keeps no ``phi`` between sweeps.

The model (:class:`~lpp.inference.TopicModel`): ``y[d, v] ~ Pois(sum_k theta[d, k] phi[k, v])``
with ``theta[d, k]`` and ``phi[k, v]`` iid ``Gamma(a0, rate b0)``. A vector of iid
``Gamma(a0, b0)`` variates is its total times an independent Dirichlet direction:
``phi[k] = mass[k] psi[k]``, ``mass[k] = sum_v phi[k, v] ~ Gamma(V a0, b0)``,
``psi[k] ~ Dirichlet(a0, ..., a0)``. Split into tokens with topics ``z``, the counts' likelihood
is ``prod (theta[d, k] mass[k] psi[k, v])^n[d, v, k] / n! x exp(-sum_{d, k} theta[d, k]
mass[k])`` — every ``psi[k]`` sums to one, so with every entry observed the exponent does not
involve ``psi``, and ``psi`` integrates out (Dirichlet-multinomial). What remains,
``p(theta, mass, z | y)``, has three exact conditionals:

* ``z`` token by token: ``p(z = k) ∝ theta[d, k] mass[k] (a0 + n[k, v]) / (V a0 + n[k])``,
  the counts those of the other tokens
  (:func:`~lpp.inference.engines.collapsed_phi_kernels.sweep_topics`; the SparseLDA split of
  the weight into a term over all topics, kept up to date at each move, and a term over the
  topics that hold the word's tokens);
* ``mass[k] ~ Gamma(V a0 + n[k], b0 + sum_d theta[d, k])``;
* ``theta[d, k] ~ Gamma(a0 + n[d, k], b0 + mass[k])``.

A sweep draws them in that order. Where ``phi`` is read — a saved draw, the rates, the log joint
(``chain.state``) — it is drawn from its exact conditional, ``phi[k] = mass[k] psi[k]`` with
``psi[k] ~ Dirichlet(a0 + n[k, :])`` (normalised Gamma variates), once per sweep on a stream
keyed by the iteration: ``(theta, phi, z)`` is then a draw of the joint posterior, and the
saved draws, ``mu_hat`` and the log joint have the known-counts engine's form. Sweeps that
nobody reads draw no ``phi``.

A chain starts from explicit ``theta`` and ``phi`` (the chain's start, a restored point
without the carried arrays, or fresh data swapped in by the Geweke test): every token's topic
is then drawn from ``p(z | y, theta, phi)`` (independent categoricals) and ``mass`` is
``phi``'s row sums, a draw of the augmented posterior given a draw of ``(theta, phi)``.

The chain carries the tokens' topics and ``mass`` between sweeps: they are its ``aux``
(:data:`CARRIED`), written into checkpoints beside ``theta`` and ``phi``, so that a resumed
chain continues bit for bit. The token sweep is serial (each draw reads the counts the one
before it left), so the chain is the same on any number of threads. Missing entries
(``mask``) would put ``psi`` back into the likelihood, so they are refused, as are the
privacy steps that draw the counts anew each sweep, the GPU and the cluster.
"""
from __future__ import annotations

import numpy as np

from lpp.distributions import TINY
from lpp.inference.engines.collapsed_phi_kernels import (
    draw_topic_mass,
    first_topics,
    sweep_topics,
    token_counts,
    topic_word_of_lists,
    word_lists,
)
from lpp.inference.engines.known_topics import KnownCountsTopicEngine
from lpp.inference.kernels import gamma_matrix_kernel, product_kernel
from lpp.inference.numerics import check_latents
from lpp.randomness import Tag, derive_seed

#: the arrays the chain carries between sweeps beside its latents (its ``aux``): each token's
#: topic (in the counts' CSR order, entry by entry) and each topic's total intensity ``mass``
CARRIED = ("token_topics", "topic_mass")
#: the most tokens a sweep may hold: its time and memory (4 bytes per token) grow with the
#: counts, which the other engines split by one multinomial per entry; beyond this the chain is
#: refused rather than left to run on
MAX_TOKENS = 10**9


class CollapsedPhiState:
    """The chain's point between sweeps: ``theta``, ``mass``, the tokens' topics, and ``phi``
    drawn from its conditional when first read (:meth:`to_host`). Never changed once made."""

    def __init__(self, engine, theta, mass, topics, a0, phi_seed, iteration, phi=None):
        self.engine, self.theta, self.mass, self.topics = engine, theta, mass, topics
        self._a0, self._phi_seed, self._iteration = a0, phi_seed, iteration
        self._host = None if phi is None else {"theta": theta, "phi": phi}

    @property
    def aux(self) -> dict:
        """What the chain carries between sweeps (:data:`CARRIED`)."""
        return {"token_topics": self.topics, "topic_mass": self.mass}

    def to_host(self) -> dict:
        """``{"theta", "phi"}``: ``phi[k] = mass[k] psi[k]``, ``psi[k] ~ Dirichlet(a0 +
        n[k, :])``, drawn once (on the stream of the sweep's iteration) and kept."""
        if self._host is None:
            topic_word = self.engine.topic_word(self)
            draws = gamma_matrix_kernel(topic_word, self._a0, np.ones(topic_word.shape),
                                        self._phi_seed, self._iteration)
            phi = draws * (self.mass / draws.sum(axis=1))[:, None]
            # the Gamma draws' floor, kept by the scaled direction (it moves only mass below it)
            np.maximum(phi, TINY, out=phi)
            self._host = {"theta": self.theta, "phi": phi}
        return self._host


class CollapsedPhiTopicEngine:
    """Sweeps of ``TopicModel(K, collapse_phi=True)`` on known counts: the tokens' topics with
    the topics' directions summed out, then ``mass`` and ``theta`` (module docstring).

    Parameters
    ----------
    counts : ndarray of int64 or SparseCounts, shape (D, V)
        The known counts, every entry observed; kept by reference and returned as each
        sweep's ``y``.
    observed : ndarray of bool, shape (D, V)
        True where an entry carries likelihood (all of them).
    """

    name = "collapsed-phi"
    carries = CARRIED

    @staticmethod
    def applies(model, step, noise) -> bool:
        """Whether ``model`` asks for ``collapse_phi`` with its ``"row_column_factors"`` and
        ``step`` (the count source of a non-private chain, or the naive step) declares
        ``"known_counts"``."""
        return (getattr(model, "collapse_phi", False)
                and "row_column_factors" in model.capabilities
                and "known_counts" in step.capabilities)

    @classmethod
    def for_source(cls, source, observed: np.ndarray) -> "CollapsedPhiTopicEngine":
        return cls(source.initial_counts(), observed)

    def for_new_data(self, source, observed: np.ndarray):
        """An engine for other counts of the same shape; the chain's point it is given is then
        taken as explicit ``theta`` and ``phi`` (:meth:`sweep`)."""
        return self.for_source(source, observed)

    def __init__(self, counts, observed: np.ndarray):
        if observed.strides != (0, 0) and not np.all(observed):
            raise ValueError("collapse_phi=True needs every entry observed (no mask): a "
                             "missing entry puts the topics' directions back into the "
                             "likelihood; fit with collapse_phi=False")
        # the layout and the start's sweep (init='data' on sparse counts) are the known-counts
        # engine's, so a chain starts exactly where the default one does
        self._known = KnownCountsTopicEngine(counts, observed)
        self.counts = counts
        self.layout = self._known.layout
        values = self.layout.values.astype(np.int64)
        n_tokens = int(values.sum())
        if n_tokens > MAX_TOKENS:
            raise ValueError(f"collapse_phi=True draws a topic per token, and these counts hold "
                             f"{n_tokens:.3g} tokens (at most {MAX_TOKENS:.0e}): fit without "
                             "collapse_phi")
        self.token_ptr = np.zeros(values.size + 1, dtype=np.int64)
        np.cumsum(values, out=self.token_ptr[1:])
        # the word lists and topic totals (sweep_topics') of the tokens of one point, advanced
        # in place by each sweep rather than formed anew from the tokens
        self._lists, self._lists_of = None, None

    def _lists_for(self, point: CollapsedPhiState):
        """The word lists of ``point``'s tokens: the kept ones when they are its own (a sweep
        that did not reach its commit leaves them another's), else formed from its tokens."""
        if self._lists_of is not point:
            lay = self.layout
            self._lists = word_lists(lay.indptr, lay.cols, self.token_ptr, point.topics,
                                     point.mass.size, lay.shape[1])
            self._lists_of = point
        return self._lists

    def topic_word(self, point: CollapsedPhiState) -> np.ndarray:
        """The K x V token counts of ``point`` (int64)."""
        if self._lists_of is point:
            lists, n_listed, _ = self._lists
            return topic_word_of_lists(lists, n_listed, point.mass.size)
        lay = self.layout
        word_topic = token_counts(lay.indptr, lay.cols, self.token_ptr, point.topics,
                                  point.mass.size, lay.shape[1])[1]
        return np.ascontiguousarray(word_topic.T)

    # ----- the chain's point ------------------------------------------------------------------
    def rates(self, state) -> np.ndarray:
        return _model_rate(state)

    def restore(self, model, state: dict, aux: dict):
        """``(point, aux)`` of a restored chain: the carried arrays taken out of ``aux`` and
        checked, with ``state`` as the point's ``theta`` and ``phi``; a ``state`` alone (no
        carried arrays) is returned as it is."""
        aux = dict(aux)
        if not any(name in aux for name in CARRIED):
            return state, aux
        missing = [name for name in CARRIED if name not in aux]
        if missing:
            raise ValueError(f"a collapse_phi chain's point needs {list(CARRIED)}, got no "
                             f"{missing}")
        topics, mass = aux.pop("token_topics"), aux.pop("topic_mass")
        n_topics = model.n_components
        if (topics.dtype.kind not in "iu" or topics.shape != (int(self.token_ptr[-1]),)
                or (topics.size and (topics.min() < 0 or topics.max() >= n_topics))):
            raise ValueError(f"token_topics must hold one topic in [0, {n_topics}) per token "
                             f"({int(self.token_ptr[-1])} tokens), got {topics.dtype} of shape "
                             f"{topics.shape}")
        mass = np.array(mass, dtype=np.float64, copy=True)
        if mass.shape != (n_topics,) or not np.all(np.isfinite(mass)) or np.any(mass <= 0):
            raise ValueError(f"topic_mass must hold {n_topics} finite positive values")
        point = CollapsedPhiState(self, state["theta"], mass,
                                  np.ascontiguousarray(topics, dtype=np.int32), model.a0, None,
                                  None, phi=state["phi"])
        return point, aux

    # ----- sweeps -------------------------------------------------------------------------------
    def step(self, model, state, observed, seed: int, iteration: int):
        """The start's sweep on sparse counts: the known-counts engine's (that of
        :meth:`TopicModel.step <lpp.inference.TopicModel.step>`)."""
        return self._known.step(model, state, observed, seed, iteration)

    def sweep(self, model, state, observed, privacy_seed: int, model_seed: int, iteration: int):
        """``(new point, y)``: the tokens' topics, then ``mass``, then ``theta``."""
        lay = self.layout
        n_cols = lay.shape[1]
        if isinstance(state, CollapsedPhiState) and state.engine is self:
            point = state
        else:  # explicit theta and phi: the tokens' topics drawn given them
            host = state.to_host() if isinstance(state, CollapsedPhiState) else state
            theta, phi = host["theta"], host["phi"]
            topics = first_topics(lay.indptr, lay.cols, self.token_ptr,
                                  np.ascontiguousarray(theta), np.ascontiguousarray(phi.T),
                                  derive_seed(model_seed, Tag.FIRST_TOPICS), iteration)
            point = CollapsedPhiState(self, theta, phi.sum(axis=1), topics, model.a0, None,
                                      None, phi=phi)
        theta = np.ascontiguousarray(point.theta)
        lists = self._lists_for(point)
        self._lists_of = None  # advanced below: the lists of no committed point until then
        topics = point.topics.copy()
        doc_topic = sweep_topics(lay.indptr, lay.cols, self.token_ptr, topics, theta,
                                 point.mass, model.a0, derive_seed(model_seed, Tag.TOPIC_TOKENS),
                                 iteration, *lists)
        mass = draw_topic_mass(lists[2], theta.sum(axis=0), model.a0, model.b0, n_cols,
                               derive_seed(model_seed, Tag.TOPIC_MASS), iteration)
        rate = np.ascontiguousarray(np.broadcast_to(model.b0 + mass, theta.shape))
        theta = gamma_matrix_kernel(doc_topic, model.a0, rate,
                                    derive_seed(model_seed, Tag.TOPIC_THETA), iteration)
        check_latents({"theta": theta, "topic_mass": mass})
        new_point = CollapsedPhiState(self, theta, mass, topics, model.a0,
                                      derive_seed(model_seed, Tag.TOPIC_PHI), iteration)
        self._lists_of = new_point
        return new_point, self.counts


def _model_rate(state) -> np.ndarray:
    """:meth:`TopicModel.rate <lpp.inference.TopicModel.rate>` of the point's ``theta`` and
    ``phi``."""
    host = state.to_host() if isinstance(state, CollapsedPhiState) else state
    return product_kernel(host["theta"], host["phi"])
