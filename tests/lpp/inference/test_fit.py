"""The fit API: results, reproducibility across threads, checkpoints, interrupts, input checks."""
import inspect
import signal
import subprocess
import sys
import time
import warnings

import numba
import numpy as np
import pytest
import scipy.sparse

from lpp.inference import (
    CommunityModel,
    CPTensorModel,
    GibbsSampler,
    TopicModel,
    fit_nonprivate,
    fit_private,
    make_model,
)
from lpp.inference import RunOptions, kernels, numerics, privacy
from lpp.inference.privacy import kernels as privacy_kernels
from lpp.mechanism import privatize

QUIET = {"progress": False}


def _same(a, b):
    """Bit-identical results (timings aside)."""
    assert a.saved_iterations.tolist() == b.saved_iterations.tolist()
    assert a.samples.keys() == b.samples.keys()
    for k in a.samples:
        assert np.array_equal(a.samples[k], b.samples[k]), k
    assert np.array_equal(a.mu_hat, b.mu_hat)
    assert np.array_equal(a.log_joint, b.log_joint)
    for k in a.state:
        assert np.array_equal(a.state[k], b.state[k]), k
    for k in a.aux:
        assert np.array_equal(a.aux[k], b.aux[k]), k


def test_result_holds_thinned_samples_and_their_running_mean(topic_data):
    _, _, y_tilde, alpha = topic_data
    res = fit_private(y_tilde, alpha, TopicModel(3),
                      run=RunOptions(n_iter=23, burn_in=5, thin=4, save_counts=True,
                                     progress=False),
                      rng=1)
    assert res.saved_iterations.tolist() == [9, 13, 17, 21] and res.n_saved == 4
    assert res.samples["theta"].shape == (4, 30, 3) and res.samples["phi"].shape == (4, 3, 25)
    assert res.samples["y"].dtype == np.int64 and res.samples["y"].shape == (4, 30, 25)
    mus = [t @ p for t, p in zip(res.samples["theta"], res.samples["phi"])]
    assert np.allclose(res.mu_hat, np.mean(mus, axis=0), rtol=1e-12)
    assert res.iter_seconds.shape == (23,) and np.all(res.iter_seconds > 0)
    assert np.all(np.isfinite(res.log_joint)) and res.complete and not res.interrupted
    assert res.model == {"model": "topics", "n_components": 3, "a0": 0.1, "b0": 1.0}
    assert not np.array_equal(res.state["theta"], res.samples["theta"][-1])  # 23 is unsaved


def test_log_joint_is_prior_plus_likelihood_plus_noise(topic_data):
    _, _, y_tilde, alpha = topic_data
    sampler = GibbsSampler.private(y_tilde, alpha, TopicModel(3), rng=2)
    sampler.sweep()
    from scipy import stats

    model, state, y = sampler.model, sampler.state, sampler.y
    expected = (sum(stats.gamma(0.1).logpdf(a).sum() for a in state.values())
                + stats.poisson.logpmf(y, model.rate(state)).sum()
                + np.sum(np.log((1 - alpha) / (1 + alpha)) + np.abs(y_tilde - y) * np.log(alpha)))
    assert np.isclose(sampler.log_joint(), expected, rtol=1e-10)


def test_private_fit_cannot_take_true_counts():
    params = inspect.signature(fit_private).parameters
    assert "y" not in params and list(params)[:3] == ["y_tilde", "mechanism", "model"]
    assert list(inspect.signature(fit_nonprivate).parameters)[:2] == ["y", "model"]


def test_naive_is_the_model_fitted_to_truncated_data(topic_data):
    _, _, y_tilde, _ = topic_data
    naive = fit_private(y_tilde, None, TopicModel(3), method="naive",
                        run=RunOptions(n_iter=6, progress=False), rng=3)
    direct = fit_nonprivate(np.maximum(y_tilde, 0), TopicModel(3),
                            run=RunOptions(n_iter=6, progress=False), rng=3)
    assert naive.method == "naive" and direct.method == "nonprivate"
    _same(naive, direct)


