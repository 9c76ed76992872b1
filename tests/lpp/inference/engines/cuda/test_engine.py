"""The GPU engines (lpp.inference.engines.cuda.engine) through the public API, their thread code
run on the CPU (``launch_settings(emulate=True)``, the host emulation the simulator tests show
equal to the CUDA kernels): Geweke tests of the collapsed, naive and non-private chains, an
enumerated posterior, equality in distribution with the CPU engine, reproducibility,
checkpoints, the fit's record, the refusals, the device buffers' lifetimes, the log joint, and
the door to numba-cuda (nothing imported by ``import lpp``; clear errors without it or a GPU).

Every chain here has 2 topics: the host kernels are compiled once per number of topics.
"""
import importlib.util
import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

from lpp.formats.fits import load_chains, load_fit, save_fit
from lpp.inference import (
    CommunityModel,
    FixedTopicModel,
    GibbsSampler,
    TopicModel,
    checkpoint_from_fit,
    fit_nonprivate,
    fit_private,
)
from lpp.inference import RunOptions
from lpp.inference.count_sources import TrueCounts
from lpp.inference.engines import cuda as cuda_engines
from lpp.inference.engines.cuda import (
    CudaKnownTopicEngine,
    CudaSparseTopicEngine,
    DeviceCounts,
    DeviceState,
    launch_settings,
)
from lpp.inference.engines.cuda.kernels import HostBackend
from lpp.inference.models.base import Observed
from lpp.inference.privacy import make_privacy_step, noise_levels
from lpp.mechanism import privatize
from lpp.testing import FALSE_ALARM, chisquare_gof, geweke, geweke_test

pytestmark = pytest.mark.cuda

ROOT = Path(__file__).resolve().parents[5]
QUIET = {"progress": False}
ENGINE_OF = {"collapsed": "cuda-sparse", "naive": "cuda-known", "nonprivate": "cuda-known"}


@pytest.fixture(autouse=True)
def emulate():
    """Every chain built for device='cuda' runs the thread code on the CPU."""
    with launch_settings(emulate=True):
        yield


@pytest.fixture(scope="module")
def data():
    """``(y, y_tilde)`` of shape (6, 8): a row of positive privatized counts only (its
    non-positive part has no mass: the residual is recomputed), a row of non-positive ones
    only, and mixed rows."""
    rng = np.random.default_rng(3)
    y = rng.poisson(rng.gamma(1.0, 1.0, (6, 2)) @ rng.gamma(1.0, 2.0, (2, 8)))
    y_tilde = privatize(y, 0.5, rng=rng)
    y_tilde[0] = np.arange(1, 9)
    y_tilde[1] = -(np.arange(8) % 3)
    assert (y_tilde > 0).any() and (y_tilde < 0).any() and (y_tilde[2:] == 0).any()
    return y, y_tilde


def _fit(kind, data, **kw):
    """A fit of ``kind`` (collapsed, naive, nonprivate) on ``data`` with device='cuda'."""
    y, y_tilde = data
    run, kw = RunOptions.split({**QUIET, **kw})
    kw = {"device": "cuda", "run": run, **kw}
    if "n_chains" in kw:
        kw["chains"] = kw.pop("n_chains")
    if kind == "nonprivate":
        return fit_nonprivate(y, TopicModel(2), **kw)
    return fit_private(y_tilde, 0.5 if kind == "collapsed" else None, TopicModel(2),
                       method=kind, **kw)


def _chain(kind, data, **kw):
    y, y_tilde = data
    kw = {"device": "cuda", **kw}
    if kind == "nonprivate":
        return GibbsSampler.nonprivate(y, TopicModel(2), **kw)
    return GibbsSampler.private(y_tilde, 0.5 if kind == "collapsed" else None, TopicModel(2),
                                method=kind, **kw)


# --- Geweke: the chains users run target the joint distribution ----------------------------------

class _OnCuda:
    """``GibbsSampler`` as lpp.testing.geweke builds it (with its device): ``naive`` builds the
    naive chain where the non-private one is asked for (on
    non-negative data the two target the same posterior); ``alpha`` overrides the noise level
    the private chain is told (a wrong one must fail)."""

    def __init__(self, naive=False, alpha=None):
        self.naive, self.alpha, self.made = naive, alpha, []

    def private(self, y_tilde, alpha, model, **kw):
        alpha = alpha if self.alpha is None else self.alpha
        return self._made(GibbsSampler.private(y_tilde, alpha, model, **kw))

    def nonprivate(self, y, model, **kw):
        if self.naive:
            return self._made(GibbsSampler.private(y, None, model, method="naive", **kw))
        return self._made(GibbsSampler.nonprivate(y, model, **kw))

    def _made(self, chain):
        self.made.append(chain)
        return chain


