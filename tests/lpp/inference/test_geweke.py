"""Geweke (2004) joint-distribution tests of every model x privacy variant, and their power.

Design: tiny data (12-18 entries), prior Gamma(3, rate 3) on every factor (light tails, so the
chain visits the prior's range within a batch; with a0 = 1 products of three factors give
y^2 a tail the chain under-samples and false alarms follow), alpha = 0.7 (the printed and the
correct lambda rates differ unless alpha = 0.5), 10^4 forward draws vs 10^4 successive
sweeps; z-test with 50 batch means, Welch-Satterthwaite t, Bonferroni over the test functions
at overall false-alarm FALSE_ALARM (``lpp.testing.geweke_test``).
"""
import numpy as np
import pytest
from numba import njit

from lpp.randomness import new_stream, seed_block
from lpp.inference import CommunityModel, CPTensorModel, TopicModel
from lpp.testing.geweke import geweke_simulations
from lpp.inference.privacy import BesselPrivacy, CollapsedPrivacy, sample_true_count_collapsed_nb
from lpp.testing import geweke_test

N = 10_000
ALPHA = 0.7
SETUPS = {
    "topics": (TopicModel(2, a0=3.0, b0=3.0), (3, 4)),
    "communities": (CommunityModel(2, a0=3.0, b0=3.0), (4, 4)),
    "cp": (CPTensorModel(2, a0=3.0, b0=3.0), (2, 3, 2)),
}


def _run(model_name, method, seed=1, mask=None, alpha=ALPHA):
    model, shape = SETUPS[model_name]
    forward, chain = geweke_simulations(model, shape, method=method, alpha=alpha, n_forward=N,
                                        n_chain=N, mask=mask, rng=seed)
    return geweke_test(forward, chain)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["nonprivate", "collapsed", "bessel"])
@pytest.mark.parametrize("model_name", list(SETUPS))
def test_sampler_gets_it_right(model_name, method):
    result = _run(model_name, method)
    assert result, f"\n{result}"


@pytest.mark.slow
def test_gets_it_right_with_missing_entries_and_per_row_alpha():
    mask = np.zeros((3, 4), dtype=bool)
    mask[0, 1] = mask[2, 3] = True
    result = _run("topics", "bessel", seed=2, mask=mask, alpha=np.array([[0.5], [0.7], [0.85]]))
    assert result, f"\n{result}"


# --- power: deliberately broken kernels must fail the same test ---------------------------------

@njit
def _pois_mu_for_nonpositive(y_tilde, mu, observed, alpha_values, alpha_stride, seed, iteration,
                             out):
    rng = new_stream()
    seed_block(rng, seed, iteration, 0)
    for e in range(y_tilde.size):
        if not observed[e]:
            out[e] = 0
        elif y_tilde[e] <= 0:
            out[e] = np.random.poisson(mu[e])  # the bug: Pois(mu) instead of Pois(alpha * mu)
        else:
            alpha = alpha_values[e // alpha_stride]
            out[e] = sample_true_count_collapsed_nb(rng, y_tilde[e], alpha, mu[e])


class ForgetsAlpha(CollapsedPrivacy):
    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        out = np.empty(y_tilde.shape, dtype=np.int64)
        _pois_mu_for_nonpositive(y_tilde.reshape(-1), np.ascontiguousarray(mu).reshape(-1),
                                 observed.reshape(-1), noise.values, noise.stride, seed,
                                 iteration, out.reshape(-1))
        return out, {}


class PrintedLambdaRate(BesselPrivacy):
    def lambda_scale(self, noise):
        return 1.0 - noise.values  # eq. 16 as printed: rate alpha/(1-alpha) + 1 = 1/(1-alpha)


@pytest.mark.slow
@pytest.mark.parametrize("broken", [ForgetsAlpha(), PrintedLambdaRate()], ids=type)
def test_broken_privacy_steps_fail(broken):
    result = _run("topics", broken)
    assert not result, f"a broken kernel passed:\n{result}"


# --- the statistics helper ------------------------------------------------------------------------

def test_helper_accepts_equal_and_rejects_shifted_laws():
    rng = np.random.default_rng(0)
    ar = np.empty(20_000)
    ar[0] = 0.0
    for t in range(1, ar.size):  # an autocorrelated chain with a N(0, 1) marginal
        ar[t] = 0.8 * ar[t - 1] + 0.6 * rng.standard_normal()
    forward = {"x": rng.standard_normal(5_000)}
    assert geweke_test(forward, {"x": ar})
    assert not geweke_test(forward, {"x": ar + 0.15})


def test_helper_checks_its_inputs():
    with pytest.raises(ValueError, match="same"):
        geweke_test({"a": np.zeros(100)}, {"b": np.zeros(1000)})
    with pytest.raises(ValueError, match="need"):
        geweke_test({"a": np.zeros(100)}, {"a": np.zeros(10)})
    with pytest.raises(ValueError, match="finite"):
        geweke_test({"a": np.full(100, np.nan)}, {"a": np.zeros(1000)})
