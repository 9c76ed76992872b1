"""The second mechanism (k-ary randomized response on clipped counts) and the door it plugs in
through: its privatizer against its stated report probabilities, its exact step against the
brute-force conditional, the whole chain by Geweke's test (with a broken step that must
fail), and the errors of the registration and of the fits."""
import math

import numpy as np
import pytest
from scipy import stats

from lpp.inference import GibbsSampler, RunOptions, TopicModel, fit_private
from lpp.inference.models.base import Observed
from lpp.inference.privacy import (
    CollapsedPrivacy,
    NaivePrivacy,
    PrivacyStep,
    RandomizedResponse,
    RandomizedResponseNoise,
    RandomizedResponseStep,
    is_geometric,
    mechanism_support,
    privacy_for,
    register_mechanism,
)
from lpp.mechanism import GeometricMechanism
from lpp.testing import geweke_test
from lpp.testing.geweke import geweke_simulations
from lpp.testing.goodness_of_fit import FALSE_ALARM, chisquare_gof

MECHANISM = RandomizedResponse(epsilon=1.0, M=3)


def _conditional_pmf(mechanism, y_tilde, mu, support):
    """``P(y | y_tilde, mu)`` over ``support`` by brute force: prior times likelihood,
    normalised over counts far beyond the mass."""
    counts = np.arange(0, 200)
    weights = stats.poisson.pmf(counts, mu) * np.exp(mechanism.log_likelihood(y_tilde, counts))
    return weights[support] / weights.sum()


def test_the_reports_follow_the_stated_probabilities_and_epsilon():
    p, q = MECHANISM.report_probabilities
    assert math.isclose(p + MECHANISM.M * q, 1.0)
    assert math.isclose(p / q, math.e)  # the worst ratio of a report's odds is e**epsilon
    for count, clipped in ((0, 0), (2, 2), (7, 3)):
        reports = MECHANISM.privatize(np.full(40_000, count), rng=count)
        expected = np.full(MECHANISM.M + 1, q)
        expected[clipped] = p
        observed = np.bincount(reports, minlength=MECHANISM.M + 1)
        assert stats.chisquare(observed, 40_000 * expected).pvalue > FALSE_ALARM
    # the same seed, the same reports; a large epsilon does not overflow
    assert np.array_equal(MECHANISM.privatize([[1, 5]], rng=3), MECHANISM.privatize([[1, 5]], rng=3))
    assert RandomizedResponse(epsilon=800.0, M=2).report_probabilities == (1.0, 0.0)
    assert np.isfinite(RandomizedResponse(epsilon=800.0, M=2).log_likelihood(0, [0, 1])).all()


