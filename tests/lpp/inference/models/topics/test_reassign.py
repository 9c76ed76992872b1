"""The partially collapsed step (``TopicModel(..., collapse_theta=True)``,
``lpp.inference.models.topics.reassign``): Geweke tests through both fused engines and their
power, the same posterior as the plain sweep, bit-identical results for any thread count and
call split, and clear errors where it does not run."""
import numba
import numpy as np
import pytest
from scipy import stats

from lpp.inference import GibbsSampler, TopicModel, fit_nonprivate, fit_private, numerics
from lpp.inference import RunOptions, kernels
from lpp.inference.models.topics import model as topic_model
from lpp.inference.models.topics import reassign
from lpp.testing.geweke import geweke_simulations
from lpp.inference.models import model_from_params
from lpp.mechanism import privatize
from lpp.testing import geweke_test


def _model(**kw):
    return TopicModel(2, a0=3.0, b0=3.0, collapse_theta=True, **kw)


@pytest.mark.slow
def test_the_private_chain_gets_it_right_with_a_mask_and_per_row_alpha():
    mask = np.zeros((3, 4), dtype=bool)
    mask[0, 1] = mask[2, 3] = True
    forward, chain = geweke_simulations(_model(), (3, 4), method="collapsed",
                                        alpha=np.array([[0.5], [0.7], [0.85]]), mask=mask,
                                        rng=3, sparse=True)
    result = geweke_test(forward, chain)
    assert result, f"\n{result}"


@pytest.mark.slow
def test_the_nonprivate_chain_gets_it_right():
    forward, chain = geweke_simulations(_model(), (3, 4), method="nonprivate", rng=7,
                                        sparse=True)
    result = geweke_test(forward, chain)
    assert result, f"\n{result}"


#: the prior of the successive-conditional check: wide enough that topics' sums of phi differ
CHECK_A0, CHECK_B0 = 2.0, 1.0


def _swept_factors(method, reps=2000, sweeps=3):
    """Successive-conditional check: factors drawn from the Gamma(2, rate 1) prior, data from
    the model, then sweeps from those factors; if the sweeps keep the posterior, the factors
    are prior draws again. Returns theta[0, 0], theta[1, 1] and phi[0, 2] of each replication.
    The Geweke functions average over topics, so they hardly see how tokens are split between
    topics; a single factor does."""
    rng = np.random.default_rng(11)
    alpha = 0.7
    out = []
    for rep in range(reps):
        theta = rng.gamma(CHECK_A0, 1.0 / CHECK_B0, (3, 2))
        phi = rng.gamma(CHECK_A0, 1.0 / CHECK_B0, (2, 4))
        y = rng.poisson(theta @ phi)
        model = TopicModel(2, a0=CHECK_A0, b0=CHECK_B0, collapse_theta=True)
        if method == "nonprivate":
            chain = GibbsSampler.nonprivate(y, model, rng=rep, init={"theta": theta, "phi": phi},
                                            sparse=True)
        else:
            chain = GibbsSampler.private(privatize(y, alpha, rng=rng), alpha, model, rng=rep,
                                         init={"theta": theta, "phi": phi}, sparse=True)
        for _ in range(sweeps):
            chain.sweep()
        out.append((chain.state["theta"][0, 0], chain.state["theta"][1, 1],
                    chain.state["phi"][0, 2]))
    return np.array(out)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["nonprivate", "collapsed"])
def test_single_factors_are_prior_draws_after_sweeps_from_a_joint_draw(method):
    # three KS tests at 0.1 % each per method (p 0.018-1 at this seed)
    prior = stats.gamma(CHECK_A0, scale=1.0 / CHECK_B0).cdf
    for column in _swept_factors(method).T:
        assert stats.kstest(column, prior).pvalue > 1e-3


@pytest.mark.slow
def test_the_check_catches_a_reassignment_without_theta_s_rate(monkeypatch):
    """Power: weights (a0 + n) phi without the division by theta's Gamma rate (b0 plus the
    topic's sum of phi over the row, which differs between topics) must fail the same check
    (p 2e-8 on theta[0, 0] at this seed)."""
    original = reassign.reassign_tokens

    def without_rate(tokens, theta, phi, theta_rate, *args, **kwargs):
        return original(tokens, theta, phi, np.ones_like(theta_rate), *args, **kwargs)

    monkeypatch.setattr(topic_model, "reassign_tokens", without_rate)
    prior = stats.gamma(CHECK_A0, scale=1.0 / CHECK_B0).cdf
    pvalues = [stats.kstest(column, prior).pvalue
               for column in _swept_factors("nonprivate").T]
    assert min(pvalues) < 1e-3, pvalues


