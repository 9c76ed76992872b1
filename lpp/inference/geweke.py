"""Geweke (2004) joint-distribution simulators for the samplers of this package.

The joint distribution of a locally private Poisson factorization is

    Z ~ prior,   y ~ Pois(mu(Z)) on observed entries,   y_tilde = y + tau,   tau ~ 2Geo(alpha)

(with the Bessel augmentation, ``tau = g+ - g-``, ``g± ~ Pois(lam±)``, ``lam± ~ Exp(mean
alpha / (1 - alpha))``, and ``lam±`` belong to the state). Two simulators target it:

* marginal-conditional — iid draws of everything from the generative process;
* successive-conditional — start from one such draw, then alternate one sweep of the sampler
  given the data with fresh data given the latents.

The successive-conditional simulator drives the very :class:`~lpp.inference.GibbsSampler` that
:func:`~lpp.inference.fit_private` runs (fused engine included, where one applies), swapping in
the fresh data between sweeps; so a passing test checks the code users run. If the sampler
leaves the posterior invariant, both simulators give the same distribution of any test
function; :func:`lpp.testing.geweke_test` compares the two. ``method="nonprivate"`` tests the
model's own sampler (data = ``y``); a privacy step's name or instance adds it (data =
``y_tilde``). Use small problems and a prior that is not too diffuse (e.g. ``a0 = 1``): the test
needs the chain to mix within a batch.
"""
from __future__ import annotations

import numpy as np

from lpp.randomness import as_generator, base_seed
from lpp.inference.chain import GibbsSampler, observed_entries
from lpp.inference.models.base import PoissonFactorization
from lpp.inference.privacy import BesselPrivacy, make_privacy_step, noise_levels
from lpp.mechanism import sample_two_sided_geometric


class _Simulator:
    def __init__(self, model: PoissonFactorization, shape, method, alpha, mask, rng,
                 sparse=None):
        self.model = model
        self.shape = tuple(shape)
        self.user_mask, self.sparse = mask, sparse
        self.observed = observed_entries(model, self.shape, mask)
        self.step = None if method == "nonprivate" else make_privacy_step(method)
        self.bessel = isinstance(self.step, BesselPrivacy)
        self.alpha_arg = alpha
        if self.step is not None:
            self.alpha = noise_levels(alpha, self.shape).full()
            self.lam_mean = self.alpha / (1.0 - self.alpha)
        self.observed_flat = np.flatnonzero(self.observed.is_observed)
        self.rng = as_generator(rng)
        self.kernel_seed = base_seed(self.rng)

    # ----- generative pieces (numpy, independent of the kernels) ------------------------------
    def counts(self, mu):
        return np.where(self.observed.is_observed, self.rng.poisson(mu), 0)

    def noise_state(self):
        if not self.bessel:
            return {}
        return {"lam_plus": self.rng.exponential(self.lam_mean),
                "lam_minus": self.rng.exponential(self.lam_mean)}

    def privatize(self, y, aux):
        if self.bessel:
            tau = self.rng.poisson(aux["lam_plus"]) - self.rng.poisson(aux["lam_minus"])
        else:
            tau = sample_two_sided_geometric(self.alpha, rng=self.rng)
        return np.where(self.observed.is_observed, y + tau, 0)

    def functions(self, state, mu, y, y_tilde, aux) -> dict[str, float]:
        idx = self.observed_flat
        n = idx.size
        out = dict(self.model.summaries(state))
        out["mean mu"] = float(mu.ravel()[idx].sum()) / n
        y_obs = y.ravel()[idx].astype(np.float64)
        out["mean y"] = float(y_obs.sum()) / n
        out["mean y^2"] = float(np.dot(y_obs, y_obs)) / n
        if y_tilde is not None:
            yt_obs = y_tilde.ravel()[idx].astype(np.float64)
            out["mean y_tilde^2"] = float(np.dot(yt_obs, yt_obs)) / n
        for name, arr in aux.items():
            out[f"mean {name}"] = float(arr.ravel()[idx].sum()) / n
        return out

    def draw_joint(self):
        state = self.model.sample_prior(self.shape, self.rng)
        mu = self.model.rate(state)
        y = self.counts(mu)
        aux = self.noise_state()
        y_tilde = self.privatize(y, aux) if self.step is not None else None
        return state, mu, y, aux, y_tilde

    # ----- the two simulators -----------------------------------------------------------------
    def forward(self, n):
        rows = [self.functions(*self._order(*self.draw_joint())) for _ in range(n)]
        return {k: np.array([r[k] for r in rows]) for k in rows[0]}

    @staticmethod
    def _order(state, mu, y, aux, y_tilde):
        return state, mu, y, y_tilde, aux

    def chain(self, n, thin):
        state, mu, y, aux, y_tilde = self.draw_joint()
        if self.step is None:
            sampler = GibbsSampler.nonprivate(y, self.model, rng=self.kernel_seed,
                                              mask=self.user_mask, init=state, sparse=self.sparse)
        else:
            sampler = GibbsSampler.private(y_tilde, self.alpha_arg, self.model, method=self.step,
                                           rng=self.kernel_seed, mask=self.user_mask, init=state,
                                           sparse=self.sparse)
        sampler.restore(state, aux, 0)
        rows = []
        for _ in range(n):
            for _ in range(thin):
                sampler.sweep()
                state, y, mu, aux = sampler.state, sampler.y, sampler.mu, sampler.aux
                if self.step is not None:
                    y_tilde = self.privatize(y, aux)
                    sampler.replace_data(y_tilde)
                else:
                    y = self.counts(mu)
                    sampler.replace_data(y)
            rows.append(self.functions(state, mu, y, y_tilde, aux))
        return {k: np.array([r[k] for r in rows]) for k in rows[0]}


def geweke_simulations(model: PoissonFactorization, shape, *, method="collapsed", alpha=None,
                       n_forward: int = 10_000, n_chain: int = 10_000, thin: int = 1, mask=None,
                       rng=None, sparse=None):
    """Draws of the test functions from both simulators: ``(forward, chain)`` dicts of arrays.

    ``shape``: data shape (keep it tiny); ``alpha``: noise level for the private methods;
    ``thin``: sampler sweeps between recorded chain values; ``mask``: True = missing;
    ``sparse``: as in :func:`~lpp.inference.fit_private` (None: a fused engine where one
    applies, False: the plain sweep); ``rng``: int, Generator or None.
    Test functions: the model's :meth:`~PoissonFactorization.summaries`, the means of ``mu``,
    ``y`` and ``y^2``, of ``y_tilde^2`` and of the privacy step's auxiliary arrays.
    """
    sim = _Simulator(model, shape, method, alpha, mask, rng, sparse)
    return sim.forward(n_forward), sim.chain(n_chain, thin)
