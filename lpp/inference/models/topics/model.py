"""Topic model as Poisson matrix factorization (LDA as PF).

``y[d, v] ~ Pois(mu[d, v])``, ``mu[d, v] = sum_k theta[d, k] phi[k, v]``, with
``theta`` (D x K, documents' topic intensities) and ``phi`` (K x V, topics' word intensities)
iid ``Gamma(a0, rate b0)``.

Gibbs sweep (given counts ``y``): allocate each observed ``y[d, v]`` over topics,
``(y[d, v, k])_k ~ Mult(y[d, v], theta[d, :] * phi[:, v])``; then
``phi[k, v] ~ Gamma(a0 + sum_d y[d, v, k], b0 + sum_d obs[d, v] theta[d, k])`` and
``theta[d, k] ~ Gamma(a0 + sum_v y[d, v, k], b0 + sum_v obs[d, v] phi[k, v])`` — the authors'
order (Phi, then Theta).

The model declares the ``"row_column_factors"`` capability, so the fused sparse engine
(:mod:`lpp.inference.engines.sparse_topics`) can draw and allocate the counts of the collapsed
privacy step in one pass that never forms the dense rates. The Gamma rates' sums over observed
entries are taken as "all entries minus the missing ones" when few entries are missing, so a
held-out mask costs ``O(missing x K)`` rather than a dense product.

:class:`FixedTopicModel` holds the topics fixed at given values and infers the documents'
``theta`` alone (topic proportions of new documents under fitted topics).
"""
from __future__ import annotations

import numpy as np

from lpp.randomness import Tag, derive_seed
from lpp.inference.numerics import check_latents
from lpp.inference.kernels import gamma_matrix_kernel, product_kernel
from lpp.inference.models.base import Observed, PoissonFactorization
from lpp.inference.models.topics.kernels import (
    add_rows_at,
    allocate_matrix_kernel,
    expected_allocation,
)
from lpp.inference.models.topics.reassign import reassign_tokens

#: below this fraction of missing entries the rate sums subtract the missing entries' terms
_SPARSE_MISSING = 0.25