def _batch_mean_z(a, b, batches=40):
    """z of the difference of two chains' means, each mean's variance by batch means."""
    def mean_var(x):
        means = x[: x.size // batches * batches].reshape(batches, -1).mean(axis=1)
        return x.mean(), means.var(ddof=1) / batches
    (ma, va), (mb, vb) = mean_var(a), mean_var(b)
    return (ma - mb) / np.sqrt(va + vb)


@pytest.mark.slow
def test_the_same_posterior_as_the_plain_sweep():
    """Long chains on one small private data set, K = 3, the paper's prior a0 = 0.1: the total
    rate and two entries' rates have the same means with and without the step (z of batch
    means, |z| < 3.4 each: about 0.2 % false alarm for the three)."""
    rng = np.random.default_rng(8)
    y = rng.poisson(rng.gamma(0.3, 1.0, (8, 3)) @ rng.gamma(0.3, 1.0, (3, 10)))
    y_tilde = privatize(y, 0.6, rng=rng)
    traces = []
    for collapse in (False, True):
        model = TopicModel(3, collapse_theta=collapse)
        chain = GibbsSampler.private(y_tilde, 0.6, model, rng=2, sparse=True)
        rows = []
        for it in range(12_000):
            chain.sweep()
            if it >= 2_000:
                mu = chain.mu
                rows.append((mu.sum(), mu[0, 0], mu[3, 5]))
        traces.append(np.array(rows))
    for column in range(3):
        assert abs(_batch_mean_z(traces[0][:, column], traces[1][:, column])) < 3.4


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
@pytest.mark.parametrize("nonprivate", [False, True])
def test_bit_identical_with_one_or_two_threads_the_serial_twin_and_any_call_split(
        nonprivate, threads, monkeypatch):
    rng = np.random.default_rng(5)
    y = rng.poisson(rng.gamma(0.3, 1.0, (160, 4)) @ rng.gamma(0.3, 1.0, (4, 120)))
    mask = rng.random(y.shape) < 0.05
    model = TopicModel(4, collapse_theta=True)
    if nonprivate:
        def fit():
            return fit_nonprivate(np.ma.masked_array(y, mask), model,
                                  run=RunOptions(n_iter=4, progress=False), rng=9)
    else:
        y_tilde = privatize(y, 0.5, rng=rng)
        alpha = rng.uniform(0.2, 0.8, (160, 1))

        def fit():
            return fit_private(np.ma.masked_array(y_tilde, mask), alpha, model,
                               run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9)
    runs = []
    for n_threads in (1, 2):
        numba.set_num_threads(n_threads)
        runs.append(fit())
    monkeypatch.setattr(reassign, "SERIAL_BELOW", 10**12)
    runs.append(fit())
    monkeypatch.undo()
    numba.set_num_threads(2)
    monkeypatch.setattr(numerics, "CALL_STEPS", 200)
    runs.append(fit())
    monkeypatch.undo()
    monkeypatch.setattr(kernels, "MAX_CHUNKS", 3)  # every engine's row chunks
    runs.append(fit())
    plain = (fit_nonprivate(np.ma.masked_array(y, mask), TopicModel(4),
                            run=RunOptions(n_iter=4, progress=False), rng=9)
             if nonprivate else None)
    for other in runs[1:]:
        for k in ("theta", "phi"):
            assert np.array_equal(runs[0].samples[k], other.samples[k]), k
        assert np.array_equal(runs[0].log_joint, other.log_joint)
    if plain is not None:  # the step changes the chain: it is not the plain sweep
        assert not np.array_equal(runs[0].samples["theta"], plain.samples["theta"])


def test_the_setting_is_recorded_only_when_on_and_rebuilds():
    assert "collapse_theta" not in TopicModel(3).params()
    params = TopicModel(3, collapse_theta=True).params()
    assert params["collapse_theta"] is True
    assert model_from_params(params).collapse_theta
    with pytest.raises(TypeError, match="True or False"):
        TopicModel(3, collapse_theta="yes")


def test_where_the_step_does_not_run_it_says_so():
    y_tilde = privatize(np.random.default_rng(0).poisson(1.0, (6, 5)), 0.5, rng=1)
    model = TopicModel(2, collapse_theta=True)
    with pytest.raises(ValueError, match="fused topic engines only"):
        GibbsSampler.private(y_tilde, 0.5, model, sparse=False)
    with pytest.raises(ValueError, match="fused topic engines only"):
        GibbsSampler.private(y_tilde, 0.5, model, method="bessel")
    with pytest.raises(ValueError, match="fused topic engines only"):  # per-entry alpha
        GibbsSampler.private(y_tilde, np.full(y_tilde.shape, 0.5), model)


def test_a_sweep_of_too_many_tokens_is_refused(monkeypatch):
    monkeypatch.setattr(reassign, "MAX_REASSIGN_TOKENS", 10)
    y = np.full((4, 5), 3)
    with pytest.raises(ValueError, match="token by token"):
        fit_nonprivate(y, TopicModel(2, collapse_theta=True),
                       run=RunOptions(n_iter=1, progress=False), rng=1)
