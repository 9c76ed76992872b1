"""Geweke (2004) joint-distribution simulators for the samplers of this package.

The joint distribution of a locally private Poisson factorization is

    Z ~ prior,   y ~ Pois(mu(Z)) on observed entries,   y_tilde = y + tau,   tau ~ 2Geo(alpha)

(with the Bessel augmentation, ``tau = g+ - g-``, ``g± ~ Pois(lam±)``, ``lam± ~ Exp(mean
alpha / (1 - alpha))``, and ``lam±`` belong to the state). Two simulators target it:

* marginal-conditional — iid draws of everything from the generative process;
* successive-conditional — start from one such draw, then alternate one sweep of the sampler
  given the data (privacy step, then model step) with fresh data given the latents.

If the sampler leaves the posterior invariant, both give the same distribution of any test
function; :func:`lpp.testing.geweke_test` compares the two. ``method="nonprivate"`` tests the
model's own sampler (data = ``y``); ``"collapsed"`` and ``"bessel"`` add the privacy step
(data = ``y_tilde``); any :class:`~lpp.inference.privacy.PrivacyStep` instance can be passed to
test a custom one. With ``"collapsed"`` and the built-in topic model the chain runs the sparse
sampler (:mod:`lpp.inference.sparse_topics`) as :func:`~lpp.inference.fit_private` does, unless
``sparse=False``; passing a ``CollapsedPrivacy()`` instance tests the dense one. Use small problems and a prior that is not too diffuse (e.g. ``a0 = 1``):
the test needs the chain to mix within a batch.
"""
from __future__ import annotations

import numpy as np

from lpp._rng import as_generator, base_seed
from lpp.inference._seeds import derive_seed
from lpp.inference._validate import observed_mask
from lpp.inference.driver import sparse_applies
from lpp.inference.models.base import Observed, PoissonFactorization
from lpp.inference.privacy import PRIVACY_STEPS, BesselPrivacy, PrivacyStep, noise_levels
from lpp.inference.sparse_topics import SparseTopicPrivacy, as_dense_counts

_TAG_PRIVACY = 31
_TAG_MODEL = 32


def _privacy_step(method) -> PrivacyStep | None:
    if isinstance(method, PrivacyStep):
        return method
    if method == "nonprivate":
        return None
    if method in PRIVACY_STEPS:
        return PRIVACY_STEPS[method]()
    raise ValueError(f"method must be 'nonprivate', {sorted(PRIVACY_STEPS)} or a PrivacyStep")


class _Simulator:
    def __init__(self, model: PoissonFactorization, shape, method, alpha, mask, seed,
                 sparse=None):
        self.model = model
        self.shape = tuple(shape)
        model.check_shape(self.shape)
        obs = observed_mask(mask, self.shape)
        never = model.always_missing(self.shape)
        if never is not None:
            obs &= ~never
        self.observed = Observed(obs)
        model.check_observed(self.observed)
        self.step = _privacy_step(method)
        self.bessel = isinstance(self.step, BesselPrivacy)
        if self.step is not None:
            self.noise = noise_levels(alpha, self.shape)
            self.alpha = self.noise.full()
            self.lam_mean = self.alpha / (1.0 - self.alpha)
        self.sparse = (isinstance(method, str) and sparse is not False
                       and sparse_applies(model, method, getattr(self, "noise", None)))
        if sparse and not self.sparse:
            raise ValueError("sparse=True needs method='collapsed', the built-in TopicModel and "
                             "a row-constant alpha")
        self.observed_flat = np.flatnonzero(self.observed.mask)
        self.rng = as_generator(seed)
        self.kernel_seed = base_seed(self.rng)

    # ----- generative pieces (numpy, independent of the kernels) ------------------------------
    def counts(self, mu):
        return np.where(self.observed.mask, self.rng.poisson(mu), 0)

    def noise_state(self):
        if not self.bessel:
            return {}
        return {"lam_plus": self.rng.exponential(self.lam_mean),
                "lam_minus": self.rng.exponential(self.lam_mean)}

    def privatize(self, y, aux):
        if self.bessel:
            tau = self.rng.poisson(aux["lam_plus"]) - self.rng.poisson(aux["lam_minus"])
        else:
            # numpy's geometric counts trials: G - 1 has P(j) = alpha^j (1 - alpha)
            p = 1.0 - self.alpha
            tau = self.rng.geometric(p) - self.rng.geometric(p)
        return np.where(self.observed.mask, y + tau, 0)

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
        seed_p = derive_seed(self.kernel_seed, _TAG_PRIVACY)
        seed_m = derive_seed(self.kernel_seed, _TAG_MODEL)
        rows = []
        t = 0
        for _ in range(n):
            for _ in range(thin):
                if self.sparse:
                    y = SparseTopicPrivacy(y_tilde, self.noise, self.observed.mask).sample(seed_p,
                                                                                           t)
                elif self.step is not None:
                    y, aux = self.step.sample(y_tilde, self.noise, mu, self.observed.mask, aux,
                                              seed_p, t)
                state = self.model.step(state, y, self.observed, seed_m, t)
                y = as_dense_counts(y)
                mu = self.model.rate(state)
                if self.step is not None:
                    y_tilde = self.privatize(y, aux)
                else:
                    y = self.counts(mu)
                t += 1
            rows.append(self.functions(state, mu, y, y_tilde, aux))
        return {k: np.array([r[k] for r in rows]) for k in rows[0]}


def geweke_simulations(model: PoissonFactorization, shape, *, method="collapsed", alpha=None,
                       n_forward: int = 10_000, n_chain: int = 10_000, thin: int = 1, mask=None,
                       seed=None, sparse=None):
    """Draws of the test functions from both simulators: ``(forward, chain)`` dicts of arrays.

    ``shape``: data shape (keep it tiny); ``alpha``: noise level for the private methods;
    ``thin``: sampler sweeps between recorded chain values; ``mask``: True = missing;
    ``sparse``: as in :func:`~lpp.inference.fit_private` (None: the sparse topic sampler where
    it applies).
    Test functions: the model's :meth:`~PoissonFactorization.summaries`, the means of ``mu``,
    ``y`` and ``y^2``, of ``y_tilde^2`` and of the privacy step's auxiliary arrays.
    """
    sim = _Simulator(model, shape, method, alpha, mask, seed, sparse)
    return sim.forward(n_forward), sim.chain(n_chain, thin)
