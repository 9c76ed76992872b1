"""init=dispersed_start: an over-dispersed draw around the variational fit of the chain's
target, and the names settings give the starts (chain_start)."""
import numba
import numpy as np
import pytest
from scipy import stats

from lpp.inference import CommunityModel, CPTensorModel, GibbsSampler, TopicModel, fit_private
from lpp.inference import RunOptions
from lpp.vi.starts import DISPERSION, approximate_posterior, chain_start, dispersed_start
from lpp.mechanism import privatize
from lpp.testing import FALSE_ALARM


@pytest.fixture(scope="module")
def noisy():
    """Sparse counts under heavy noise: max(y_tilde, 0) holds far more mass than y."""
    rng = np.random.default_rng(21)
    theta, phi = rng.gamma(0.3, 1.0, (40, 3)), rng.gamma(0.3, 1.0, (3, 30))
    y = rng.poisson(theta @ phi)
    return y, privatize(y, 0.6, rng=rng)


def _start(y_tilde, seed, method="collapsed", model=None, **kw):
    return GibbsSampler.private(y_tilde, 0.6, model or TopicModel(3), method=method, rng=seed,
                                init=dispersed_start, **kw)


@pytest.mark.parametrize("method", ["collapsed", "bessel", "naive"])
def test_the_same_seed_gives_the_same_start_and_others_other_starts(noisy, method):
    _, y_tilde = noisy
    a, again, b = (_start(y_tilde, s, method).state for s in (1, 1, 2))
    for name in a:
        assert np.array_equal(a[name], again[name]), name  # bit for bit
        assert not np.allclose(a[name], b[name]), name
        assert np.isfinite(a[name]).all() and (a[name] > 0).all()


def test_other_models_and_the_nonprivate_chain(noisy):
    y, _ = noisy
    for seed in (1, 2):
        chain = GibbsSampler.nonprivate(y, TopicModel(3), rng=seed, init=dispersed_start)
        assert np.isfinite(chain.mu).all()
    rng = np.random.default_rng(3)
    net = rng.poisson(2.0, (10, 10))
    np.fill_diagonal(net, 0)
    starts = [GibbsSampler.private(privatize(net, 0.5, rng=4), 0.5, CommunityModel(2), rng=s,
                                   init=dispersed_start).state["theta"] for s in (1, 2)]
    assert not np.array_equal(*starts)
    cp = GibbsSampler.nonprivate(rng.poisson(1.0, (3, 4, 5)), CPTensorModel(2), rng=1,
                                 init=dispersed_start)
    assert np.isfinite(cp.mu).all()


def test_the_start_draws_around_the_fit_with_inflated_variance(noisy):
    """Mean kept, variance DISPERSION times q's: checked on many draws of one factor."""
    _, y_tilde = noisy
    chain = _start(y_tilde, 1)
    from lpp.randomness import Tag, derive_seed

    q = approximate_posterior(chain.model, chain.source, chain.observed,
                              derive_seed(1, Tag.INIT_FIT))
    draws = np.array([_start(y_tilde, 1).state["phi"]])  # the start repeats its own draw
    assert np.array_equal(draws[0], chain.state["phi"])
    # the law of the draw: Gamma(shape / D, rate / D) element-wise; a KS test of the
    # probability-integral transforms of one start's 90 phi elements
    phi = q["phi"]
    u = stats.gamma.cdf(chain.state["phi"], phi.shape / DISPERSION,
                        scale=DISPERSION / phi.rate)
    assert stats.kstest(u.ravel(), "uniform").pvalue > FALSE_ALARM
    # with the variance of q itself (not inflated) the same transforms are far from uniform
    u_q = stats.gamma.cdf(chain.state["phi"], phi.shape, scale=1.0 / phi.rate)
    assert stats.kstest(u_q.ravel(), "uniform").pvalue < FALSE_ALARM