def test_seeds_matter_and_repeat(topic_data):
    _, _, y_tilde, alpha = topic_data
    a = fit_private(y_tilde, alpha, TopicModel(3), run=RunOptions(n_iter=4, progress=False), rng=5)
    b = fit_private(y_tilde, alpha, TopicModel(3), run=RunOptions(n_iter=4, progress=False), rng=5)
    c = fit_private(y_tilde, alpha, TopicModel(3), run=RunOptions(n_iter=4, progress=False), rng=6)
    _same(a, b)
    assert not np.array_equal(a.mu_hat, c.mu_hat)
    assert a.seed == b.seed != c.seed


def test_the_recorded_seed_repeats_a_run(topic_data):
    _, _, y_tilde, alpha = topic_data
    first = fit_private(y_tilde, alpha, TopicModel(3), run=RunOptions(n_iter=3, progress=False),
                        rng=None)
    again = fit_private(y_tilde, alpha, TopicModel(3), run=RunOptions(n_iter=3, progress=False),
                        rng=first.seed)
    _same(first, again)
    from_generator = fit_private(y_tilde, alpha, TopicModel(3),
                                 run=RunOptions(n_iter=3, progress=False),
                                 rng=np.random.default_rng(1))
    assert 0 <= from_generator.seed < 2**63
    for bad, err in ((-1, ValueError), (2**63, ValueError), ("1", TypeError), (1.0, TypeError)):
        with pytest.raises(err, match="seed|rng"):
            fit_private(y_tilde, alpha, TopicModel(3), run=RunOptions(n_iter=3, progress=False),
                        rng=bad)


def test_masked_entries_do_not_influence_the_fit(topic_data):
    _, _, y_tilde, alpha = topic_data
    mask = np.zeros(y_tilde.shape, dtype=bool)
    mask[::3, ::4] = True
    other = y_tilde.copy()
    other[mask] += 17
    a = fit_private(np.ma.masked_array(y_tilde, mask), alpha, TopicModel(3),
                    run=RunOptions(n_iter=5, progress=False), rng=1)
    b = fit_private(np.ma.masked_array(other, mask), alpha, TopicModel(3),
                    run=RunOptions(n_iter=5, progress=False), rng=1)
    _same(a, b)


def _big_problems():
    rng = np.random.default_rng(11)
    topics = privatize(rng.poisson(0.8, (150, 120)), 0.4, rng=rng)  # 18 000 entries
    network = privatize(rng.poisson(0.8, (130, 130)), 0.4, rng=rng)
    tensor = privatize(rng.poisson(0.8, (26, 26, 26)), 0.4, rng=rng)
    return [(topics, TopicModel(4), "collapsed"), (topics, TopicModel(4), "bessel"),
            (network, CommunityModel(3), "collapsed"), (tensor, CPTensorModel(3), "naive")]


@pytest.mark.slow
@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_bit_identical_with_one_or_two_threads(threads, monkeypatch):
    """Problems above SERIAL_BELOW run the parallel kernels; all twins agree to the bit."""
    for data, model, method in _big_problems():
        assert data.size >= numerics.SERIAL_BELOW
        runs = []
        for n_threads in (1, 2):
            numba.set_num_threads(n_threads)
            runs.append(fit_private(data, 0.4, model, method=method,
                                    run=RunOptions(n_iter=3, progress=False), rng=7))
        with monkeypatch.context() as m:  # force the serial twins
            m.setattr(privacy_kernels, "SERIAL_BELOW", 10**12)
            m.setattr(kernels, "SERIAL_BELOW", 10**12)
            runs.append(fit_private(data, 0.4, model, method=method,
                                    run=RunOptions(n_iter=3, progress=False), rng=7))
        _same(runs[0], runs[1])
        _same(runs[0], runs[2])


@pytest.mark.parametrize("data,model,method", [
    *_big_problems(),
    (_big_problems()[0][0], TopicModel(4), "naive"),
    (_big_problems()[2][0], CommunityModel(3), "bessel"),
    (_big_problems()[3][0], CPTensorModel(3), "collapsed"),
])
def test_kernels_split_into_short_calls_draw_the_same_chain(data, model, method, monkeypatch):
    # a budget of a few steps splits every kernel into many calls over rows or blocks
    whole = fit_private(data, 0.4, model, method=method,
                        run=RunOptions(n_iter=3, save_counts=True, progress=False), rng=9)
    monkeypatch.setattr(numerics, "CALL_STEPS", 5000)
    _same(fit_private(data, 0.4, model, method=method,
                      run=RunOptions(n_iter=3, save_counts=True, progress=False), rng=9), whole)