@pytest.mark.parametrize("y_tilde, mu", [(0, 0.7), (2, 1.5), (3, 2.0), (3, 0.05), (1, 6.0)])
def test_the_exact_step_draws_the_brute_force_conditional(y_tilde, mu):
    n = 20_000
    shape = (100, n // 100)
    noise = RandomizedResponseNoise(MECHANISM, shape)
    draws, state = RandomizedResponseStep().sample(
        np.full(shape, y_tilde), noise, np.full(shape, mu), np.ones(shape, dtype=bool), {},
        seed=11, iteration=4)
    assert state == {} and draws.dtype == np.int64
    support = np.arange(0, 40)
    result = chisquare_gof(draws.ravel(), support,
                           _conditional_pmf(MECHANISM, y_tilde, mu, support))
    assert result.pvalue > FALSE_ALARM, result


def test_the_goodness_of_fit_rejects_a_conditional_that_forgets_the_clipping():
    """Power: at the top report, the conditional without the clipping (the report equal to
    the count itself) is another distribution, and the same test must see it."""
    shape = (100, 200)
    draws, _ = RandomizedResponseStep().sample(
        np.full(shape, 3), RandomizedResponseNoise(MECHANISM, shape), np.full(shape, 2.0),
        np.ones(shape, dtype=bool), {}, seed=11, iteration=4)
    counts = np.arange(0, 200)
    p, q = MECHANISM.report_probabilities
    unclipped = stats.poisson.pmf(counts, 2.0) * np.where(counts == 3, p, q)
    support = np.arange(0, 40)
    assert chisquare_gof(draws.ravel(), support,
                         unclipped[support] / unclipped.sum()).pvalue < 1e-6


def test_a_step_draw_is_keyed_by_seed_and_iteration_and_leaves_missing_entries_at_zero():
    shape = (4, 6)
    y_tilde = MECHANISM.privatize(np.random.default_rng(0).poisson(2.0, shape), rng=1)
    observed = np.ones(shape, dtype=bool)
    observed[1, 2] = False
    noise = RandomizedResponseNoise(MECHANISM, shape)
    mu = np.full(shape, 2.0)
    step = RandomizedResponseStep()
    first = step.sample(y_tilde, noise, mu, observed, {}, 5, 1)[0]
    assert np.array_equal(first, step.sample(y_tilde, noise, mu, observed, {}, 5, 1)[0])
    assert not np.array_equal(first, step.sample(y_tilde, noise, mu, observed, {}, 5, 2)[0])
    assert first[1, 2] == 0


def test_the_log_joint_reads_the_mechanisms_likelihood():
    y = np.random.default_rng(2).poisson(1.5, (5, 4))
    y_tilde = MECHANISM.privatize(y, rng=3)
    sampler = GibbsSampler.private(y_tilde, MECHANISM, TopicModel(2), method="exact", rng=4)
    observed = Observed(np.ones(y.shape, dtype=bool))
    assert sampler.source.log_noise(y, observed) == pytest.approx(
        MECHANISM.log_likelihood(y_tilde, y).sum())


@pytest.mark.slow
def test_the_chain_gets_it_right():
    """Geweke's test of the whole chain (the exact step, then the topic model's sweep), the
    simulated data privatized by the mechanism itself."""
    forward, chain = geweke_simulations(TopicModel(2, a0=3.0, b0=3.0), (3, 4), method="exact",
                                        alpha=MECHANISM, n_forward=10_000, n_chain=10_000,
                                        rng=1)
    result = geweke_test(forward, chain)
    assert result, f"\n{result}"


class _ForgetsTheClipping(RandomizedResponseStep):
    """A broken step: at the top report it keeps the report as the count, as if no count
    were ever clipped."""

    name = "broken"

    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        y, aux = super().sample(y_tilde, noise, mu, observed, state, seed, iteration)
        first = np.random.default_rng([seed, iteration]).random(y.shape) < 0.9
        top = (y_tilde == noise.mechanism.M) & first & observed
        y[top] = noise.mechanism.M
        return y, aux


class _BrokenResponse(RandomizedResponse):
    """The same mechanism, registered with the broken step."""


register_mechanism(_BrokenResponse, noise_model=RandomizedResponseNoise,
                   steps={"broken": _ForgetsTheClipping})


@pytest.mark.slow
def test_the_chains_test_fails_a_step_that_forgets_the_clipping():
    forward, chain = geweke_simulations(TopicModel(2, a0=3.0, b0=3.0), (3, 4), method="broken",
                                        alpha=_BrokenResponse(epsilon=1.0, M=1),
                                        n_forward=10_000, n_chain=10_000, rng=1)
    assert not geweke_test(forward, chain)


def test_a_fit_runs_the_mechanisms_steps_bit_for_bit_and_refuses_the_others():
    y = np.random.default_rng(0).poisson(1.5, (12, 8))
    y_tilde = MECHANISM.privatize(y, rng=1)
    run = RunOptions(n_iter=6, burn_in=2, progress=False)
    fits = [fit_private(y_tilde, MECHANISM, TopicModel(2), method="exact", run=run, rng=2,
                        chains=2) for _ in range(2)]
    assert fits[0].method == "exact"
    for a, b in zip(fits[0].chains, fits[1].chains):
        assert np.array_equal(a.samples["phi"], b.samples["phi"])
    naive = fit_private(y_tilde, MECHANISM, TopicModel(2), method="naive", run=run, rng=2)
    assert naive.method == "naive"
    with pytest.raises(ValueError, match=r"RandomizedResponse runs with method in \('exact', "
                                         r"'naive'\), got 'bessel'"):
        fit_private(y_tilde, MECHANISM, TopicModel(2), method="bessel", run=run)
    with pytest.raises(ValueError, match="runs with the steps"):
        fit_private(y_tilde, MECHANISM, TopicModel(2), method=CollapsedPrivacy(), run=run)
    with pytest.raises(ValueError, match="reports outside 0..3"):
        fit_private(y_tilde - 1, MECHANISM, TopicModel(2), method="exact", run=run)
    with pytest.raises(ValueError, match="row-block chains run the geometric mechanism"):
        fit_private(y_tilde, MECHANISM, TopicModel(2), method="exact", run=run, cluster=True)


def test_the_geometric_mechanism_and_a_bare_alpha_take_the_built_in_steps():
    for mechanism in (GeometricMechanism(epsilon=1.0), 0.5, np.full((2, 1), 0.4), None):
        assert is_geometric(mechanism) and mechanism_support(mechanism) is None
    step, noise = privacy_for(0.5, "collapsed", (2, 3))
    assert isinstance(step, CollapsedPrivacy) and noise.full().shape == (2, 3)
    step, noise = privacy_for(MECHANISM, "naive", (2, 3))
    assert isinstance(step, NaivePrivacy) and noise is None
    assert not is_geometric(MECHANISM)


def test_the_registration_refuses_what_would_run_wrong():
    class Geometric(GeometricMechanism):
        pass

    class Promises(PrivacyStep):
        capabilities = frozenset({"exact_conditional"})

        def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
            return y_tilde, {}

    with pytest.raises(ValueError, match="built in"):
        register_mechanism(Geometric, noise_model=RandomizedResponseNoise,
                           steps={"exact": RandomizedResponseStep})
    with pytest.raises(ValueError, match="the geometric mechanism's conditional"):
        register_mechanism(RandomizedResponse, noise_model=RandomizedResponseNoise,
                           steps={"promises": Promises})
    with pytest.raises(TypeError, match="PrivacyStep subclasses"):
        register_mechanism(RandomizedResponse, noise_model=RandomizedResponseNoise,
                           steps={"exact": RandomizedResponseStep()})
    with pytest.raises(ValueError, match="at least one"):
        register_mechanism(RandomizedResponse, noise_model=RandomizedResponseNoise, steps={})
    with pytest.raises(TypeError, match="a class"):
        register_mechanism(MECHANISM, noise_model=RandomizedResponseNoise,
                           steps={"exact": RandomizedResponseStep})
    # the refused registrations left the mechanism's own in place
    assert set(mechanism_support(MECHANISM).steps) == {"exact", "naive"}


@pytest.mark.parametrize("epsilon, M, match", [
    (0.0, 3, "epsilon must be"), (float("nan"), 3, "epsilon must be"), ("1", 3, "epsilon"),
    (1.0, 0, "M must be"), (1.0, 2.5, "M must be"), (1.0, True, "M must be")])
def test_bad_settings_are_named(epsilon, M, match):
    with pytest.raises(ValueError, match=match):
        RandomizedResponse(epsilon=epsilon, M=M)
