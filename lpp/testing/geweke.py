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
function; :func:`geweke_test` compares the two. ``method="nonprivate"`` tests the
model's own sampler (data = ``y``); a privacy step's name or instance adds it (data =
``y_tilde``). Use small problems and a prior that is not too diffuse (e.g. ``a0 = 1``): the test
needs the chain to mix within a batch.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from lpp.randomness import as_generator, base_seed
from lpp.inference.chain import GibbsSampler, observed_entries
from lpp.inference.models.base import PoissonFactorization
from lpp.inference.privacy import (
    BesselPrivacy,
    is_geometric,
    noise_levels,
    privacy_for,
)
from lpp.mechanism import sample_two_sided_geometric
from lpp.testing.goodness_of_fit import FALSE_ALARM

__all__ = ["GewekeResult", "geweke_simulations", "geweke_test"]


class _Simulator:
    def __init__(self, model: PoissonFactorization, shape, method, alpha, mask, rng,
                 sparse=None, device="cpu"):
        self.model = model
        self.shape = tuple(shape)
        self.user_mask, self.sparse, self.device = mask, sparse, device
        self.observed = observed_entries(model, self.shape, mask)
        # a mechanism of another kind than the geometric one privatizes the fresh data itself
        self.mechanism = None if is_geometric(alpha) else alpha
        self.step = None if method == "nonprivate" else privacy_for(alpha, method, self.shape)[0]
        self.bessel = isinstance(self.step, BesselPrivacy)
        self.alpha_arg = alpha
        if self.step is not None and self.mechanism is None:
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
        if self.mechanism is not None:
            return np.where(self.observed.is_observed,
                            self.mechanism.privatize(y, rng=self.rng), 0)
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
                                              mask=self.user_mask, init=state, sparse=self.sparse,
                                              device=self.device)
        else:
            sampler = GibbsSampler.private(y_tilde, self.alpha_arg, self.model, method=self.step,
                                           rng=self.kernel_seed, mask=self.user_mask, init=state,
                                           sparse=self.sparse, device=self.device)
        sampler.restore(state, aux, 0)
        rows = []
        for _ in range(n):
            for _ in range(thin):
                sampler.sweep()
                state, y, mu = sampler.state, sampler.y, sampler.mu
                # the privacy step's auxiliary arrays; an engine's carried ones are no
                # quantity of the joint distribution the forward simulator draws
                aux = {name: arr for name, arr in sampler.aux.items()
                       if name not in sampler.carries}
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
                       rng=None, sparse=None, device="cpu"):
    """Draws of the test functions from both simulators: ``(forward, chain)`` dicts of arrays.

    ``shape``: data shape (keep it tiny); ``alpha``: noise level for the private methods, or a
    mechanism of another kind (:func:`lpp.inference.privacy.register_mechanism`), which then
    privatizes the simulated counts with its own ``privatize(y, rng=...)``;
    ``thin``: sampler sweeps between recorded chain values; ``mask``: True = missing;
    ``sparse``: as in :func:`~lpp.inference.fit_private` (None: a fused engine where one
    applies, False: the plain sweep); ``device``: where the chain's sweeps run (``"cuda"``: the
    GPU engines, or their CPU emulation under
    ``lpp.inference.engines.cuda.launch_settings(emulate=True)``); ``rng``: int, Generator or
    None.
    Test functions: the model's :meth:`~PoissonFactorization.summaries`, the means of ``mu``,
    ``y`` and ``y^2``, of ``y_tilde^2`` and of the privacy step's auxiliary arrays.
    """
    sim = _Simulator(model, shape, method, alpha, mask, rng, sparse, device)
    return sim.forward(n_forward), sim.chain(n_chain, thin)


@dataclass(frozen=True)
class GewekeResult:
    """Per test function: ``z``, two-sided ``pvalues``; ``threshold`` is the Bonferroni level."""

    names: tuple[str, ...]
    z: np.ndarray
    pvalues: np.ndarray
    threshold: float
    batch_autocorr: np.ndarray

    def __bool__(self) -> bool:  # truthy when no test function rejects at FALSE_ALARM overall
        return bool(np.all(self.pvalues >= self.threshold))

    def __str__(self) -> str:
        rows = [f"{n:>24s}  z={z:+7.3f}  p={p:.3g}  batch-acf={r:+.2f}"
                for n, z, p, r in zip(self.names, self.z, self.pvalues, self.batch_autocorr)]
        return "\n".join(rows + [f"{'Bonferroni threshold':>24s}  {self.threshold:.3g}"])


def geweke_test(forward, chain, *, n_batches: int = 50) -> GewekeResult:
    """Geweke's (2004) "getting it right" test of a posterior sampler.

    ``forward[name]`` holds iid draws of a test function from the *marginal-conditional*
    simulator (parameters from the prior, data given parameters); ``chain[name]`` holds its
    successive values along the *successive-conditional* simulator (alternate one transition of
    the sampler given the data with fresh data given the parameters). Both target the same
    joint distribution exactly when the sampler is right.

    For each function: ``z = (mean_forward - mean_chain) / sqrt(se_forward^2 + se_chain^2)``,
    the chain's standard error from ``n_batches`` contiguous batch means; the p-value is
    two-sided from Student's t with Welch-Satterthwaite degrees of freedom. The sampler passes
    when every p-value is at least ``FALSE_ALARM / n_functions`` (Bonferroni: overall false-alarm
    rate at most ``FALSE_ALARM``). ``batch_autocorr`` is the lag-1 autocorrelation of each
    function's batch means; values far above ~0.2 mean the batches are too short for the chain's
    mixing and the standard error is optimistic.
    """
    names = tuple(forward)
    if not names or set(names) != set(chain):
        raise ValueError("forward and chain must name the same, non-empty set of test functions")
    if n_batches < 10:
        raise ValueError("use at least 10 batches")
    z, pvals, acf = [], [], []
    for name in names:
        f = np.asarray(forward[name], dtype=np.float64)
        c = np.asarray(chain[name], dtype=np.float64)
        if f.ndim != 1 or c.ndim != 1 or f.size < 10 or c.size < n_batches * 10:
            raise ValueError(f"{name}: need 1-d draws, >= 10 forward and "
                             f">= {10 * n_batches} chain values")
        if not (np.isfinite(f).all() and np.isfinite(c).all()):
            raise ValueError(f"{name}: draws must be finite")
        size = c.size // n_batches
        batches = c[: size * n_batches].reshape(n_batches, size).mean(axis=1)
        v_f = f.var(ddof=1) / f.size
        v_c = batches.var(ddof=1) / n_batches
        if v_f + v_c == 0.0:
            stat = 0.0 if f.mean() == batches.mean() else np.inf
            df = 1.0
        else:
            stat = (f.mean() - batches.mean()) / np.sqrt(v_f + v_c)
            df = (v_f + v_c) ** 2 / (v_f ** 2 / (f.size - 1) + v_c ** 2 / (n_batches - 1))
        z.append(stat)
        pvals.append(float(2.0 * stats.t.sf(abs(stat), df)))
        centred = batches - batches.mean()
        denom = float(np.dot(centred, centred))
        acf.append(float(np.dot(centred[:-1], centred[1:]) / denom) if denom > 0 else 0.0)
    return GewekeResult(names, np.array(z), np.array(pvals), FALSE_ALARM / len(names),
                        np.array(acf))