GEWEKE_MODEL = TopicModel(2, a0=3.0, b0=3.0)  # as tests/lpp/inference/test_geweke.py


def _geweke(monkeypatch, sampler, method, seed, alpha=0.7):
    """The Geweke test of ``device="cuda"`` chains; ``sampler`` (an :class:`_OnCuda`) where the
    test needs what the simulators do not offer (the naive chain, a wrong alpha)."""
    if sampler is not None:
        monkeypatch.setattr(geweke, "GibbsSampler", sampler)
    forward, chain = geweke.geweke_simulations(
        GEWEKE_MODEL, (3, 4), method=method, alpha=None if method == "nonprivate" else alpha,
        n_forward=10_000, n_chain=10_000, rng=seed, device="cuda")
    return geweke_test(forward, chain)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["collapsed", "collapsed per-row alpha", "naive", "nonprivate"])
def test_the_gpu_chains_get_it_right(monkeypatch, kind):
    method = kind.split()[0]
    sampler = _OnCuda(naive=True) if method == "naive" else None
    alpha = np.array([[0.5], [0.7], [0.85]]) if "per-row" in kind else 0.7
    made = []
    monkeypatch.setattr(GibbsSampler, "sweep", _recording(GibbsSampler.sweep, made))
    result = _geweke(monkeypatch, sampler, "collapsed" if method == "collapsed" else "nonprivate",
                     seed=21, alpha=alpha)
    assert {(chain.engine, chain.method) for chain in made} == {(ENGINE_OF[method], method)}
    assert result, f"\n{result}"


def _recording(sweep, made):
    """``GibbsSampler.sweep`` that notes each chain it advances (once)."""
    def recorded(chain):
        if not made or made[-1] is not chain:
            made.append(chain)
        return sweep(chain)
    return recorded


@pytest.mark.slow
def test_the_geweke_check_catches_a_chain_told_the_wrong_alpha(monkeypatch):
    result = _geweke(monkeypatch, _OnCuda(alpha=0.55), "collapsed", seed=21)
    assert not result, f"a wrong alpha passed:\n{result}"


# --- the posterior of a 1 x 1 problem, enumerated ------------------------------------------------

A0, B0, ALPHA, REPLICATES, SWEEPS = 2.0, 1.0, 0.5, 2000, 12


@pytest.fixture(scope="module")
def prior_counts():
    """The prior pmf of ``y`` on one entry under TopicModel(2, a0=A0, b0=B0) on 0..199:
    each topic's ``theta phi`` given ``phi`` is Gamma(A0, rate B0 / phi), so its Poisson count
    is NegBin(A0, B0 / (B0 + phi)), integrated over ``phi`` by quadrature; the entry's count
    is the sum of the two topics' (a convolution)."""
    support = np.arange(200)

    def integrand(phi):
        return stats.nbinom.pmf(support, A0, B0 / (B0 + phi)) * stats.gamma.pdf(phi, A0,
                                                                                scale=1 / B0)

    one, _ = integrate.quad_vec(integrand, 0.0, np.inf, epsabs=1e-14)
    both = np.convolve(one, one)[:support.size]
    assert abs(both.sum() - 1.0) < 1e-5
    return support, both


def _posterior_draws(y_tilde, alpha):
    """``y`` after SWEEPS sweeps of REPLICATES independent chains (seeds 0, 1, ...) from the
    same start: draws from the posterior for a chain that mixes within a few sweeps."""
    chain = GibbsSampler.private(np.array([[y_tilde]]), alpha, TopicModel(2, a0=A0, b0=B0),
                                 rng=0, device="cuda")
    assert chain.engine == "cuda-sparse"
    start = {name: value.copy() for name, value in chain.state.items()}
    draws = np.empty(REPLICATES, np.int64)
    for r in range(REPLICATES):
        chain.seed = r
        chain.restore(start, {}, 0)
        for _ in range(SWEEPS):
            chain.sweep()
        draws[r] = chain.y[0, 0]
    return draws


