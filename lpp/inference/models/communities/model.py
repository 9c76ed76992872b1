"""Overlapping community detection: the mixed-membership stochastic block model as PF.

``y[i, j] ~ Pois(mu[i, j])`` for ``i != j``, ``mu[i, j] = sum_{c,d} theta[i, c] pi[c, d]
theta[j, d]``, with memberships ``theta`` (V x C) and block rates ``pi`` (C x C, not
symmetric: the network is directed) iid ``Gamma(a0, rate b0)``. Self-loops are never observed:
the diagonal is always masked, whatever the user's mask says, and ``rate`` returns 0 there.

Gibbs sweep: allocate each observed ``y[i, j]`` over the ``C * C`` pairs ``(c, d)``; then
``pi[c, d] ~ Gamma(a0 + y[., c, d, .], b0 + sum_{ij} obs[i, j] theta[i, c] theta[j, d])``; then a
sequential scan over nodes for ``theta`` (see ``update_memberships_kernel``) — the authors'
order (Pi, then Theta).
"""
from __future__ import annotations

import numpy as np

from lpp.randomness import Tag, derive_seed
from lpp.inference.kernels import gamma_matrix_kernel
from lpp.inference.models.base import Observed, PoissonFactorization
from lpp.inference.models.communities.kernels import (
    allocate_blocks_kernel,
    update_memberships_kernel,
)


class CommunityModel(PoissonFactorization):
    """Mixed-membership SBM with ``n_communities`` communities; state ``{"theta", "pi"}``."""

    name = "communities"
    data_ndim = 2
    capabilities = frozenset({"membership_factors"})

    @property
    def n_communities(self) -> int:
        """The paper's C: an alias of ``n_components``."""
        return self.n_components

    def check_shape(self, shape):
        super().check_shape(shape)
        if shape[0] != shape[1]:
            raise ValueError(f"a network's count matrix must be square, got shape {tuple(shape)}")
        if shape[0] < 2:
            raise ValueError("a network needs at least 2 nodes")

    def always_missing(self, shape):
        return np.eye(shape[0], dtype=bool)

    def check_observed(self, observed: Observed) -> None:
        """Refuse an observed diagonal or a mask that hides every entry.

        A node whose every incoming and outgoing entry is masked is allowed: the paper's
        held-out design ("all elements ... that involved the top fifty senders or recipients")
        hides every entry of an actor who is both. Its memberships then follow the prior, the
        blocks ``pi`` learnt from the other nodes carry its predictions, and its masked
        entries are predicted from the posterior alone.
        """
        mask = observed.is_observed
        if np.diagonal(mask).any():
            raise ValueError("self-loops (the diagonal) must be unobserved in the community model")
        if not mask.any():
            raise ValueError("every entry is masked: there is nothing to fit")

    def latent_shapes(self, shape):
        c = self.n_components
        return {"theta": (shape[0], c), "pi": (c, c)}

    def rate(self, state):
        theta = state["theta"]
        mu = theta @ state["pi"] @ theta.T
        np.fill_diagonal(mu, 0.0)
        return mu

    def allocate(self, state, y, observed: Observed, seed, iteration):
        theta, pi = state["theta"], state["pi"]
        node_comm, block = allocate_blocks_kernel(y, observed.is_observed, theta, pi, seed, iteration)
        return {"node_community": node_comm, "block": block}

    def update_latents(self, state, stats, observed: Observed, seed, iteration):
        theta = state["theta"]
        # sum_{i != j observed} theta[i, c] theta[j, d]
        pair_mass = theta.T @ observed.weights @ theta
        pi = gamma_matrix_kernel(stats["block"], self.a0, np.ascontiguousarray(self.b0 + pair_mass),
                                 derive_seed(seed, Tag.LATENT_1), iteration)
        theta = update_memberships_kernel(theta, pi, stats["node_community"], observed.is_observed,
                                          self.a0, self.b0, derive_seed(seed, Tag.LATENT_2),
                                          iteration)
        return {"theta": theta, "pi": pi}

    def expectation_step(self, state, y, observed: Observed):
        """Expected allocation over the ``C x C`` pairs; then ``pi`` and (jointly over nodes)
        ``theta`` set to their conditional means — a Jacobi update of the memberships where the
        sampler scans the nodes in turn."""
        theta, pi = state["theta"], state["pi"]
        weights = observed.weights
        mu = theta @ pi @ theta.T
        ratio = np.zeros(mu.shape)
        np.divide(y, mu, out=ratio, where=observed.is_observed & (y > 0))
        block = pi * (theta.T @ ratio @ theta)
        node_comm = theta * (ratio @ theta @ pi.T + ratio.T @ theta @ pi)
        pi = (self.a0 + block) / (self.b0 + theta.T @ weights @ theta)
        # sum over j of obs[i, j] (pi theta^T)[c, j] + obs[j, i] (theta pi)[j, c]
        exposure = weights @ theta @ pi.T + weights.T @ theta @ pi
        theta = (self.a0 + node_comm) / (self.b0 + exposure)
        return {"theta": theta, "pi": pi}
