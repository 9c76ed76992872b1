"""FixedTopicModel: the topic model with the topics given, on the plain and the fused sweep."""
import numpy as np
import pytest

from lpp.inference import FixedTopicModel, RunOptions, TopicModel, fit_private
from lpp.inference.engines import SparseTopicEngine
from lpp.inference.models.base import Observed
from lpp.inference.models.topics.kernels import expected_allocation
from lpp.inference.privacy import make_privacy_step, noise_levels
from lpp.mechanism import privatize

PHI = np.random.default_rng(0).gamma(3.0, 1.0 / 3.0, (2, 4))


def _data(n_docs=6, alpha=0.5, seed=1):
    rng = np.random.default_rng(seed)
    theta = rng.gamma(2.0, 1.0, (n_docs, PHI.shape[0]))
    return privatize(rng.poisson(theta @ PHI), alpha, rng=rng), alpha


class _CountingUpdates(FixedTopicModel):
    """Records every call of the latent update (overriding it keeps the capability)."""

    calls = 0

    def update_latents(self, state, stats, observed, seed, iteration):
        type(self).calls += 1
        return super().update_latents(state, stats, observed, seed, iteration)


def test_only_theta_is_latent_and_the_rates_use_the_given_topics():
    model = FixedTopicModel(PHI, a0=0.5, b0=2.0)
    state = model.sample_prior((5, 4), 3)
    assert set(state) == {"theta"} and state["theta"].shape == (5, 2)
    np.testing.assert_allclose(model.rate(state), state["theta"] @ PHI)
    assert model.row_column_factors(state)[1] is model.phi
    # log p(theta) alone: the topics are constants, so the prior of phi is no part of it
    full = TopicModel(2, a0=0.5, b0=2.0)
    both = {"theta": state["theta"], "phi": PHI}
    assert model.log_prior(state) == pytest.approx(full.log_prior(both)
                                                   - full.log_prior({"phi": PHI}))


def test_the_fused_engine_applies_and_calls_the_theta_only_update():
    y_tilde, alpha = _data()
    model = _CountingUpdates(PHI)
    assert "row_column_factors" in model.capabilities
    assert SparseTopicEngine.applies(model, make_privacy_step("collapsed"),
                                     noise_levels(alpha, y_tilde.shape))
    _CountingUpdates.calls = 0
    fit = fit_private(y_tilde, alpha, model, run=RunOptions(n_iter=7, sparse=True), rng=0)
    assert fit.engine == "sparse"
    assert _CountingUpdates.calls == 7 + 1  # every sweep, and the start's sweep on the data
    assert set(fit.samples) == {"theta"} and fit.samples["theta"].shape == (7, 6, 2)
    assert model.phi is not None and np.array_equal(model.phi, PHI)


@pytest.mark.parametrize("method", ["collapsed", "bessel", "naive"])
def test_every_privacy_step_and_start_runs_with_the_topics_fixed(method):
    y_tilde, alpha = _data()
    for init in ("data", "em", "prior"):
        fit = fit_private(y_tilde, alpha, FixedTopicModel(PHI), method=method,
                          run=RunOptions(n_iter=3, init=init), rng=2)
        assert set(fit.state) == {"theta"}
        # the mean rate is linear in theta: the saved draws' mean times the given topics
        np.testing.assert_allclose(fit.mu_hat, fit.samples["theta"].mean(0) @ PHI, rtol=1e-12)


def test_the_expectation_step_moves_theta_only():
    y = np.random.default_rng(4).poisson(np.full((5, 4), 2.0))
    observed = np.ones((5, 4), dtype=bool)
    model = FixedTopicModel(PHI)
    state = model.sample_prior((5, 4), 5)
    new = model.expectation_step(state, y, Observed(observed))
    assert set(new) == {"theta"}
    doc_topic = expected_allocation(state["theta"], PHI, y, observed, np.zeros_like(PHI))
    np.testing.assert_allclose(new["theta"], (0.1 + doc_topic) / (1.0 + PHI.sum(axis=1)))


@pytest.mark.slow
def test_the_sampler_passes_the_model_contract_and_geweke_on_the_fused_sweep():
    from lpp.testing import check_model

    # check_model's private Geweke test runs the collapsed step with a scalar alpha, where the
    # fused sparse engine applies: the joint law of theta and the counts is checked through it
    check_model(FixedTopicModel(PHI, a0=3.0, b0=3.0), shape=(4, 4), rng=11)


@pytest.mark.slow
def test_the_geweke_check_catches_a_wrong_theta_update():
    from lpp.testing import check_model

    class CountsExposureTwice(FixedTopicModel):
        # a plausible slip that keeps the chain bounded (one that dropped the exposure would
        # let theta and the counts grow without end rather than fail)
        def _theta_rate(self, phi, observed):
            return 2.0 * super()._theta_rate(phi, observed) - self.b0

    with pytest.raises(AssertionError, match="Geweke"):
        check_model(CountsExposureTwice(PHI, a0=3.0, b0=3.0), shape=(4, 4), rng=11)


@pytest.mark.parametrize("phi, match", [
    (np.ones(3), "K x V"), (np.ones((0, 3)), "K x V"), (-PHI, "non-negative"),
    (np.full((2, 2), np.nan), "finite"),
])
def test_bad_topics_are_refused(phi, match):
    with pytest.raises(ValueError, match=match):
        FixedTopicModel(phi)


def test_data_over_another_vocabulary_are_refused():
    with pytest.raises(ValueError, match="4 words, the data have 5 columns"):
        fit_private(np.zeros((3, 5), dtype=int), 0.5, FixedTopicModel(PHI),
                    run=RunOptions(n_iter=2))


def test_the_given_topics_cannot_be_changed_in_place():
    model = FixedTopicModel(PHI)
    with pytest.raises(ValueError):
        model.phi[0, 0] = 1.0
    assert model.phi is not PHI  # a copy: the caller's array stays writable and unshared