def _exact(prior_counts, y_tilde):
    support, prior = prior_counts
    w = prior * ALPHA ** np.abs(y_tilde - support)
    return support, w / w.sum()


@pytest.mark.slow
@pytest.mark.parametrize("y_tilde", [0, 6])
def test_the_chain_draws_the_enumerated_posterior(prior_counts, y_tilde):
    """``P(y | y_tilde) ∝ p(y) alpha^|y_tilde - y|`` with the prior pmf ``p`` enumerated: the
    entry is non-positive (the aggregate tokens) or positive (the two-piece conditional)."""
    assert chisquare_gof(_posterior_draws(y_tilde, ALPHA), *_exact(prior_counts, y_tilde))


@pytest.mark.slow
def test_the_enumeration_check_has_power(prior_counts):
    """The chain told a wrong alpha (0.7 for 0.5) fails the same check."""
    assert not chisquare_gof(_posterior_draws(6, 0.7), *_exact(prior_counts, 6))


# --- the same posterior as the CPU engine --------------------------------------------------------

def _chain_means(device, alpha, y_tilde, seeds):
    """Per chain, the posterior means of mean(mu), mean(y), mean(y^2) (as
    tests/lpp/inference/test_posterior.py compares two privacy steps)."""
    out = []
    for seed in seeds:
        res = fit_private(y_tilde, alpha, TopicModel(2, a0=1.0, b0=1.0),
                          run=RunOptions(n_iter=700, burn_in=100, save_latents=False,
                                         save_counts=True, progress=False),
                          rng=seed, device=device)
        assert res.engine == {"cpu": "sparse", "cuda": "cuda-sparse"}[device]
        y = res.samples["y"].astype(np.float64)
        out.append([res.mu_hat.mean(), y.mean(), (y ** 2).mean()])
    return np.array(out)


@pytest.mark.slow
def test_the_gpu_and_cpu_engines_agree_in_distribution():
    """8 independent chains per engine: Welch t-tests (Bonferroni over the three) accept
    equality; the same comparison tells the right alpha from a wrong one."""
    rng = np.random.default_rng(8)
    mu = rng.gamma(1.0, 1.0, (12, 2)) @ rng.gamma(1.0, 1.0, (2, 10))
    y_tilde = privatize(rng.poisson(mu), 0.6, rng=rng)
    cpu = _chain_means("cpu", 0.6, y_tilde, range(8))
    gpu = _chain_means("cuda", 0.6, y_tilde, range(100, 108))
    pvals = stats.ttest_ind(cpu, gpu, equal_var=False).pvalue
    assert np.all(pvals > FALSE_ALARM / 3), pvals
    wrong = _chain_means("cuda", 0.45, y_tilde, range(200, 208))
    assert np.any(stats.ttest_ind(cpu, wrong, equal_var=False).pvalue < FALSE_ALARM / 3)


# --- reproducibility, chains, checkpoints, the record --------------------------------------------

@pytest.mark.parametrize("kind", ["collapsed", "naive", "nonprivate"])
def test_a_seed_repeats_its_chain_and_another_seed_does_not(data, kind, same_chain):
    kw = dict(n_iter=6, burn_in=1, thin=2, save_counts=True)
    a, b, c = _fit(kind, data, rng=5, **kw), _fit(kind, data, rng=5, **kw), _fit(kind, data,
                                                                                 rng=6, **kw)
    assert a.engine == ENGINE_OF[kind] and "host emulation" in a.device
    assert a.saved_iterations.tolist() == [3, 5] and a.samples["theta"].shape == (2, 6, 2)
    assert a.samples["phi"].shape == (2, 2, 8)
    assert a.samples["y"].shape == (2, 6, 8) and a.samples["y"].dtype == np.int64
    same_chain(a, b)
    assert a.seed == b.seed != c.seed
    assert not np.array_equal(a.samples["theta"], c.samples["theta"])
    mus = [t @ p for t, p in zip(a.samples["theta"], a.samples["phi"])]
    np.testing.assert_allclose(a.mu_hat, np.mean(mus, axis=0), rtol=1e-12)