class TopicModel(PoissonFactorization):
    """Poisson matrix factorization with ``n_components`` topics; state ``{"theta", "phi"}``.

    ``n_topics`` (the paper's K) is an alias of ``n_components``. ``collapse_theta=True`` adds a
    reassignment of the tokens with ``theta`` summed out to every sweep of the fused engines
    (:mod:`lpp.inference.models.topics.reassign`); ``collapse_phi=True`` runs the sweeps of known
    counts with the topics' directions summed out (:mod:`lpp.inference.engines.collapsed_phi`).
    """

    name = "topics"
    data_ndim = 2
    capabilities = frozenset({"row_column_factors", "gamma_factors"})

    def __init__(self, n_components: int, *, a0: float = 0.1, b0: float = 1.0,
                 collapse_theta: bool = False, collapse_phi: bool = False):
        super().__init__(n_components, a0=a0, b0=b0)
        for name, value in (("collapse_theta", collapse_theta), ("collapse_phi", collapse_phi)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {value!r}")
        if collapse_theta and collapse_phi:
            raise ValueError("collapse_theta=True reassigns tokens given phi, which "
                             "collapse_phi=True sums out: set one of them")
        #: each sweep reassigns every document's tokens with theta summed out before theta and
        #: phi are drawn (:mod:`lpp.inference.models.topics.reassign`; the fused engines only)
        self.collapse_theta = bool(collapse_theta)
        #: the sweeps of known counts run with the topics' directions summed out, phi drawn
        #: only where it is read (:mod:`lpp.inference.engines.collapsed_phi`)
        self.collapse_phi = bool(collapse_phi)

    def params(self) -> dict:
        params = super().params()
        # each recorded only when set: the default's record is unchanged
        if self.collapse_theta:
            params["collapse_theta"] = True
        if self.collapse_phi:
            params["collapse_phi"] = True
        return params

    @property
    def n_topics(self) -> int:
        """The paper's K: an alias of ``n_components``."""
        return self.n_components

    def latent_shapes(self, shape):
        n_docs, n_words = shape
        k = self.n_components
        return {"theta": (n_docs, k), "phi": (k, n_words)}

    def rate(self, state):
        # a fixed summation order (not BLAS): the same rates on any thread count and for any
        # row block, so saved rates and log joints replay bit for bit, in-process or distributed
        return product_kernel(state["theta"], state["phi"])

    def row_column_factors(self, state):
        return state["theta"], state["phi"]

    def allocate(self, state, y, observed: Observed, seed, iteration):
        theta, phi = state["theta"], state["phi"]
        phi_t = np.ascontiguousarray(phi.T)
        doc_topic, word_topic = allocate_matrix_kernel(y, observed.is_observed, theta, phi_t, seed,
                                                       iteration)
        return {"doc_topic": doc_topic, "topic_word": np.ascontiguousarray(word_topic.T)}

    def update_latents(self, state, stats, observed: Observed, seed, iteration):
        phi = gamma_matrix_kernel(stats["topic_word"], self.a0,
                                  self._phi_rate(state["theta"], observed),
                                  derive_seed(seed, Tag.LATENT_1), iteration)
        return {"theta": self._draw_theta(stats["doc_topic"], phi, observed, seed, iteration),
                "phi": phi}

    def reassign_step(self, state, tokens, observed: Observed, seed, iteration, first_row,
                      calls, partials):
        """The partially collapsed step of ``collapse_theta``
        (:mod:`lpp.inference.models.topics.reassign`) on a fused engine's tokens: ``(state with theta drawn given the new split, stats)``,
        to be followed by :meth:`update_step` on those stats."""
        theta, phi = self.row_column_factors(state)
        doc_topic, topic_word = reassign_tokens(
            tokens, theta, phi, self._theta_rate(phi, observed), self.a0,
            derive_seed(seed, Tag.REASSIGN), iteration, first_row, calls, partials)
        new_theta = self._draw_theta(doc_topic, phi, observed, derive_seed(seed, Tag.REASSIGN_THETA),
                                     iteration)
        check_latents({"theta": new_theta})
        return {**state, "theta": new_theta}, {"doc_topic": doc_topic, "topic_word": topic_word}

    def _draw_theta(self, doc_topic, phi, observed: Observed, seed, iteration) -> np.ndarray:
        """``theta`` from its complete conditional given the topics ``phi``."""
        return gamma_matrix_kernel(doc_topic, self.a0, self._theta_rate(phi, observed),
                                   derive_seed(seed, Tag.LATENT_2), iteration)

    def expectation_step(self, state, y, observed: Observed):
        """Expected allocation of ``y``, then the Gamma conditionals' means (Phi, then Theta).

        In row blocks of the data, so no dense D x V temporary is formed beyond one block.
        """
        theta, phi = state["theta"], state["phi"]
        topic_word = np.zeros_like(phi)
        doc_topic = expected_allocation(theta, phi, y, observed.is_observed, topic_word)
        return self.expectation_update(state, doc_topic, topic_word, observed)

    def expectation_update(self, state, doc_topic, topic_word, observed: Observed):
        """The conditional means of :meth:`expectation_step` given the expected allocation
        (``topic_word`` as summed by :func:`expected_allocation`, before its product with phi)."""
        theta, phi = state["theta"], state["phi"]
        topic_word = topic_word * phi
        phi = (self.a0 + topic_word) / self._phi_rate(theta, observed)
        return {"theta": self._theta_mean(doc_topic, phi, observed), "phi": phi}

    def _theta_mean(self, doc_topic, phi, observed: Observed) -> np.ndarray:
        """The mean of ``theta``'s complete conditional given expected counts and ``phi``."""
        return (self.a0 + doc_topic) / self._theta_rate(phi, observed)

    def _phi_rate(self, theta, observed: Observed) -> np.ndarray:
        """``b0 + sum_d obs[d, v] theta[d, k]`` as a K x V array."""
        shape = (theta.shape[1], observed.shape[1])
        missing = _few_missing(observed)
        if observed.complete:
            return np.ascontiguousarray(
                np.broadcast_to((self.b0 + theta.sum(axis=0))[:, None], shape))
        if missing is not None:
            rows, cols = missing
            lost = np.zeros(shape[::-1])  # V x K: sum over missing d of theta[d]
            add_rows_at(cols, rows, theta, lost)
            return np.ascontiguousarray(
                np.maximum(self.b0 + theta.sum(axis=0)[:, None] - lost.T, self.b0))
        return np.ascontiguousarray(self.b0 + theta.T @ observed.weights)

    def _theta_rate(self, phi, observed: Observed) -> np.ndarray:
        """``b0 + sum_v obs[d, v] phi[k, v]`` as a D x K array."""
        shape = (observed.shape[0], phi.shape[0])
        missing = _few_missing(observed)
        if observed.complete:
            return np.ascontiguousarray(np.broadcast_to(self.b0 + phi.sum(axis=1), shape))
        if missing is not None:
            rows, cols = missing
            lost = np.zeros(shape)  # D x K: sum over missing v of phi[:, v]
            add_rows_at(rows, cols, np.ascontiguousarray(phi.T), lost)
            return np.ascontiguousarray(np.maximum(self.b0 + phi.sum(axis=1) - lost, self.b0))
        return np.ascontiguousarray(self.b0 + observed.weights @ phi.T)


class FixedTopicModel(TopicModel):
    """The topic model with the topics ``phi`` given: only the documents' ``theta`` is latent.

    It infers the topic intensities of new documents under topics fitted before (e.g. a fit's
    posterior mean of ``phi``): the same likelihood and the same ``Gamma(a0, rate b0)`` prior on
    ``theta`` as :class:`TopicModel`, with ``phi`` a constant of the model rather than part of
    the state. The state is ``{"theta"}`` alone, so a chain saves no copies of the topics, and
    ``log_prior`` (hence the log joint) is that of ``theta`` given ``phi``.

    Parameters
    ----------
    phi : array_like of float, shape (K, V)
        The topics' word intensities (finite, non-negative); ``n_components`` is ``K``.
    a0, b0 : float
        Shape and rate of ``theta``'s Gamma prior.

    Raises
    ------
    ValueError
        For ``phi`` that is not a finite, non-negative K x V array with K, V >= 1; data whose
        number of columns is not V (when a chain is built).
    """

    name = "topics_fixed"
    # declared again (overriding rate, allocate and row_column_factors would drop it): each is
    # TopicModel's own applied to (theta, the given phi), so the rates are still theta @ phi
    # with the same multinomial allocation, and update_latents takes the same totals
    capabilities = frozenset({"row_column_factors"})

    def __init__(self, phi, *, a0: float = 0.1, b0: float = 1.0):
        phi = np.array(phi, dtype=np.float64, order="C", copy=True)
        if phi.ndim != 2 or 0 in phi.shape:
            raise ValueError(f"phi must be a K x V array with K, V >= 1, got shape {phi.shape}")
        if not np.isfinite(phi).all() or np.any(phi < 0):
            raise ValueError("phi must be finite and non-negative")
        super().__init__(phi.shape[0], a0=a0, b0=b0)
        phi.setflags(write=False)  # shared by every sweep of every chain built on the model
        self.phi = phi

    @property
    def n_words(self) -> int:
        return self.phi.shape[1]

    def check_shape(self, shape):
        super().check_shape(shape)
        if shape[1] != self.n_words:
            raise ValueError(f"the topics cover {self.n_words} words, the data have {shape[1]} "
                             "columns")

    def latent_shapes(self, shape):
        return {"theta": (shape[0], self.n_components)}

    def _with_topics(self, state):
        return {"theta": state["theta"], "phi": self.phi}

    def rate(self, state):
        return super().rate(self._with_topics(state))

    def row_column_factors(self, state):
        return state["theta"], self.phi

    def allocate(self, state, y, observed: Observed, seed, iteration):
        return super().allocate(self._with_topics(state), y, observed, seed, iteration)

    def update_latents(self, state, stats, observed: Observed, seed, iteration):
        return {"theta": self._draw_theta(stats["doc_topic"], self.phi, observed, seed,
                                          iteration)}

    def expectation_step(self, state, y, observed: Observed):
        return super().expectation_step(self._with_topics(state), y, observed)

    def expectation_update(self, state, doc_topic, topic_word, observed: Observed):
        return {"theta": self._theta_mean(doc_topic, self.phi, observed)}
def _few_missing(observed: Observed):
    """``(rows, cols)`` of the missing entries when they are few (but some), else None."""
    if observed.complete:
        return None
    if observed.n_missing > _SPARSE_MISSING * observed.is_observed.size:
        return None
    return observed.missing_entries()