class _InterruptAt(TopicModel):
    """A topic model whose sweep for 0-based iteration ``at`` is hit by Ctrl-C (once)."""

    def __init__(self, at, k):
        super().__init__(k)
        self.at = at

    def update_step(self, state, stats, observed, seed, iteration):
        if iteration == self.at:
            self.at = None
            raise KeyboardInterrupt
        return super().update_step(state, stats, observed, seed, iteration)


@pytest.mark.parametrize("method", ["collapsed", "bessel"])
def test_interrupt_checkpoint_and_resume_equal_an_uninterrupted_run(topic_data, tmp_path, method):
    _, _, y_tilde, alpha = topic_data
    full = fit_private(y_tilde, alpha, TopicModel(3), method=method,
                       run=RunOptions(n_iter=30, burn_in=4, thin=3, save_counts=True,
                                      progress=False),
                       rng=12)
    path = tmp_path / "chain.npz"
    part = fit_private(y_tilde, alpha, _InterruptAt(16, 3),
                       run=RunOptions(checkpoint=path, checkpoint_every=5, n_iter=30, burn_in=4,
                                      thin=3, save_counts=True, progress=False),
                       method=method, rng=12)
    assert part.interrupted and part.iterations_done == 16 and not part.complete
    assert part.saved_iterations.tolist() == [7, 10, 13, 16] and part.mu_hat is not None
    assert not list(tmp_path.glob(".*tmp*"))  # atomic writes leave no temporary file
    resumed = fit_private(y_tilde, alpha, TopicModel(3),
                          run=RunOptions(checkpoint=path, resume=True, n_iter=30, burn_in=4,
                                         thin=3, save_counts=True, progress=False),
                          method=method, rng=12)
    assert resumed.complete and resumed.iter_seconds.shape == (30,)
    _same(full, resumed)
    # a finished checkpoint resumes to the same result without sweeping again
    _same(full, fit_private(y_tilde, alpha, TopicModel(3),
                            run=RunOptions(checkpoint=path, resume=True, n_iter=30, burn_in=4,
                                           thin=3, save_counts=True, progress=False),
                            method=method, rng=12))


def test_interrupt_after_the_commit_keeps_the_sweep(topic_data, tmp_path, monkeypatch):
    _, _, y_tilde, alpha = topic_data
    full = fit_private(y_tilde, alpha, TopicModel(3),
                       run=RunOptions(n_iter=12, thin=2, progress=False), rng=3)
    real = GibbsSampler.log_joint
    calls = {"n": 0}

    def flaky(self):
        calls["n"] += 1
        if calls["n"] == 3:  # during the booking of iteration 6, after its sweep committed
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(GibbsSampler, "log_joint", flaky)
    path = tmp_path / "c.npz"
    part = fit_private(y_tilde, alpha, TopicModel(3),
                       run=RunOptions(checkpoint=path, n_iter=12, thin=2, progress=False), rng=3)
    assert part.interrupted and part.iterations_done == 6
    assert part.saved_iterations.tolist() == [2, 4, 6]
    assert np.isnan(part.iter_seconds[-1])
    monkeypatch.setattr(GibbsSampler, "log_joint", real)
    _same(full, fit_private(y_tilde, alpha, TopicModel(3),
                            run=RunOptions(checkpoint=path, resume=True, n_iter=12, thin=2,
                                           progress=False),
                            rng=3))