def test_naive_is_the_non_private_chain_of_the_truncated_data(data, same_chain):
    _, y_tilde = data
    naive = fit_private(y_tilde, None, TopicModel(2), method="naive",
                        run=RunOptions(n_iter=5, save_counts=True, progress=False), rng=3,
                        device="cuda")
    direct = fit_nonprivate(np.maximum(y_tilde, 0), TopicModel(2),
                            run=RunOptions(n_iter=5, save_counts=True, progress=False), rng=3,
                            device="cuda")
    assert naive.engine == direct.engine == "cuda-known"
    same_chain(naive, direct)


def test_chains_run_on_their_own_seeds(data, same_chain):
    kw = dict(n_iter=6, burn_in=2, save_counts=True)
    res = _fit("collapsed", data, rng=3, n_chains=2, **kw)
    assert res.n_chains == 2 and res.engine == "cuda-sparse" and len(set(res.seeds)) == 2
    assert not np.array_equal(res.chains[0].samples["theta"], res.chains[1].samples["theta"])
    assert not np.array_equal(res.chains[0].samples["y"], res.chains[1].samples["y"])
    for seed, chain in zip(res.seeds, res.chains):
        same_chain(chain, _fit("collapsed", data, rng=seed, **kw))


@pytest.mark.parametrize("kind", ["collapsed", "nonprivate"])
def test_interrupt_checkpoint_and_resume_equal_an_uninterrupted_run(data, kind, tmp_path,
                                                                    same_chain):
    kw = dict(n_iter=14, burn_in=2, thin=3, rng=12, save_counts=True)
    full = _fit(kind, data, **kw)

    def interrupt(chain):
        if chain.iteration == 8:
            raise KeyboardInterrupt

    path = tmp_path / "chain.npz"
    part = _fit(kind, data, checkpoint=path, checkpoint_every=3, callback=interrupt, **kw)
    assert part.interrupted and part.iterations_done == 8 and not part.complete
    assert part.saved_iterations.tolist() == [5, 8]
    resumed = _fit(kind, data, checkpoint=path, resume=True, **kw)
    assert resumed.complete and resumed.iter_seconds.shape == (14,)
    same_chain(full, resumed)


def test_a_gpu_checkpoint_is_not_resumed_on_the_cpu(data, tmp_path):
    kw = dict(n_iter=6, rng=12, checkpoint=tmp_path / "chain.npz", checkpoint_every=2)
    _fit("collapsed", data, callback=_interrupt_at(4), **kw)
    with pytest.raises(ValueError, match="engine"):
        _fit("collapsed", data, resume=True, **{**kw, "device": "cpu"})


def _interrupt_at(n):
    def callback(chain):
        if chain.iteration == n:
            raise KeyboardInterrupt
    return callback


def test_a_gpu_fit_records_its_device_and_a_cpu_fit_does_not(data, tmp_path):
    gpu = _fit("collapsed", data, n_iter=4, rng=1)
    cpu = _fit("collapsed", data, n_iter=4, rng=1, device="cpu")
    assert cpu.device == "cpu" and cpu.engine == "sparse"
    save_fit(gpu, tmp_path / "gpu", data="tiny")
    save_fit(cpu, tmp_path / "cpu", data="tiny")
    meta = json.loads((tmp_path / "gpu" / "fit.json").read_text())
    assert meta["device"] == gpu.device and "host emulation" in meta["device"]
    assert meta["engine"] == "cuda-sparse"
    cpu_meta = json.loads((tmp_path / "cpu" / "fit.json").read_text())
    assert "device" not in cpu_meta and cpu_meta["engine"] == "sparse"
    loaded = load_fit(tmp_path / "gpu")
    assert np.array_equal(loaded.mu_hat, gpu.mu_hat)
    # several chains: the record names the device too
    save_fit(_fit("collapsed", data, n_iter=4, rng=1, n_chains=2), tmp_path / "two",
             data="tiny")
    assert json.loads((tmp_path / "two" / "fit.json").read_text())["device"] == gpu.device


def test_a_saved_gpu_fit_runs_on_as_one_uninterrupted_run(data, tmp_path, same_chain, caplog):
    """Saved after 10 sweeps, written to a checkpoint from the fit (the rates' running sum
    formed again on the device from the saved draws) and continued to 16: one run of 16."""
    kw = dict(burn_in=4, thin=2, rng=5)
    save_fit(_fit("collapsed", data, n_iter=10, **kw), tmp_path / "fit", data="tiny")
    (saved,) = load_chains(tmp_path / "fit")
    checkpoint_from_fit(saved, _chain("collapsed", data, rng=5), tmp_path / "ck.npz")
    assert not [r for r in caplog.records if r.levelname == "WARNING"], caplog.text
    continued = _fit("collapsed", data, n_iter=16, checkpoint=tmp_path / "ck.npz", resume=True,
                     **kw)
    same_chain(_fit("collapsed", data, n_iter=16, **kw), continued)


