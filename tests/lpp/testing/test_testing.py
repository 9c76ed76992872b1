"""The chi-square helper must accept correct samplers and reject wrong ones."""
import numpy as np
import pytest
from scipy import stats

from lpp.testing import FALSE_ALARM, chisquare_gof

SUPPORT = np.arange(0, 60)


def _pmf(mu):
    return stats.poisson.pmf(SUPPORT, mu)


def test_accepts_exact_sampler():
    draws = np.random.default_rng(1).poisson(7.0, 100_000)
    res = chisquare_gof(draws, SUPPORT, _pmf(7.0))
    assert res.pvalue > FALSE_ALARM and res.n_bins > 10 and res


@pytest.mark.parametrize("wrong", ["off_by_one", "mean_off_2pct"])
def test_rejects_wrong_sampler(wrong):
    rng = np.random.default_rng(2)
    draws = rng.poisson(7.0, 100_000) + 1 if wrong == "off_by_one" else rng.poisson(7.14, 100_000)
    res = chisquare_gof(draws, SUPPORT, _pmf(7.0))
    assert res.pvalue < FALSE_ALARM and not res


def test_draws_outside_support_count_in_the_tails():
    draws = np.r_[np.random.default_rng(3).poisson(7.0, 10_000), [500] * 50]
    assert chisquare_gof(draws, SUPPORT, _pmf(7.0)).pvalue < FALSE_ALARM


def test_rejects_a_support_that_misses_mass():
    with pytest.raises(ValueError, match="widen"):
        chisquare_gof([1, 2], np.arange(3), stats.poisson.pmf(np.arange(3), 7.0))
    with pytest.raises(ValueError, match="consecutive"):
        chisquare_gof([1], [0, 2], [0.5, 0.5])


# --- the model contract ----------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", ["topics", "communities", "cp"])
def test_built_in_models_meet_the_contract(name):
    from lpp.inference import make_model
    from lpp.testing import check_model
    check_model(make_model(name, 2, a0=3.0, b0=3.0), rng=11)


def _broken_models():
    from lpp.inference import TopicModel

    class LosesCounts(TopicModel):
        def allocate(self, state, y, observed, seed, iteration):
            stats = super().allocate(state, y, observed, seed, iteration)
            stats["doc_topic"] = stats["doc_topic"] // 2
            return stats

    class MutatesState(TopicModel):
        def rate(self, state):
            state["theta"] *= 1.0
            state["theta"][0, 0] += 1.0
            return super().rate(state)

    class IgnoresData(TopicModel):
        def update_latents(self, state, stats, observed, seed, iteration):
            zero = {k: np.zeros_like(v) for k, v in stats.items()}
            return super().update_latents(state, zero, observed, seed, iteration)

    return {"loses counts": (LosesCounts, "lost or invented"),
            "mutates its state": (MutatesState, "modified its input"),
            "ignores its data": (IgnoresData, "Geweke")}


@pytest.mark.slow
@pytest.mark.parametrize("case", ["loses counts", "mutates its state", "ignores its data"])
def test_check_model_catches_a_broken_model(case):
    from lpp.testing import check_model
    cls, message = _broken_models()[case]
    with pytest.raises(AssertionError, match=message):
        check_model(cls(2, a0=3.0, b0=3.0), rng=11)


def test_check_model_refuses_what_is_not_a_model():
    from lpp.testing import check_model
    with pytest.raises(TypeError, match="PoissonFactorization"):
        check_model(object())


def test_time_limit_turns_a_call_that_does_not_return_into_a_failure():
    from lpp.testing import time_limit

    with pytest.raises(TimeoutError, match="the loop ran past 1 s"):
        with time_limit(1, "the loop"):
            while True:
                pass
    with time_limit(5):  # a quick block passes, and the alarm is cleared after it
        pass