def test_the_start_leaves_the_noise_mass_out(noisy):
    """The data start puts the positive noise of max(y_tilde, 0) in the rates; the dispersed
    start begins within a factor of the posterior's total rate."""
    y, y_tilde = noisy
    data = GibbsSampler.private(y_tilde, 0.6, TopicModel(3), rng=1, init="data")
    chain = GibbsSampler.private(y_tilde, 0.6, TopicModel(3), rng=1, init="data")
    for _ in range(300):
        chain.sweep()
    posterior_total = np.mean([_sweep_total(chain) for _ in range(100)])
    start_total = _start(y_tilde, 1).mu.sum()
    assert data.mu.sum() > 2 * posterior_total
    assert posterior_total / 3 < start_total < 2 * posterior_total, (start_total,
                                                                      posterior_total)


def _sweep_total(chain):
    chain.sweep()
    return chain.mu.sum()


def _last_totals(y_tilde, init, seeds):
    model = TopicModel(1, a0=1.0, b0=1.0)
    return np.array([fit_private(y_tilde, 0.3, model,
                                 run=RunOptions(n_iter=30, burn_in=29, init=init, progress=False),
                                 rng=seed).mu_hat.sum() for seed in seeds])


def test_chains_from_the_start_target_the_posterior():
    """Many short chains on a tiny problem end in the same law from the dispersed start as from
    a prior draw (two-sample KS on the last sweep's total rate, false alarms FALSE_ALARM; the
    seeds differ, so no two chains share their streams)."""
    y_tilde = np.array([[8, 2, 5], [3, 9, -1]])
    dispersed = _last_totals(y_tilde, dispersed_start, range(300))
    prior = _last_totals(y_tilde, "prior", range(1000, 1300))
    assert stats.ks_2samp(dispersed, prior).pvalue > FALSE_ALARM
    # power: the same test tells apart the law on data with a third more mass
    other = _last_totals(np.round(y_tilde * 1.3).astype(int), "prior", range(2000, 2300))
    assert stats.ks_2samp(dispersed, other).pvalue < FALSE_ALARM


def test_models_without_a_variational_fit_and_the_cluster_refuse_it(noisy):
    class Plain(TopicModel):
        """A plug-in model: overriding the rate drops the capabilities a CAVI adapter needs."""

        name = "plain"

        def rate(self, state):
            return super().rate(state)

    _, y_tilde = noisy
    with pytest.raises(ValueError, match="dispersed start begins at a variational fit"):
        GibbsSampler.private(y_tilde, 0.6, Plain(3), rng=1, init=dispersed_start)
    with pytest.raises(ValueError, match="cluster"):
        fit_private(y_tilde, 0.6, TopicModel(3),
                    run=RunOptions(init=dispersed_start, n_iter=2, progress=False),
                    cluster="tcp://127.0.0.1:1")


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_the_start_is_bit_identical_with_one_or_two_threads():
    rng = np.random.default_rng(11)
    y_tilde = privatize(rng.poisson(0.8, (150, 120)), 0.4, rng=rng)  # the parallel kernels
    before = numba.get_num_threads()
    try:
        starts = []
        for n_threads in (1, 2):
            numba.set_num_threads(n_threads)
            starts.append(GibbsSampler.private(y_tilde, 0.4, TopicModel(4), rng=7,
                                               init=dispersed_start).state)
    finally:
        numba.set_num_threads(before)
    for name in starts[0]:
        assert np.array_equal(starts[0][name], starts[1][name]), name


def test_settings_name_the_dispersed_start():
    """The estimators' and the pipeline's ``init: dispersed`` reach the start by name; the
    names the fit functions know, dicts and callables pass through unchanged."""
    assert chain_start("dispersed") is dispersed_start
    state = {"theta": np.ones((2, 1))}
    for init in ("data", "em", "prior", state, dispersed_start):
        assert chain_start(init) is init


def test_the_fit_functions_refuse_the_name_they_do_not_own(noisy):
    """lpp.inference knows no 'dispersed' (that start is computed a layer above): the error
    names the callable to pass instead."""
    _, y_tilde = noisy
    with pytest.raises(ValueError, match="lpp.vi.dispersed_start"):
        GibbsSampler.private(y_tilde, 0.6, TopicModel(3), rng=1, init="dispersed")