# --- refusals ------------------------------------------------------------------------------------

def test_what_the_gpu_does_not_run_is_refused_naming_why(data):
    y, y_tilde = data
    mask = np.zeros(y.shape, dtype=bool)
    mask[0, 0] = True
    with pytest.raises(ValueError, match="mask"):
        fit_private(np.ma.masked_array(y_tilde, mask), 0.5, TopicModel(2), device="cuda",
                    run=RunOptions(n_iter=2, progress=False))
    with pytest.raises(ValueError, match="mask"):
        fit_nonprivate(np.ma.masked_array(y, mask), TopicModel(2), device="cuda",
                       run=RunOptions(n_iter=2, progress=False))
    with pytest.raises(ValueError, match="sparse=False"):
        fit_private(y_tilde, 0.5, TopicModel(2),
                    run=RunOptions(sparse=False, n_iter=2, progress=False), device="cuda")
    with pytest.raises(ValueError, match="sparse=False"):
        GibbsSampler.nonprivate(y, TopicModel(2), sparse=False, device="cuda")
    with pytest.raises(ValueError, match="collapse_theta"):
        fit_private(y_tilde, 0.5, TopicModel(2, collapse_theta=True), device="cuda",
                    run=RunOptions(n_iter=2, progress=False))
    with pytest.raises(ValueError, match="'bessel'"):
        fit_private(y_tilde, 0.5, TopicModel(2), method="bessel", device="cuda",
                    run=RunOptions(n_iter=2, progress=False))
    per_entry = np.full(y.shape, 0.5)
    with pytest.raises(ValueError, match="constant within rows"):
        fit_private(y_tilde, per_entry, TopicModel(2), device="cuda",
                    run=RunOptions(n_iter=2, progress=False))
    network = np.abs(y_tilde[:6, :6])
    np.fill_diagonal(network, 0)
    with pytest.raises(ValueError, match="'communities'"):
        fit_private(network, 0.5, CommunityModel(2), device="cuda",
                    run=RunOptions(n_iter=2, progress=False))
    with pytest.raises(ValueError, match="cluster"):
        fit_private(y_tilde, 0.5, TopicModel(2), cluster=object(), device="cuda",
                    run=RunOptions(n_iter=2, progress=False))
    for fit in (lambda **kw: fit_private(y_tilde, 0.5, TopicModel(2), **kw),
                lambda **kw: fit_nonprivate(y, TopicModel(2), **kw)):
        with pytest.raises(ValueError, match=r"\('cpu', 'cuda'\)"):
            fit(device="gpu", run=RunOptions(n_iter=2, progress=False))


class _OwnRates(TopicModel):
    """Overrides ``rate``: the model no longer vouches for row/column Gamma factors."""

    def rate(self, state):
        return super().rate(state)


class _OwnAllocation(TopicModel):
    """Overrides ``allocate`` (here with the same draws; a user's would differ): the GPU
    engine, which allocates by TopicModel's rule, must not run it."""

    def allocate(self, state, y, observed, seed, iteration):
        return super().allocate(state, y, observed, seed, iteration)


def test_models_that_do_not_vouch_for_gamma_factors_are_refused(data):
    y, y_tilde = data
    phi = np.ones((2, y.shape[1]))
    for model in (_OwnRates(2), FixedTopicModel(phi)):
        assert "gamma_factors" not in model.capabilities
        with pytest.raises(ValueError, match="device='cuda' runs the built-in TopicModel"):
            GibbsSampler.private(y_tilde, 0.5, model, rng=1, device="cuda")
        with pytest.raises(ValueError, match="device='cuda' runs the built-in TopicModel"):
            GibbsSampler.nonprivate(y, model, rng=1, device="cuda")