def test_resume_refuses_a_different_run(topic_data, tmp_path):
    _, _, y_tilde, alpha = topic_data
    path = tmp_path / "c.npz"
    fit_private(y_tilde, alpha, TopicModel(3),
                run=RunOptions(n_iter=3, checkpoint=path, progress=False), rng=1)
    with pytest.raises(ValueError, match="'data'"):
        fit_private(y_tilde + 1, alpha, TopicModel(3),
                    run=RunOptions(n_iter=5, checkpoint=path, resume=True, progress=False))
    with pytest.raises(ValueError, match="'thin'"):
        fit_private(y_tilde, alpha, TopicModel(3),
                    run=RunOptions(n_iter=5, thin=2, checkpoint=path, resume=True, progress=False))
    with pytest.raises(ValueError, match="'model'"):
        fit_private(y_tilde, alpha, TopicModel(4),
                    run=RunOptions(n_iter=5, checkpoint=path, resume=True, progress=False))
    with pytest.raises(ValueError, match="checkpoint path"):
        fit_private(y_tilde, alpha, TopicModel(3),
                    run=RunOptions(n_iter=5, resume=True, progress=False))


def test_models_by_name_and_initialisation(topic_data):
    _, y, _, _ = topic_data
    a = fit_nonprivate(y, TopicModel(3), run=RunOptions(n_iter=2, progress=False), rng=1)
    b = fit_nonprivate(y, TopicModel(3), run=RunOptions(n_iter=2, progress=False), rng=1)
    _same(a, b)
    init = {"theta": np.ones((30, 3)), "phi": np.ones((3, 25))}
    c = fit_nonprivate(y, TopicModel(3), run=RunOptions(n_iter=2, init=init, progress=False),
                       rng=1)
    d = fit_nonprivate(y, TopicModel(3), run=RunOptions(n_iter=2, init="prior", progress=False),
                       rng=1)
    assert not np.array_equal(c.mu_hat, d.mu_hat)
    with pytest.raises(ValueError, match="init"):
        fit_nonprivate(y, TopicModel(3), run=RunOptions(n_iter=2, init="zeros", progress=False))
    with pytest.raises(TypeError, match="model object"):
        make_model(TopicModel(3), n_components=3)
    with pytest.raises(ValueError, match="unknown model"):
        make_model("lda", 3)
    with pytest.raises(TypeError, match="needs n_components"):
        make_model("topics")


def test_privacy_step_is_model_agnostic():
    """The same privacy code serves a 3-way tensor model, unchanged."""
    rng = np.random.default_rng(2)
    y_tilde = privatize(rng.poisson(2.0, (4, 5, 3)), 0.5, rng=rng)
    for method in ("collapsed", "bessel"):
        res = fit_private(y_tilde, 0.5, CPTensorModel(2), method=method,
                          run=RunOptions(n_iter=5, progress=False), rng=1)
        assert res.mu_hat.shape == (4, 5, 3) and np.all(np.isfinite(res.log_joint))
        assert set(res.aux) == ({"lam_plus", "lam_minus"} if method == "bessel" else set())


