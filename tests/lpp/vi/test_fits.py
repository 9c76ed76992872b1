"""A variational fit saved in the Gibbs fits' format and scored like them."""
import numpy as np
import pytest

from lpp.evaluation import ORACLE, ZEROS, topic_scores
from study.reports import score_topic_fits
from lpp.formats.fits import load_fit, save_fit
from lpp.inference import FitResult, TopicModel
from lpp.simulate import make_private_factorization
from lpp.vi import VIOptions, fit_variational
from lpp.vi.fits import PIPELINE_METHODS, as_fit_result
from lpp.inference import RunOptions


@pytest.fixture(scope="module")
def problem():
    return make_private_factorization(30, 25, 3, rng=5)


@pytest.fixture(scope="module")
def fit(problem):
    return fit_variational(problem.y_tilde, problem.alpha, TopicModel(3), rng=2,
                           run=VIOptions(max_iter=20, em_sweeps=10))


def test_round_trip_keeps_means_rates_objective_and_the_optimisers_record(problem, fit,
                                                                         tmp_path):
    fit.save(tmp_path / "collapsed_cavi_eps1.0_rep0", data="somewhere", method="collapsed_cavi",
             extra={"epsilon_over_n": 1.0})
    back = FitResult.load(tmp_path / "collapsed_cavi_eps1.0_rep0")
    assert back.method == "collapsed_cavi" and back.n_chains == 1
    meta = back.metadata
    assert meta.variational and meta.vi_method == "collapsed" and meta.epsilon_over_n == 1.0
    assert meta.converged == fit.converged and meta.start_seconds == fit.start_seconds
    assert list(meta.extra) == ["epsilon_over_n", "vi_method", "converged", "seconds",
                                "start_seconds"]  # the order the pipeline's fits hold
    np.testing.assert_array_equal(back.mu_hat, fit.mu_hat)
    np.testing.assert_array_equal(back.samples["phi"][0], fit.q["phi"].mean)
    np.testing.assert_array_equal(back.samples["theta"][0], fit.q["theta"].mean)
    assert back.samples["phi"].shape == (1, 3, 25)
    np.testing.assert_array_equal(back.log_joint, [fit.objective[-1]])
    np.testing.assert_array_equal(back.saved_iterations, [fit.iterations])
    assert back.seed == meta.seed == fit.seed and meta.n_saved == 1
    # the report's run time is the whole fit's, its start included
    assert meta.seconds_total == pytest.approx(fit.seconds, rel=1e-9)
    np.testing.assert_array_equal(back.iter_seconds[1:], fit.iter_seconds[1:])
    # the topic scorer takes it as it takes a Gibbs fit
    scores = topic_scores(back, problem.y)
    assert scores["n_samples"] == 1 and np.isfinite(scores["mae"])
    table = score_topic_fits(tmp_path, problem.y)
    table = table[~table.method.isin([ZEROS, ORACLE])]
    assert list(table.method) == ["collapsed_cavi"]
    assert table.epsilon_over_n.tolist() == [1.0]


def test_mu_hat_is_the_product_of_the_means(fit):
    np.testing.assert_allclose(fit.mu_hat, fit.q["theta"].mean @ fit.q["phi"].mean, rtol=1e-12)


def test_pipeline_names_differ_from_the_gibbs_methods():
    assert set(PIPELINE_METHODS).isdisjoint({"collapsed", "bessel", "naive", "nonprivate"})
    assert set(PIPELINE_METHODS.values()) == {"collapsed", "bessel", "naive"}


def test_bad_input(fit, tmp_path):
    with pytest.raises(ValueError, match="method must be a non-empty string"):
        fit.save(tmp_path / "f", data="x", method="")
    assert not (tmp_path / "f").exists()


def test_the_retired_name_warns_and_saves_the_same_fit(fit, tmp_path):
    with pytest.warns(FutureWarning, match=r"as_fit_result.*result\.save"):
        old = as_fit_result(fit, "collapsed_cavi")
    assert isinstance(old, FitResult)
    extra = {"epsilon_over_n": 1.0}
    save_fit(old, tmp_path / "old", data="x", extra={
        **extra, "vi_method": fit.method, "converged": fit.converged, "seconds": fit.seconds,
        "start_seconds": fit.start_seconds})
    fit.save(tmp_path / "new", data="x", method="collapsed_cavi", extra=extra)
    for name in ("fit.npz", "fit.json"):
        assert (tmp_path / "old" / name).read_bytes() == (tmp_path / "new" / name).read_bytes()
    with pytest.warns(FutureWarning), pytest.raises(TypeError, match="VIResult"):
        as_fit_result({"q": 1}, "collapsed_cavi")


def test_a_variational_and_a_gibbs_fit_go_through_the_same_calls(problem, fit, tmp_path):
    from lpp.diagnostics import chain_quantities
    from lpp.inference import ChainResult, fit_private, model_from_params

    gibbs = fit_private(problem.y_tilde, problem.alpha, TopicModel(3),
                        run=RunOptions(n_iter=6, burn_in=3, progress=False), rng=1)
    assert isinstance(fit, ChainResult) and fit.method == "collapsed"
    for name, result in (("vi", fit), ("gibbs", gibbs)):
        save_fit(result, tmp_path / name, data="somewhere")
        back = load_fit(tmp_path / name)
        assert model_from_params(back.model).params() == TopicModel(3).params()
        scores = topic_scores(back, problem.y, n_top=3)
        assert np.isfinite(scores["mae"]) and np.isfinite(scores["loglik"])
        assert set(chain_quantities(back, [(0, 0)])) >= {"log_joint", "total_rate"}
    assert load_fit(tmp_path / "vi").samples["theta"].shape == (1, 30, 3)