def test_a_model_with_its_own_allocation_is_refused(data):
    y, y_tilde = data
    model = _OwnAllocation(2)
    assert "row_column_factors" not in model.capabilities
    assert GibbsSampler.private(y_tilde, 0.5, model, rng=1).engine == "dense"
    with pytest.raises(ValueError, match="device='cuda'"):
        GibbsSampler.private(y_tilde, 0.5, model, rng=1, device="cuda")
    with pytest.raises(ValueError, match="device='cuda'"):
        GibbsSampler.nonprivate(y, model, rng=1, device="cuda")


def test_a_row_constant_alpha_runs_on_the_gpu(data):
    """alpha of shape (D, 1) is constant within rows: the collapsed GPU engine applies."""
    _, y_tilde = data
    alpha = np.linspace(0.3, 0.8, y_tilde.shape[0])[:, None]
    res = fit_private(y_tilde, alpha, TopicModel(2), run=RunOptions(n_iter=2, progress=False),
                      rng=1, device="cuda")
    assert res.engine == "cuda-sparse"


# --- the device buffers' lifetimes ---------------------------------------------------------------

def _engine_sweeps(y_tilde, n):
    """``n`` sweeps of a collapsed engine on the host backend: its points and draws."""
    model = TopicModel(2)
    engine = CudaSparseTopicEngine(y_tilde, noise_levels(0.5, y_tilde.shape),
                                   np.ones(y_tilde.shape, dtype=bool), HostBackend())
    state = model.sample_prior(y_tilde.shape, 4)
    observed = Observed(np.ones(y_tilde.shape, dtype=bool))
    points, draws = [], []
    for t in range(n):
        state, counts = engine.sweep(model, state, observed, 11, 12, t)
        assert isinstance(state, DeviceState) and isinstance(counts, DeviceCounts)
        points.append(state)
        draws.append(counts)
    return engine, points, draws


def test_a_point_is_readable_until_two_sweeps_later(data):
    """A point lives in one of two buffers: the next sweep keeps it, the one after overwrites
    it. Read in time, its host copy stays; read (or swept from) later, it is refused."""
    _, y_tilde = data
    engine, points, _ = _engine_sweeps(y_tilde, 2)
    first = points[0]
    assert first.is_current and set(first) == {"theta", "phi"} and len(first) == 2
    theta, phi = first["theta"], first["phi"]
    assert theta.shape == (y_tilde.shape[0], 2) and phi.shape == (2, y_tilde.shape[1])
    engine.sweep(TopicModel(2), points[1], None, 11, 12, 2)
    assert not first.is_current and first["theta"] is theta  # read in time: kept
    _, late, _ = _engine_sweeps(y_tilde, 3)  # the same chain, its first point never read
    assert not late[0].is_current and late[1].is_current
    with pytest.raises(RuntimeError, match="two sweeps later"):
        late[0].to_host()
    with pytest.raises(RuntimeError, match="two sweeps later"):
        late[0]["phi"]
    with pytest.raises(RuntimeError, match="two sweeps later"):
        engine.sweep(TopicModel(2), late[0], None, 11, 12, 3)
    assert np.array_equal(late[1]["theta"], points[1]["theta"])


def test_a_draw_of_y_is_readable_until_the_next_sweep(data):
    _, y_tilde = data
    engine, points, draws = _engine_sweeps(y_tilde, 2)
    with pytest.raises(RuntimeError, match="later sweep"):
        draws[0].dense()
    last = draws[1].dense()
    assert last.shape == y_tilde.shape and last.dtype == np.int64 and np.all(last >= 0)
    engine.sweep(TopicModel(2), points[1], None, 11, 12, 2)
    assert draws[1].dense() is last  # read in time: kept


# --- the log joint -------------------------------------------------------------------------------

#: chains whose log joint is checked: (kind, privatized data or None for the fixture's, alpha)
LOG_JOINT_CASES = {
    "collapsed": ("collapsed", None, 0.5),
    "collapsed per-row alpha": ("collapsed", None, np.linspace(0.2, 0.9, 6)[:, None]),
    "collapsed all non-positive": ("collapsed", -(np.arange(48).reshape(6, 8) % 4), 0.5),
    "naive": ("naive", None, None),
    "nonprivate": ("nonprivate", None, None),
}


