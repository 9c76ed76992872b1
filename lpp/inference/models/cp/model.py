"""Poisson CP (canonical polyadic) factorization of a 3-way count tensor.

``y[i, j, l] ~ Pois(mu[i, j, l])``, ``mu[i, j, l] = sum_r A[i, r] B[j, r] C[l, r]`` with the
factor matrices ``A`` (I x R), ``B`` (J x R), ``C`` (L x R) iid ``Gamma(a0, rate b0)``, stored as
``{"factor0", "factor1", "factor2"}``.

Gibbs sweep: allocate each observed count over the R rank-one terms; then update the factor
matrices one mode at a time, each given the current other two:
``A[i, r] ~ Gamma(a0 + y[i, ., ., r], b0 + sum_{j,l} obs[i, j, l] B[j, r] C[l, r])``, etc.

It reuses the privacy step unchanged — the privacy code sees only ``mu``.
"""
from __future__ import annotations

import numpy as np

from lpp.randomness import Tag, derive_seed
from lpp.inference.kernels import gamma_matrix_kernel
from lpp.inference.models.base import Observed, PoissonFactorization
from lpp.inference.models.cp.kernels import allocate_cp3_kernel

_NAMES = ("factor0", "factor1", "factor2")


def _khatri_rao(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Column-wise Kronecker product: row ``j * len(b) + l`` is ``a[j] * b[l]``."""
    return (a[:, None, :] * b[None, :, :]).reshape(-1, a.shape[1])


class CPTensorModel(PoissonFactorization):
    """Poisson CP factorization of a 3-way tensor with ``n_components`` components.

    ``rank`` (the CP rank) is an alias of ``n_components``.
    """

    name = "cp"
    data_ndim = 3
    capabilities = frozenset({"cp_factors"})

    @property
    def rank(self) -> int:
        """The CP rank: an alias of ``n_components``."""
        return self.n_components

    def latent_shapes(self, shape):
        return {name: (size, self.n_components) for name, size in zip(_NAMES, shape)}

    def rate(self, state):
        f0, f1, f2 = (state[n] for n in _NAMES)
        return (f0 @ _khatri_rao(f1, f2).T).reshape(f0.shape[0], f1.shape[0], f2.shape[0])

    def allocate(self, state, y, observed: Observed, seed, iteration):
        f0, f1, f2 = (state[n] for n in _NAMES)
        totals = allocate_cp3_kernel(y, observed.is_observed, f0, f1, f2, seed, iteration)
        return dict(zip(_NAMES, totals))

    def _exposure(self, mode: int, factors: list[np.ndarray], observed: Observed) -> np.ndarray:
        """``sum over the other two indices`` of obs * (product of the other two factors)."""
        others = [factors[m] for m in range(3) if m != mode]
        if observed.complete:
            return np.broadcast_to(others[0].sum(axis=0) * others[1].sum(axis=0),
                                   (factors[mode].shape[0], self.n_components))
        unfolded = np.moveaxis(observed.weights, mode, 0).reshape(factors[mode].shape[0], -1)
        return unfolded @ _khatri_rao(*others)

    def update_latents(self, state, stats, observed: Observed, seed, iteration):
        factors = [state[n] for n in _NAMES]
        for mode, name in enumerate(_NAMES):
            rate = np.ascontiguousarray(self.b0 + self._exposure(mode, factors, observed))
            factors[mode] = gamma_matrix_kernel(stats[name], self.a0, rate,
                                                derive_seed(seed, Tag.LATENT_1 + mode), iteration)
        return dict(zip(_NAMES, factors))