def test_progress_bar_can_be_shown(topic_data, capsys):
    pytest.importorskip("tqdm", reason="the bar is tqdm's (lpp[progress])")
    _, y, _, _ = topic_data
    fit_nonprivate(y, TopicModel(2), run=RunOptions(n_iter=3, progress=True))
    assert "topics/nonprivate" in capsys.readouterr().err
    fit_nonprivate(y, TopicModel(2), run=RunOptions(n_iter=3, progress=False))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("kwargs,run,err,match", [
    ({}, {"n_iter": 0}, ValueError, "n_iter"),
    ({}, {"n_iter": 5, "burn_in": 5}, ValueError, "burn_in"),
    ({}, {"thin": 0}, ValueError, "thin"),
    ({}, {"thin": 1.5}, TypeError, "thin"),
    ({}, {"checkpoint_every": 0}, ValueError, "checkpoint_every"),
    ({}, {"n_iter": 5, "burn_in": 3, "thin": 3}, ValueError, "no draw would be saved"),
    ({"method": "laplace"}, {}, ValueError, "method"),
    ({"mechanism": 1.0}, {}, ValueError, "alpha"),
    ({"mechanism": np.full(30, 0.5)}, {}, ValueError, "broadcast"),
    ({"mechanism": None}, {}, TypeError, "alpha"),
    ({"model": "topics"}, {}, TypeError, r"number of components.*TopicModel\(K\)"),
    ({"model": "topics", "n_components": 2, "a0": 1e7}, {}, ValueError, r"a0 must lie in"),
    ({"model": "topics", "n_components": 2, "b0": 1e-9}, {}, ValueError, r"b0 must lie in"),
    ({"model": "topics", "n_components": 0}, {}, ValueError, "n_components"),
    ({"run": {"n_iter": 3}}, {}, TypeError, "run must be a lpp.inference.RunOptions"),
    ({"chains": 2, "n_chains": 2}, {}, TypeError, "chains once"),
    ({"n_iter": 3}, {"n_iter": 3}, TypeError, "in run=RunOptions"),
    ({"n_sweeps": 3}, {}, TypeError, "unexpected keyword argument 'n_sweeps'"),
])
def test_bad_arguments_are_refused(topic_data, kwargs, run, err, match):
    _, _, y_tilde, alpha = topic_data
    args = {"mechanism": alpha, "model": TopicModel(3),
            "run": RunOptions(**{"n_iter": 3, **QUIET, **run}), **kwargs}
    with pytest.raises(err, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the old keywords' notice
        fit_private(y_tilde, **args)


@pytest.mark.parametrize("mask,err,match", [
    (np.zeros((3, 3), dtype=bool), ValueError, "mask has shape"),
    (np.full((30, 25), 0.5), TypeError, "mask"),
])
def test_a_bad_mask_of_the_old_keyword_is_refused(topic_data, mask, err, match):
    _, _, y_tilde, alpha = topic_data
    with pytest.raises(err, match=match), pytest.warns(FutureWarning):
        fit_private(y_tilde, alpha, TopicModel(3), n_iter=3, mask=mask, progress=False)


def test_the_old_keywords_are_the_new_arguments_with_a_notice(topic_data):
    """The keywords of earlier releases (the schedule and the chain's settings, ``mask``,
    ``n_chains``, a model's name with ``n_components``, ``a0``, ``b0``) run the fit the new
    arguments describe, bit for bit, with a FutureWarning that names the new places."""
    _, y, y_tilde, alpha = topic_data
    mask = np.random.default_rng(4).random(y.shape) < 0.1
    new = fit_private(np.ma.masked_array(y_tilde, mask), alpha, TopicModel(3, a0=0.2),
                      method="bessel", run=RunOptions(n_iter=6, burn_in=2, thin=2, init="em",
                                                      progress=False), rng=7, chains=2)
    with pytest.warns(FutureWarning, match=r"run=RunOptions\(\.\.\.\).*chains=.*numpy\.ma"):
        old = fit_private(y_tilde, alpha, "topics", n_components=3, a0=0.2, method="bessel",
                          n_iter=6, burn_in=2, thin=2, init="em", progress=False, rng=7,
                          mask=mask, n_chains=2)
    for a, b in zip(new.chains, old.chains):
        _same(a, b)
    assert np.array_equal(new.exclude, old.exclude)
    ref = fit_nonprivate(y, TopicModel(3), run=RunOptions(n_iter=4, progress=False), rng=1)
    with pytest.warns(FutureWarning, match="fit_nonprivate"):
        _same(ref, fit_nonprivate(y, TopicModel(3), n_iter=4, progress=False, rng=1))


def test_a_fit_takes_at_most_nine_arguments():
    for fit in (fit_private, fit_nonprivate):
        params = inspect.signature(fit).parameters.values()
        named = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
        assert len(named) <= 9, fit.__name__


def test_bad_data_are_refused(topic_data):
    _, y, y_tilde, alpha = topic_data
    with pytest.raises(ValueError, match="non-integer"):
        fit_private(y_tilde + 0.5, alpha, TopicModel(3), run=RunOptions(n_iter=2, progress=False))
    with pytest.raises(ValueError, match="negative"):
        fit_nonprivate(y_tilde, TopicModel(3), run=RunOptions(n_iter=2, progress=False))
    with pytest.raises(ValueError, match="2-d"):
        fit_nonprivate(y.reshape(-1), TopicModel(3), run=RunOptions(n_iter=2, progress=False))
    with pytest.raises(ValueError, match="square"):
        fit_nonprivate(y, CommunityModel(2), run=RunOptions(n_iter=2, progress=False))
    mask = np.zeros(y.shape, dtype=bool)
    mask[4] = True
    with pytest.raises(ValueError, match=r"\[4\] along axis 0 is masked"):
        fit_nonprivate(np.ma.masked_array(y, mask), TopicModel(3),
                       run=RunOptions(n_iter=2, progress=False))
    with pytest.raises(ValueError, match="non-empty"):
        fit_nonprivate(np.zeros((0, 3), dtype=np.int64), TopicModel(3),
                       run=RunOptions(n_iter=2, progress=False))


def test_em_initialisation_starts_near_the_truth_and_repeats():
    """init='em' (expectation sweeps on max(y_tilde, 0)) starts far closer to the true rates
    than a prior draw followed by one Gibbs sweep, is deterministic given the seed, works for
    the community model and under a mask, and is refused where the model has no expectation
    step."""
    rng = np.random.default_rng(12)
    theta, phi = rng.gamma(1.0, 1.0, (40, 3)), rng.gamma(1.0, 1.0, (3, 30))
    y = rng.poisson(theta @ phi)
    y_tilde = privatize(y, 0.2, rng=rng)
    mu = theta @ phi

    def start(init, seed=1, **kw):
        return GibbsSampler.private(y_tilde, 0.2, TopicModel(3), rng=seed, init=init, **kw).mu

    err_em, err_data = np.abs(start("em") - mu).mean(), np.abs(start("data") - mu).mean()
    assert err_em < 0.5 * err_data, (err_em, err_data)
    assert np.array_equal(start("em"), start("em")) and not np.array_equal(start("em"),
                                                                             start("em", 2))
    mask = rng.random(y.shape) < 0.1
    assert np.isfinite(start("em", mask=mask)).all()
    res = fit_private(y_tilde, 0.2, TopicModel(3),
                      run=RunOptions(n_iter=3, init="em", progress=False), rng=1)
    assert res.iterations_done == 3
    net = rng.poisson(2.0, (8, 8))
    np.fill_diagonal(net, 0)
    com = GibbsSampler.nonprivate(net, CommunityModel(2), rng=1, init="em")
    assert all(np.isfinite(v).all() and (v > 0).all() for v in com.state.values())
    with pytest.raises(ValueError, match="expectation_step"):
        GibbsSampler.nonprivate(rng.poisson(1.0, (3, 4, 5)), CPTensorModel(2), init="em")


@pytest.mark.parametrize("method", ["collapsed", "bessel", "nonprivate"])
@pytest.mark.parametrize("model", ["topics", "communities"])
def test_huge_counts_cost_no_more_than_small_ones(method, model):
    # 1e9 in every entry: allocating token by token would run for many minutes per sweep
    y = np.full((3, 3), 10**9, dtype=np.int64)
    kw = dict(run=RunOptions(n_iter=3, save_counts=True, **QUIET), rng=1)
    if method == "nonprivate":
        res = fit_nonprivate(y, make_model(model, n_components=2), **kw)
    else:
        res = fit_private(y + np.array([[3, -2, 0], [1, 0, -5], [2, 2, 7]]), 0.5,
                          make_model(model, n_components=2), method=method, **kw)
    assert res.iterations_done == 3 and np.all(np.isfinite(res.log_joint))
    assert np.all(res.samples["y"] >= 0) and np.all(np.isfinite(res.mu_hat))
    if method == "nonprivate":
        observed = ~np.eye(3, dtype=bool) if model == "communities" else np.ones((3, 3), bool)
        assert np.all(res.samples["y"][:, observed] == 10**9)


def test_a_masked_array_brings_its_mask(topic_data):
    _, _, y_tilde, alpha = topic_data
    rng = np.random.default_rng(5)
    own, extra = rng.random(y_tilde.shape) < 0.1, rng.random(y_tilde.shape) < 0.05
    garbage = np.where(own, 10**17, y_tilde)  # never read: its entries are masked
    _same(fit_private(np.ma.array(garbage, mask=own), alpha, TopicModel(3),
                      run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=2),
          fit_private(np.ma.masked_array(y_tilde, own), alpha, TopicModel(3),
                      run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=2))
    _same(fit_private(np.ma.masked_array(np.ma.array(garbage, mask=own), extra), alpha,
                      TopicModel(3), run=RunOptions(n_iter=4, save_counts=True, progress=False),
                      rng=2),
          fit_private(np.ma.masked_array(y_tilde, own | extra), alpha, TopicModel(3),
                      run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=2))
    y = np.maximum(y_tilde, 0)
    run = RunOptions(n_iter=4, save_counts=True, progress=False)
    # the saved counts of a non-private fit echo the data, a masked entry's too, as with the
    # mask given apart (one chain, one data fingerprint: a fit saved under either continues
    # under the other); a masked entry that is not a count (negative, NaN) is 0
    masked = fit_nonprivate(np.ma.array(y, mask=own), TopicModel(3), run=run, rng=2)
    with pytest.warns(FutureWarning):
        apart = fit_nonprivate(y, TopicModel(3), mask=own, rng=2, **vars(run))
    _same(masked, apart)
    assert masked.data_fingerprint == apart.data_fingerprint
    bad = np.where(own, -1.0, y).astype(float)
    bad[0, 0], own[0, 0] = np.nan, True
    _same(fit_nonprivate(np.ma.array(bad, mask=own), TopicModel(3), run=run, rng=2),
          fit_nonprivate(np.ma.array(np.where(own, 0, y), mask=own), TopicModel(3), run=run,
                         rng=2))
    with pytest.raises(TypeError, match="mask="):
        privacy.sample_true_counts(np.ma.array(y_tilde, mask=own), alpha, np.ones(y.shape))


def test_a_sparse_matrix_is_fitted_as_its_dense_array(topic_data):
    _, y, y_tilde, alpha = topic_data
    _same(fit_nonprivate(scipy.sparse.csr_matrix(y), TopicModel(3),
                         run=RunOptions(n_iter=3, progress=False), rng=4),
          fit_nonprivate(y, TopicModel(3), run=RunOptions(n_iter=3, progress=False), rng=4))
    _same(fit_private(scipy.sparse.coo_array(y_tilde), alpha, TopicModel(3),
                      run=RunOptions(n_iter=3, progress=False), rng=4),
          fit_private(y_tilde, alpha, TopicModel(3), run=RunOptions(n_iter=3, progress=False),
                      rng=4))


_HANGS = """
from dataclasses import replace

import numpy as np
from lpp.inference import RunOptions, TopicModel, fit_nonprivate, fit_private

def attempt(name, run):
    try:
        run()
    except ValueError as err:
        print(name, "ValueError", err)
    else:
        print(name, "ran")

quiet = dict(run=RunOptions(n_iter=3, progress=False), rng=0)
# a row total past int64 wrapped, and NaN reached the Gamma sampler
attempt("rows", lambda: fit_private(np.full((2, 100), 10**17), 0.5, TopicModel(2), **quiet))
attempt("cells", lambda: fit_nonprivate(np.full((3, 3), int(3.5e18)), TopicModel(2), **quiet))
# the dense collapsed step looped forever from y~ = 1e16
attempt("dense", lambda: fit_private(np.full((3, 3), 10**16), 0.5, TopicModel(2), rng=0,
                                     run=replace(quiet["run"], sparse=False)))
attempt("a0", lambda: fit_private(np.full((3, 3), 5), 0.5, TopicModel(2, a0=1e300), **quiet))
# valid data and priors whose rates still overflow a Poisson draw: the prior alone puts them
# near 1e24 (the bessel step draws no Poisson variate from them and runs)
attempt("collapsed", lambda: fit_private(np.full((3, 3), 5), 0.5, TopicModel(2, a0=1e6, b0=1e-6),
                                         rng=0, run=replace(quiet["run"], init="prior")))
"""


def test_inputs_that_hung_end_in_clear_errors():
    # each of these looped forever inside a kernel, where Ctrl-C could not stop it
    run = subprocess.run([sys.executable, "-c", _HANGS], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    lines = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    assert set(lines) == {"rows", "cells", "dense", "a0", "collapsed"}
    for name in ("rows", "cells", "dense"):
        assert "add up to" in lines[name] and "1e+15" in lines[name], lines[name]
    assert "a0 must lie in" in lines["a0"]
    assert "left the range" in lines["collapsed"], lines["collapsed"]


_HEAVY_SWEEPS = """
import signal

import numpy as np
from lpp.inference import TopicModel, fit_nonprivate

# as a process started from a terminal: a parent that blocked or ignored SIGINT (a library's
# thread, a test runner) passes that on to its children, and the signal would never arrive
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
signal.signal(signal.SIGINT, signal.default_int_handler)

# load (or compile) the kernels, serial and parallel twins, so that Ctrl-C lands in a sweep
fit_nonprivate(np.full((3, 3), 5), TopicModel(2), n_iter=1, progress=False)
fit_nonprivate(np.full((300, 300), 1), TopicModel(20), n_iter=1, init="prior", progress=False)


def ready(chain):  # after the first heavy sweep: the signal comes in the middle of the second
    if chain.iteration == 1:
        print("ready", flush=True)


# counts just below the allocation's O(K) threshold: a trial each, 7e8 per sweep
res = fit_nonprivate(np.full((300, 300), 8000), TopicModel(20), n_iter=50, init="prior", rng=1,
                     progress=False, callback=ready)
print(res.interrupted, res.iterations_done, flush=True)
"""


def test_ctrl_c_stops_a_heavy_sweep_in_the_sweep_it_comes_in():
    # the allocation ran as one kernel call of 10 to 20 s per sweep, which Ctrl-C cannot cut
    with subprocess.Popen([sys.executable, "-c", _HEAVY_SWEEPS], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as child:  # closes its pipes
        try:
            assert child.stdout.readline().strip() == "ready"
            time.sleep(1.0)
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=120)
        finally:
            child.kill()
    assert child.returncode == 0, err
    interrupted, done = out.split()
    # a partial result, as documented, stopped in the sweep the signal came in (sweep 2, or 3
    # on a machine that finished sweep 2 within the second before it): not a wall time
    assert interrupted == "True" and int(done) <= 3


def test_a_private_folder_is_refused_with_how_to_pass_it(tmp_path):
    """A one-file private folder, or what load_privatized returns, is not a matrix; the error
    says how to pass it (neither 'row-block data' nor a dtype error)."""
    from lpp.formats.privatized import load_privatized, privatize_counts

    counts = np.random.default_rng(0).poisson(1.0, size=(6, 5))
    privatize_counts(counts, tmp_path / "p", epsilon=1.0, N=1.0, simulation=True, seed=1, source="toy",
                     row_ids=[str(i) for i in range(6)], column_ids=[str(j) for j in range(5)])
    for data in (tmp_path / "p", str(tmp_path / "p"), load_privatized(tmp_path / "p")):
        with pytest.raises(TypeError, match=r"load_privatized\(path\); fit_private\(data.y_tilde"):
            fit_private(data, np.exp(-1.0), TopicModel(2), run=RunOptions(n_iter=2))


def test_a_scipy_sparse_mask_is_the_dense_mask(topic_data):
    """A mask given by the old keyword may come as scipy.sparse: the same fit as its dense
    form, and a sparse mask that is not a mask is refused as the dense one is."""
    _, _, y_tilde, alpha = topic_data
    mask = np.zeros(y_tilde.shape, dtype=bool)
    mask[0, 1] = mask[2, 0] = True
    with pytest.warns(FutureWarning):
        fits = [fit_private(y_tilde, alpha, TopicModel(2), rng=3, n_iter=4, progress=False,
                            mask=m) for m in (mask, scipy.sparse.csr_matrix(mask))]
    assert np.array_equal(fits[0].mu_hat, fits[1].mu_hat)
    assert np.array_equal(fits[0].exclude, fits[1].exclude)
    with pytest.raises(TypeError, match="mask must be a boolean array"), \
            pytest.warns(FutureWarning):
        fit_private(y_tilde, alpha, TopicModel(2), rng=3, n_iter=4, progress=False,
                    mask=scipy.sparse.csr_matrix(mask * 2))
    with pytest.raises(ValueError, match="mask has shape"), pytest.warns(FutureWarning):
        fit_private(y_tilde, alpha, TopicModel(2), rng=3, n_iter=4, progress=False,
                    mask=scipy.sparse.csr_matrix(mask[:1]))