@pytest.mark.parametrize("case", list(LOG_JOINT_CASES))
def test_the_log_joint_is_the_cpu_formula(data, case):
    """Summed on the device by rows, it equals ``model.log_joint + source.log_noise`` of the
    chain's point and counts recomputed on the host; the rates are ``theta @ phi``."""
    kind, y_tilde, alpha = LOG_JOINT_CASES[case]
    y, fixture_y_tilde = data
    y_tilde = fixture_y_tilde if y_tilde is None else y_tilde
    if kind == "nonprivate":
        chain = GibbsSampler.nonprivate(y, TopicModel(2), rng=7, device="cuda")
    else:
        chain = GibbsSampler.private(y_tilde, alpha, TopicModel(2), method=kind, rng=7,
                                     device="cuda")
    assert chain.engine == ENGINE_OF[kind]
    for _ in range(3):
        chain.sweep()
        got = chain.log_joint()
        state, y = chain.state, chain.y
        want = (chain.model.log_joint(state, y, chain.observed)
                + chain.source.log_noise(y, chain.observed))
        assert np.isfinite(got) and got == pytest.approx(want, rel=1e-9, abs=0)
        np.testing.assert_allclose(chain.mu, state["theta"] @ state["phi"], rtol=1e-13)
    assert (chain.source.log_noise(y, chain.observed) != 0.0) == (kind == "collapsed")


@pytest.mark.parametrize("when", ["before the first sweep", "after restore"])
def test_the_log_joint_of_a_point_not_drawn_on_the_device(data, when):
    chain = _chain("collapsed", data, rng=7)
    if when == "after restore":
        chain.sweep()
        chain.restore(chain.state, {}, 1)
    state, y = chain.state, chain.y
    want = (chain.model.log_joint(state, y, chain.observed)
            + chain.source.log_noise(y, chain.observed))
    assert chain.log_joint() == pytest.approx(want, rel=1e-9, abs=0)


# --- the door to numba-cuda ----------------------------------------------------------------------

def test_import_lpp_does_not_import_numba_cuda():
    code = textwrap.dedent("""
        import sys
        import lpp, lpp.inference
        from lpp.inference import fit_private, GibbsSampler
        loaded = sorted(m for m in sys.modules
                        if m.split(".")[0] == "numba_cuda" or m == "numba.cuda"
                        or m.startswith("numba.cuda.")
                        or m == "lpp.inference.engines.cuda.device")
        assert not loaded, loaded
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_without_numba_cuda_the_error_says_what_to_install(monkeypatch, data):
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return None if name.partition(".")[0] == "numba_cuda" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with launch_settings(emulate=False):
        with pytest.raises(ImportError, match=r"lpp\[gpu\]"):
            cuda_engines.backend()
        with pytest.raises(ImportError, match=r"lpp\[gpu\]"):
            _fit("collapsed", data, n_iter=2)
        # the CPU needs none of it
        assert _fit("collapsed", data, n_iter=2, device="cpu").engine == "sparse"


def test_without_a_gpu_the_error_says_to_fit_on_the_cpu(monkeypatch, data):
    pytest.importorskip("numba_cuda", reason="numba-cuda (lpp[gpu]) is not installed")
    from numba import cuda

    monkeypatch.setattr(cuda, "is_available", lambda: False)
    with launch_settings(emulate=False):
        with pytest.raises(RuntimeError, match="device='cpu'"):
            cuda_engines.backend()
        with pytest.raises(RuntimeError, match="device='cpu'"):
            _fit("nonprivate", data, n_iter=2)


def test_the_emulation_is_the_backend_under_launch_settings():
    assert isinstance(cuda_engines.backend(), HostBackend)
    with launch_settings(threads_per_block=7):
        assert isinstance(cuda_engines.backend(), HostBackend)
    with pytest.raises(ValueError, match="threads_per_block"), launch_settings(threads_per_block=0):
        pass
    select, shape = cuda_engines.select_cuda_engine, (2, 3)
    known = TrueCounts(np.ones(shape, dtype=np.int64))
    assert select(TopicModel(2), known, None) is CudaKnownTopicEngine
    assert select(TopicModel(2), make_privacy_step("naive"), None) is CudaKnownTopicEngine
    collapsed, noise = make_privacy_step("collapsed"), noise_levels(0.5, shape)
    assert select(TopicModel(2), collapsed, noise) is CudaSparseTopicEngine
    assert select(TopicModel(2, collapse_theta=True), collapsed, noise) is None
    assert select(TopicModel(2), make_privacy_step("bessel"), noise) is None


def test_the_extra_the_error_names_is_declared():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "gpu" in meta["project"]["optional-dependencies"]
