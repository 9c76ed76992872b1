"""The estimators' behaviour: parameters, fitting, transform, score, the mechanism, bad input,
recovery of synthetic topics, and lpp without scikit-learn. Tests with scikit-learn's own
objects (pipelines, searches, its estimator checks) are in test_estimators_sklearn.py."""
import doctest
import importlib
import inspect
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

import lpp.estimators
from lpp.estimators import (GeometricMechanism, NotFittedError, PrivateTopicModel,
                            RenoisedRowsWarning, forget_noised_rows)
from lpp.estimators._mechanism import _noise_rng
from lpp.inference import FitResult, RunOptions, fit_private
from lpp.mechanism import GeometricMechanism as LevelOnly
from lpp.mechanism import exact_alpha, privatize
from lpp.metrics import align_topics, topic_distances
from lpp.simulate import make_private_factorization, make_topics
from lpp.vi import VIResult

ROOT = Path(__file__).resolve().parents[3]
ALPHA_1 = float(np.exp(-1.0))  # epsilon / N = 1


@pytest.fixture(scope="module")
def small():
    return make_private_factorization(16, 9, 2, rng=0)


def tiny(**params):
    """A topic model fitted in a blink: few sweeps, a fixed seed."""
    settings = dict(n_iter=20, random_state=0) | params
    return PrivateTopicModel(settings.pop("n_components", 2), **settings)


# ----- parameters --------------------------------------------------------------------------------

@pytest.mark.parametrize("cls, args", [(PrivateTopicModel, (4,)), (GeometricMechanism, (0.5,))])
def test_get_params_lists_the_constructor_and_round_trips(cls, args):
    est = cls(*args, random_state=7)
    params = est.get_params()
    assert set(params) == set(list(inspect.signature(cls.__init__).parameters)[1:])
    assert list(params) == sorted(params)  # as scikit-learn orders them
    clone = type(est)(**params)
    assert clone is not est and clone.get_params() == params
    assert est.get_params(deep=False) == params
    # only the parameters live on a new instance (scikit-learn's check_no_attributes_set_in_init)
    assert sorted(vars(est)) == sorted(params)


def test_the_noise_level_is_a_parameter_and_not_a_fit_argument():
    params = PrivateTopicModel().get_params()
    assert params["alpha"] is None and "model" not in params
    assert list(inspect.signature(PrivateTopicModel.fit).parameters)[:3] == \
        ["self", "X", "y"]


def test_set_params_changes_only_what_it_names_and_refuses_unknown_names():
    est = PrivateTopicModel(3)
    assert est.set_params(inference="variational", tol=1e-3) is est
    assert est.inference == "variational" and est.tol == 1e-3 and est.n_components == 3
    with pytest.raises(ValueError, match=r"(?i)invalid parameter"):
        est.set_params(model="cp", n_iter=5)
    assert est.n_iter == 1000  # nothing set when a name is refused


def test_repr_shows_the_parameters_that_differ_from_their_defaults():
    assert repr(PrivateTopicModel()) == "PrivateTopicModel()"
    assert repr(PrivateTopicModel(3, a0=0.5, progress=False)) == \
        "PrivateTopicModel(a0=0.5, n_components=3, progress=False)"
    # 1 == 1.0, but an int prior is another setting than the float default
    assert repr(PrivateTopicModel(b0=1)) == "PrivateTopicModel(b0=1)"
    assert repr(GeometricMechanism(0.5)) == "GeometricMechanism(alpha=0.5)"


def test_the_device_is_a_parameter_checked_at_fit(small):
    est = PrivateTopicModel(2, alpha=small.alpha, device="gpu")  # stored as given
    assert est.device == "gpu" and PrivateTopicModel().get_params()["device"] == "cpu"
    with pytest.raises(ValueError, match=r"device must be one of \('cpu', 'cuda'\), got 'gpu'"):
        est.fit(small.y_tilde)
    assert est.set_params(device="cuda") is est and est.get_params()["device"] == "cuda"
    copy = type(est)(**est.get_params())
    assert copy.device == "cuda" and "device='cuda'" in repr(copy)


def test_the_constructor_only_stores_so_bad_settings_fail_at_fit(small):
    est = PrivateTopicModel(n_components=-1, method="bogus", n_iter=0)  # no error yet
    assert est.method == "bogus"
    with pytest.raises(ValueError, match="method must be one of"):
        est.fit(small.y_tilde)


# ----- fitting -----------------------------------------------------------------------------------

@pytest.mark.parametrize("inference, result_type", [("gibbs", FitResult),
                                                     ("variational", VIResult)])
def test_fit_sets_the_fitted_attributes(small, inference, result_type):
    est = PrivateTopicModel(2, alpha=small.alpha, inference=inference, n_iter=40, burn_in=10,
                            random_state=3, keep_samples=True)
    assert est.fit(small.y_tilde) is est
    assert type(est.fit_) is result_type
    assert est.components_.shape == (2, 9) and est.n_features_in_ == 9
    assert est.factors_["theta"].shape == (16, 2)
    assert est.chain_factors_ == [est.factors_]
    np.testing.assert_allclose(est.components_, est.factors_["phi"])
    # the rates from the posterior means, formed on each access
    np.testing.assert_allclose(est.mu_hat_, est.factors_["theta"] @ est.components_)
    assert "mu_hat_" not in vars(est) and est.mu_hat_ is not est.mu_hat_
    assert est.mu_hat_.shape == (16, 9) and est.seed_ == 3 == est.fit_.seed
    assert est.n_iter_ == est.fit_.iterations_done >= 1
    if inference == "gibbs":  # the posterior mean of the saved draws (30 after burn-in)
        assert est.fit_.n_saved == 30 and est.n_iter_ == 40
        np.testing.assert_allclose(est.components_, est.fit_.samples["phi"].mean(axis=0))
        np.testing.assert_allclose(est.factors_["theta"],
                                   est.fit_.samples["theta"].mean(axis=0))
    else:  # E_q[mu] is the product of the means
        np.testing.assert_allclose(est.components_, est.fit_.means()["phi"])
        np.testing.assert_allclose(est.mu_hat_, est.fit_.mu_hat)


def test_the_burn_in_is_half_of_the_sweeps_unless_set(small):
    est = tiny(alpha=small.alpha, n_iter=21, keep_samples=True).fit(small.y_tilde)
    assert est.get_params()["burn_in"] is None
    np.testing.assert_array_equal(est.fit_.saved_iterations, np.arange(11, 22))
    est.set_params(burn_in=0, thin=4).fit(small.y_tilde)
    np.testing.assert_array_equal(est.fit_.saved_iterations, [4, 8, 12, 16, 20])


def _data_sized(fit, shape):
    """The arrays of ``fit``'s chains of the data's shape, by field name."""
    chains = fit.chains if hasattr(fit, "chains") else [fit]
    found = []
    for chain in chains:
        for name, value in vars(chain).items():
            values = value.values() if isinstance(value, dict) else [value]
            if any(np.shape(v) == shape for v in values if isinstance(v, np.ndarray)):
                found.append(name)
    return found


@pytest.mark.parametrize("method", ["collapsed", "bessel", "nonprivate"])
def test_a_fit_keeps_its_means_and_record_and_nothing_of_the_datas_size(small, method):
    alpha = None if method == "nonprivate" else small.alpha
    data = small.y if method == "nonprivate" else small.y_tilde
    lean = tiny(alpha=alpha, method=method, n_iter=30, n_chains=2).fit(data)
    full = tiny(alpha=alpha, method=method, n_iter=30, n_chains=2, keep_samples=True).fit(data)
    assert _data_sized(lean.fit_, (16, 9)) == [] and lean.fit_.exclude is None
    assert "mu_hat" in _data_sized(full.fit_, (16, 9))
    for chain in lean.fit_.chains:
        # the record of the saved sweeps stays (a trace plot's data), the draws go
        assert chain.samples == {} and chain.mu_hat is None
        np.testing.assert_array_equal(chain.saved_iterations, np.arange(16, 31))
        assert chain.log_joint.shape == (15,) and set(chain.state) == {"theta", "phi"}
    # what is kept changes no estimate: the same chains, the same means
    for a, b in zip(lean.chain_factors_, full.chain_factors_):
        for name in ("theta", "phi"):
            np.testing.assert_array_equal(a[name], b[name])
    for c, chain in enumerate(full.fit_.chains):
        np.testing.assert_allclose(full.chain_factors_[c]["phi"],
                                   chain.samples["phi"].mean(axis=0))
        np.testing.assert_array_equal(chain.log_joint, lean.fit_.chains[c].log_joint)
    np.testing.assert_array_equal(lean.transform(data[:4]), full.transform(data[:4]))
    assert lean.score(data[:4]) == full.score(data[:4])
    np.testing.assert_allclose(lean.mu_hat_, np.mean(
        [f["theta"] @ f["phi"] for f in lean.chain_factors_], axis=0))
    assert len(pickle.dumps(lean)) < len(pickle.dumps(full))


def test_keep_samples_n_keeps_n_draws_evenly_spaced(small):
    est = tiny(alpha=small.alpha, n_iter=40, keep_samples=5).fit(small.y_tilde)
    full = tiny(alpha=small.alpha, n_iter=40, keep_samples=True).fit(small.y_tilde)
    fit = est.fit_
    np.testing.assert_array_equal(fit.saved_iterations, [21, 26, 31, 35, 40])
    at = fit.saved_iterations - 21
    for name in ("theta", "phi"):
        assert fit.samples[name].shape[0] == 5
        np.testing.assert_array_equal(fit.samples[name], full.fit_.samples[name][at])
        np.testing.assert_array_equal(est.factors_[name], full.factors_[name])
    np.testing.assert_array_equal(fit.log_joint, full.fit_.log_joint[at])
    assert fit.mu_hat is None and fit.n_saved == 5
    many = tiny(alpha=small.alpha, n_iter=40, keep_samples=100).fit(small.y_tilde)
    np.testing.assert_array_equal(many.fit_.samples["phi"], full.fit_.samples["phi"])


@pytest.mark.parametrize("keep, error", [(-1, ValueError), (2.5, TypeError), ("all", TypeError)])
def test_keep_samples_is_a_flag_or_a_number_of_draws(small, keep, error):
    with pytest.raises(error, match="keep_samples"):
        tiny(alpha=small.alpha, keep_samples=keep).fit(small.y_tilde)


def test_a_variational_fit_drops_its_per_entry_arrays_unless_kept(small):
    lean = tiny(alpha=small.alpha, inference="variational", method="bessel").fit(small.y_tilde)
    full = clone_params(lean, keep_samples=True).fit(small.y_tilde)
    assert lean.fit_.mu_hat is None and lean.fit_.extra == {}
    assert full.fit_.extra and full.fit_.mu_hat.shape == (16, 9)
    np.testing.assert_allclose(lean.mu_hat_, full.fit_.mu_hat)
    np.testing.assert_array_equal(lean.components_, full.components_)


def test_progress_follows_fit_private_by_default(small, monkeypatch):
    import lpp.estimators._topic_model as module

    assert PrivateTopicModel().progress is None
    assert RunOptions().progress is None
    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs["run"].progress)
        return fit_private(*args, **kwargs)

    monkeypatch.setattr(module, "fit_private", spy)
    tiny(alpha=small.alpha, progress=None).fit(small.y_tilde)
    PrivateTopicModel(2, alpha=small.alpha, n_iter=4).fit(small.y_tilde)
    assert seen == [None, None]


def test_y_is_ignored_so_a_target_never_reaches_the_noise_level(small):
    labels = np.arange(16) % 2
    with_y = tiny(alpha=small.alpha).fit(small.y_tilde, labels)
    without = tiny(alpha=small.alpha).fit(small.y_tilde)
    assert with_y.alpha == small.alpha
    np.testing.assert_array_equal(with_y.components_, without.components_)
    # the old call fit(Y_tilde, alpha) now passes alpha as y: refused unless alpha is set
    with pytest.raises(ValueError, match=r"needs the privacy level.*PrivateTopicModel\(mechanism=\.\.\.\)"):
        tiny().fit(small.y_tilde, small.alpha)


@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_the_nonprivate_method_fits_and_transforms_true_counts(small, inference):
    est = tiny(method="nonprivate", inference=inference)
    theta = est.fit(small.y[:12]).transform(small.y[12:])
    assert est.fit_.method == "nonprivate" and theta.shape == (4, 2)
    with pytest.raises(ValueError, match="mechanism and alpha must be None"):
        est.set_params(alpha=small.alpha).fit(small.y)
    with pytest.raises(ValueError, match="mechanism and alpha must be None"):
        est.set_params(alpha=None, mechanism=GeometricMechanism(epsilon=1.0)).fit(small.y)
    with pytest.raises(ValueError, match="Negative values"):
        tiny(method="nonprivate").fit(small.y_tilde)


def test_the_mechanism_gives_the_model_its_level(small):
    """A mechanism's level fits exactly as the same bare alpha does; the level given twice,
    or as something else than a mechanism, is refused."""
    mechanism = GeometricMechanism(alpha=small.alpha)
    by_object = tiny(mechanism=mechanism).fit(small.y_tilde)
    by_alpha = tiny(alpha=small.alpha).fit(small.y_tilde)
    np.testing.assert_array_equal(by_object.components_, by_alpha.components_)
    np.testing.assert_array_equal(by_object.transform(small.y_tilde[:4]),
                                  by_alpha.transform(small.y_tilde[:4]))
    plain = LevelOnly(epsilon=-np.log(small.alpha))
    np.testing.assert_allclose(tiny(mechanism=plain).fit(small.y_tilde).components_,
                               by_alpha.components_, rtol=1e-12)
    with pytest.raises(ValueError, match="not both"):
        tiny(mechanism=mechanism, alpha=small.alpha).fit(small.y_tilde)
    with pytest.raises(TypeError, match="mechanism must be a GeometricMechanism"):
        tiny(mechanism=small.alpha).fit(small.y_tilde)
    with pytest.raises(ValueError, match="one number"):
        tiny(mechanism=LevelOnly(epsilon=np.ones((16, 1)))).fit(small.y_tilde)


def test_an_exact_alpha_is_taken_as_its_float(small):
    exact = exact_alpha(1, 1)
    a = tiny(alpha=exact).fit(small.y_tilde)
    b = tiny(alpha=float(exact)).fit(small.y_tilde)
    np.testing.assert_array_equal(a.components_, b.components_)


def test_the_same_random_state_repeats_the_fit_and_the_transform(small):
    def run(seed):
        est = PrivateTopicModel(2, alpha=small.alpha, n_iter=25, random_state=seed)
        est.fit(small.y_tilde[:12])
        return est.components_, est.transform(small.y_tilde[12:])

    first, again, other = run(11), run(11), run(12)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], other[0])


def test_several_chains_pool_the_rates_and_keep_chain_0s_components(small):
    est = tiny(alpha=small.alpha, random_state=3, n_chains=2).fit(small.y_tilde)
    one = tiny(alpha=small.alpha, random_state=3).fit(small.y_tilde)
    assert est.fit_.n_chains == 2 and est.seed_ == 3 and est.n_iter_ == 20
    np.testing.assert_array_equal(est.components_, one.components_)  # chain 0 = the one chain
    assert len(est.chain_factors_) == 2 and est.chain_factors_[0] is est.factors_
    # the rates (label-invariant) pool the chains' own products of means
    np.testing.assert_allclose(est.mu_hat_, np.mean(
        [f["theta"] @ f["phi"] for f in est.chain_factors_], axis=0))
    assert not np.array_equal(est.mu_hat_, one.mu_hat_)
    with pytest.raises(ValueError, match="n_chains"):
        est.set_params(inference="variational").fit(small.y_tilde)


def test_the_chains_diagnostics_need_arviz_kept_draws_and_a_gibbs_fit(small):
    est = tiny(alpha=small.alpha, keep_samples=True).fit(small.y_tilde)
    try:
        import arviz  # noqa: F401
    except ImportError:
        assert not hasattr(est, "inference_data_")
    else:
        idata = est.inference_data_
        assert idata.posterior.sizes["draw"] == 10  # the sweeps after the default burn-in
        np.testing.assert_allclose(idata.posterior["log_joint"].values[0], est.fit_.log_joint)
        est.fit(small.y_tilde)  # a new fit drops the old chain's diagnostics
        assert est.inference_data_ is not idata
        some = tiny(alpha=small.alpha, keep_samples=4, n_chains=2).fit(small.y_tilde)
        assert some.inference_data_.posterior.sizes["draw"] == 4
        assert some.inference_data_.posterior.sizes["chain"] == 2
    assert not hasattr(tiny(alpha=small.alpha).fit(small.y_tilde), "inference_data_")
    est.set_params(inference="variational").fit(small.y_tilde)
    assert not hasattr(est, "inference_data_")


def test_the_diagnostics_label_entries_by_the_dataframes_columns(small, monkeypatch):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("arviz")
    pytest.importorskip("sklearn")  # feature_names_in_ is scikit-learn's
    words = [f"w{v}" for v in range(small.y_tilde.shape[1])]
    est = tiny(alpha=small.alpha, keep_samples=True).fit(
        pd.DataFrame(small.y_tilde, columns=words))
    labels = [str(x) for x in est.inference_data_.posterior["entry"].values]
    assert labels and all(label.split(", ")[1] in words for label in labels)
    # without ArviZ the export says what to install; the estimator has no such attribute
    import lpp.diagnostics.export as export

    monkeypatch.setitem(sys.modules, "arviz", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'lpp\[diagnostics\]'"):
        export.require_arviz()
    assert not hasattr(tiny(alpha=small.alpha).fit(small.y_tilde), "inference_data_")


def test_a_mask_leaves_entries_out_of_the_likelihood(small):
    mask = np.zeros(small.y_tilde.shape, dtype=bool)
    mask[0, :3] = True
    est = tiny(alpha=small.alpha)
    masked = est.fit(small.y_tilde, mask=mask).components_
    changed = small.y_tilde.copy()
    changed[0, :3] += 50  # what a masked entry holds cannot matter
    np.testing.assert_array_equal(est.fit(changed, mask=mask).components_, masked)
    assert est.transform(small.y_tilde[:4], mask=mask[:4]).shape == (4, 2)


def test_a_gpu_fit_runs_the_gpu_engine_and_transform_stays_on_the_cpu(small, monkeypatch):
    """device="cuda" under the CPU emulation of the GPU engine's thread code: the fit records
    the device and engine, and transform and score run on the CPU (no GPU backend is asked
    for)."""
    from lpp.inference.engines import cuda

    fits = {}
    with cuda.launch_settings(emulate=True):
        for method, alpha, data, engine in (("collapsed", small.alpha, small.y_tilde,
                                             "cuda-sparse"),
                                            ("naive", small.alpha, small.y_tilde, "cuda-known"),
                                            ("nonprivate", None, small.y, "cuda-known")):
            est = tiny(alpha=alpha, method=method, device="cuda", random_state=4).fit(data[:12])
            assert est.fit_.engine == engine and est.fit_.device != "cpu", method
            assert est.components_.shape == (2, 9) and np.isfinite(est.mu_hat_).all()
            fits[method] = est, data
        # the same seed repeats a GPU fit bit for bit
        again = tiny(alpha=small.alpha, device="cuda", random_state=4).fit(small.y_tilde[:12])
        np.testing.assert_array_equal(again.components_, fits["collapsed"][0].components_)
        with pytest.raises(ValueError, match="mask"):
            tiny(alpha=small.alpha, device="cuda").fit(
                small.y_tilde, mask=np.eye(16, 9, dtype=bool))

    def no_gpu():
        raise AssertionError("transform asked for the GPU")

    monkeypatch.setattr(cuda, "backend", no_gpu)
    for est, data in fits.values():
        assert est.transform(data[12:]).shape == (4, 2)
        assert np.isfinite(est.score(data[12:]))
    # transform is the CPU's fixed-topic chain whatever the device: the same numbers
    cpu = fits["collapsed"][0]
    expected = clone_params(cpu, device="cpu").transform(small.y_tilde[12:])
    np.testing.assert_array_equal(cpu.transform(small.y_tilde[12:]), expected)


def clone_params(est, **params):
    """A copy of the fitted ``est`` (its fitted state copied) with ``params`` set."""
    copy = pickle.loads(pickle.dumps(est))
    return copy.set_params(**params)


# ----- transform ---------------------------------------------------------------------------------

@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_transform_gives_topic_proportions_or_intensities(small, inference):
    est = tiny(alpha=small.alpha, inference=inference).fit(small.y_tilde[:12])
    shares = est.transform(small.y_tilde[12:])
    assert shares.shape == (4, 2) and (shares >= 0).all()
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    theta = est.set_params(normalize=False).transform(small.y_tilde[12:])
    assert (theta > 0).all()
    weights = theta * est.components_.sum(axis=1)  # the expected tokens from each topic
    np.testing.assert_allclose(shares, weights / weights.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("normalize", [True, False])
def test_fit_transform_gives_the_fits_own_document_factors(small, normalize):
    est = tiny(alpha=small.alpha, normalize=normalize)
    out = est.fit_transform(small.y_tilde)
    theta = est.factors_["theta"]
    expected = theta if not normalize else (theta * est.components_.sum(axis=1))
    if normalize:
        expected = expected / expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, expected)
    assert out is not theta and not np.shares_memory(out, theta)


def test_sparse_and_float_inputs_give_what_dense_integers_give(small):
    est = tiny(alpha=small.alpha).fit(small.y_tilde[:12])
    dense = est.transform(small.y_tilde[12:])
    for form in (sp.csr_matrix, sp.csc_matrix, sp.coo_array,
                 lambda a: a.astype(np.float32), lambda a: np.asfortranarray(a),
                 lambda a: a.astype(np.int32).tolist()):
        np.testing.assert_array_equal(est.transform(form(small.y_tilde[12:])), dense)
    refit = tiny(alpha=small.alpha).fit(sp.csr_matrix(small.y_tilde[:12]))
    np.testing.assert_array_equal(refit.components_, est.components_)


def test_read_only_input_is_fine_and_the_estimator_pickles(small):
    data = small.y_tilde.copy()
    data.setflags(write=False)
    est = tiny(alpha=small.alpha).fit(data[:12])
    before = est.transform(data[12:])
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.transform(data[12:]), before)
    np.testing.assert_array_equal(again.components_, est.components_)


def test_transform_leaves_the_fitted_state_alone(small):
    est = tiny(alpha=small.alpha).fit(small.y_tilde[:12])
    state = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(est).items()}
    est.transform(small.y_tilde[12:])
    est.score(small.y_tilde[12:])
    assert vars(est).keys() == state.keys()
    np.testing.assert_array_equal(est.components_, state["components_"])


# ----- score -------------------------------------------------------------------------------------

@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_score_is_the_held_out_predictive_log_likelihood_per_entry(small, inference):
    est = tiny(alpha=small.alpha, inference=inference).fit(small.y_tilde[:12])
    score = est.score(small.y_tilde[12:])
    assert np.isfinite(score) and score < 0
    assert est.score(small.y_tilde[12:], np.zeros(4)) == score  # y is ignored
    # a single document: half of its columns are held out at a time
    assert np.isfinite(est.score(small.y_tilde[12:13]))
    with pytest.raises(ValueError, match=r"at least 2 columns, got n_features=1"):
        tiny(alpha=small.alpha).fit(small.y_tilde[:, :1]).score(small.y_tilde[:3, :1])


def test_score_prefers_the_true_number_of_topics_and_the_fitted_topics():
    """Held-out document completion on well-separated topics: 3 topics beat 1, and the fitted
    topics beat shuffled ones."""
    corpus = make_topics(rng=1, n_docs=60, n_topics=3, n_words=30, words_per_topic=10,
                         doc_length=40.0)
    y_tilde = privatize(corpus.y, ALPHA_1, rng=2)
    order = np.random.default_rng(3).permutation(60)
    train, held = y_tilde[order[:45]], y_tilde[order[45:]]
    scores = {k: tiny(n_components=k, alpha=ALPHA_1, n_iter=100).fit(train).score(held)
              for k in (1, 3)}
    assert scores[3] > scores[1] + 0.02, scores
    est = tiny(n_components=3, alpha=ALPHA_1, n_iter=100).fit(train)
    fitted = est.score(held)
    est.components_ = np.random.default_rng(0).permuted(est.components_, axis=1)
    assert fitted > est.score(held) + 0.02


def test_the_nonprivate_score_is_the_poisson_predictive(small):
    est = tiny(method="nonprivate").fit(small.y[:12])
    assert np.isfinite(est.score(small.y[12:]))


# ----- the mechanism -----------------------------------------------------------------------------

def test_the_mechanism_is_privatize_keyed_by_the_seed_and_the_counts():
    counts = np.random.default_rng(0).poisson(2.0, (6, 5))
    mech = GeometricMechanism(ALPHA_1, random_state=4)
    out = mech.fit_transform(counts)
    np.testing.assert_array_equal(out, privatize(counts, ALPHA_1, rng=_noise_rng(4, counts)))
    assert out.dtype == np.int64 and out.shape == counts.shape
    assert mech.n_features_in_ == 5
    # sparse in, dense int64 out; float whole numbers are counts: the same counts, the same
    # key, the same output (nothing new released, so no warning)
    np.testing.assert_array_equal(mech.transform(sp.csr_matrix(counts)), out)
    np.testing.assert_array_equal(mech.transform(counts.astype(float)), out)


def test_the_mechanism_draws_fresh_noise_unless_seeded_by_an_int():
    counts = np.ones((40, 30), dtype=np.int64)
    system = GeometricMechanism(0.5)  # random_state=None: system randomness on every call
    with pytest.warns(RenoisedRowsWarning):  # a second noisy copy of the same rows
        assert not np.array_equal(system.transform(counts), system.transform(counts))
    forget_noised_rows()
    stream = GeometricMechanism(0.5, random_state=np.random.default_rng(0))
    with pytest.warns(RenoisedRowsWarning):
        assert not np.array_equal(stream.transform(counts), stream.transform(counts))
    forget_noised_rows()
    seeded = GeometricMechanism(0.5, random_state=3)  # the same output twice: no warning
    np.testing.assert_array_equal(seeded.transform(counts), seeded.transform(counts))
    # scikit-learn's legacy generator is drawn from like a Generator: new noise per call,
    # the same sequence of it from the same state
    legacy = [GeometricMechanism(0.5, random_state=np.random.RandomState(5)) for _ in range(2)]
    with pytest.warns(RenoisedRowsWarning):
        first = [legacy[0].transform(counts) for _ in range(2)]
    assert not np.array_equal(*first)
    for out in first:
        np.testing.assert_array_equal(out, legacy[1].transform(counts))


def test_a_random_state_instance_gives_a_reproducible_fit(small):
    """A numpy.random.RandomState (scikit-learn's check_random_state) seeds the fit from its
    state: the same state, the same fit; the instance advances, as scikit-learn's do."""
    fits = [PrivateTopicModel(2, alpha=small.alpha, n_iter=10,
                              random_state=np.random.RandomState(9)).fit(small.y_tilde[:12])
            for _ in range(2)]
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)
    state = np.random.RandomState(9)
    est = PrivateTopicModel(2, alpha=small.alpha, n_iter=10, random_state=state)
    est.fit(small.y_tilde[:12])
    assert not np.array_equal(est.fit(small.y_tilde[:12]).components_, fits[0].components_)


def test_the_mechanisms_noise_is_two_sided_geometric():
    counts = np.full((200, 100), 3)
    noise = GeometricMechanism(ALPHA_1, random_state=0).transform(counts) - counts
    # E|tau| = 2 alpha / (1 - alpha^2); P(tau = 0) = (1 - alpha) / (1 + alpha)
    assert np.abs(noise).mean() == pytest.approx(2 * ALPHA_1 / (1 - ALPHA_1**2), rel=0.03)
    assert (noise == 0).mean() == pytest.approx((1 - ALPHA_1) / (1 + ALPHA_1), rel=0.03)


def test_the_exact_mechanism_takes_an_exact_alpha():
    counts = np.array([[0, 2, 1], [4, 0, 0]])
    exact = GeometricMechanism(exact_alpha(1, 1), exact=True, random_state=0)
    out = exact.transform(counts)
    np.testing.assert_array_equal(out, privatize(counts, exact_alpha(1, 1),
                                                 rng=_noise_rng(0, counts), exact=True))
    with pytest.raises(TypeError, match="exact_alpha"):
        GeometricMechanism(0.5, exact=True).transform(counts)
    # the fast path takes an ExactAlpha as its float (its other sampler: a new noisy copy)
    with pytest.warns(RenoisedRowsWarning, match="epsilon/N = 2 per unit"):
        fast = GeometricMechanism(exact_alpha(1, 1), random_state=0).transform(counts)
    assert fast.shape == (2, 3)


@pytest.mark.parametrize("counts, error, match", [
    ([[1, -2], [0, 3]], ValueError, "Negative values"),
    ([[1.5, 2.0], [0.0, 3.0]], ValueError, "whole-number counts"),
    ([[np.nan, 2.0]], ValueError, "NaN"),
    ([[True, False]], TypeError, "cast booleans"),
    ([1, 2, 3], ValueError, "Reshape your data"),
    (np.empty((0, 3)), ValueError, "0 sample"),
])
def test_the_mechanism_refuses_what_are_not_true_counts(counts, error, match):
    mech = GeometricMechanism(0.5)
    with pytest.raises(error, match=match):
        mech.fit(counts)
    with pytest.raises(error, match=match):
        mech.transform(counts)


@pytest.mark.parametrize("level, error, match", [
    ({}, ValueError, "epsilon is required"),
    ({"alpha": 1.0}, ValueError, "between 0 and 1"),
    ({"alpha": 0.0}, ValueError, "between 0 and 1"),
    ({"alpha": np.array([0.5, 0.5])}, ValueError, "one number"),
    ({"alpha": "0.5"}, TypeError, "alpha"),
    ({"epsilon": 0.0}, ValueError, "epsilon"),
    ({"epsilon": 1.0, "N": 0}, ValueError, "N"),
    ({"epsilon": np.ones(2)}, ValueError, "one number"),
    ({"epsilon": 1.0, "alpha": 0.5}, ValueError, "not both"),
])
def test_the_mechanism_checks_its_level(level, error, match):
    """Checked when used (scikit-learn's convention: the constructor stores, set_params too)."""
    mechanism = GeometricMechanism(**level)
    with pytest.raises(error, match=match):
        mechanism.fit_transform([[1, 2]])


def test_epsilon_given_once_privatizes_as_its_alpha():
    counts = np.array([[1, 2, 0], [4, 0, 3]])
    by_epsilon = GeometricMechanism(epsilon=1.0, random_state=3).fit_transform(counts)
    by_alpha = GeometricMechanism(float(np.exp(-1.0)), random_state=3).fit_transform(counts)
    np.testing.assert_array_equal(by_epsilon, by_alpha)  # the same release: no warning
    forget_noised_rows()  # the exact sampler's noise is another copy
    exact = GeometricMechanism(epsilon="1/2", N=1, exact=True, random_state=3)
    by_exact_alpha = GeometricMechanism(exact_alpha(1, 2), exact=True, random_state=3)
    np.testing.assert_array_equal(exact.transform(counts), by_exact_alpha.transform(counts))


def test_a_fitted_mechanism_checks_the_number_of_columns():
    mech = GeometricMechanism(0.5).fit([[1, 2, 3]])
    with pytest.raises(ValueError, match="expecting 3 features"):
        mech.transform([[1, 2]])
    assert list(mech.get_feature_names_out()) == ["x0", "x1", "x2"]


# ----- bad input ---------------------------------------------------------------------------------

def test_an_unfitted_estimator_says_so(small):
    est = PrivateTopicModel(2, alpha=small.alpha)
    for method in (est.transform, est.score):
        with pytest.raises(NotFittedError, match="not fitted yet") as info:
            method(small.y_tilde)
        assert isinstance(info.value, ValueError) and isinstance(info.value, AttributeError)
    assert not hasattr(est, "inference_data_")
    with pytest.raises(NotFittedError):
        est.get_feature_names_out()


@pytest.mark.parametrize("settings, error, match", [
    ({"inference": "mcmc"}, ValueError, "inference must be one of"),
    ({"init": "random"}, ValueError, "init must be one of"),
    ({"n_components": 0}, ValueError, "n_components"),
    ({"n_components": "2"}, TypeError, "n_components"),
    ({"n_iter": 1.5}, TypeError, "n_iter"),
    ({"n_chains": 0}, ValueError, "n_chains"),
    ({"burn_in": 50, "n_iter": 50}, ValueError, "burn_in"),
    ({"a0": -1.0}, ValueError, "a0"),
    ({"random_state": "seed"}, TypeError, "random_state must be"),
    ({"random_state": True}, TypeError, "random_state must be"),
    ({"inference": "variational", "max_iter": 0}, ValueError, "max_iter"),
    ({"inference": "variational", "tol": -1.0}, ValueError, "tol"),
    ({"normalize": "yes"}, TypeError, "normalize"),
    ({"device": "gpu"}, ValueError, "device must be one of"),
    ({"device": None}, ValueError, "device must be one of"),
    ({"device": "cuda", "inference": "variational"}, ValueError,
     "variational fit runs on the CPU"),
    ({"device": "cuda", "method": "bessel"}, ValueError, "device='cuda' runs"),
    ({"alpha": None}, ValueError, "needs the privacy level"),
    ({"mechanism": "epsilon=1"}, ValueError, "not both"),
    ({"alpha": None, "mechanism": 0.5}, TypeError, "mechanism must be a GeometricMechanism"),
    ({"alpha": 1.5}, ValueError, "alpha"),
    ({"alpha": np.full(16, 0.5)}, ValueError, "one number"),
])
def test_bad_settings_fail_at_fit_naming_the_setting(small, settings, error, match):
    est = PrivateTopicModel(2, alpha=small.alpha, n_iter=5).set_params(**settings)
    with pytest.raises(error, match=match):
        est.fit(small.y_tilde)


def test_bad_data_fail_with_clear_errors(small):
    est = tiny(alpha=small.alpha)
    with pytest.raises(ValueError, match="whole-number counts"):
        est.fit(small.y_tilde + 0.5)
    with pytest.raises(ValueError, match="Complex data not supported"):
        est.fit(small.y_tilde + 1j)
    with pytest.raises(ValueError, match="NaN"):
        est.fit(np.where(small.y_tilde > 2, np.nan, small.y_tilde))
    with pytest.raises(TypeError, match="mask="):
        est.fit(np.ma.masked_array(small.y_tilde))
    est.fit(small.y_tilde)
    with pytest.raises(ValueError, match="expecting 9 features"):
        est.transform(small.y_tilde[:, :8])
    with pytest.raises(ValueError, match="Reshape your data"):
        est.transform(small.y_tilde[0])
    with pytest.raises(ValueError, match="a Gibbs fit does not have"):
        est.set_params(inference="variational").transform(small.y_tilde)


# ----- recovery of synthetic topics --------------------------------------------------------------

@pytest.mark.parametrize("inference", ["gibbs", "variational"])
def test_the_private_fit_recovers_well_separated_topics(inference):
    """At epsilon / N = 1 the noise adds about 0.85 to every entry's absolute value, more than
    a document's mean count per word; the collapsed fit still finds the topics (mean Hellinger
    distance to the truth under 0.25, less than the distance between two true topics)."""
    corpus = make_topics(rng=0, n_docs=90, n_topics=3, n_words=30, words_per_topic=10,
                         doc_length=40.0)
    y_tilde = privatize(corpus.y, ALPHA_1, rng=1)
    est = PrivateTopicModel(3, alpha=ALPHA_1, inference=inference, n_iter=200, burn_in=100,
                            random_state=0).fit(y_tilde)
    match = align_topics(est.components_, corpus.phi)
    between = topic_distances(corpus.phi, corpus.phi)
    apart = between[~np.eye(3, dtype=bool)].min()  # from a true topic to the nearest other
    assert match.distances.mean() < 0.25 < apart, (match.distances, apart)


def _topic_shares(theta, phi):
    """Each document's expected share of tokens from each topic: invariant to the scale that
    theta and phi trade between them."""
    weights = theta * phi.sum(axis=1)
    return weights / weights.sum(axis=1, keepdims=True)


def _heldout_error(inference, method):
    """Mean total-variation distance between the true and the inferred topic shares of 30
    held-out documents, after a fit to 90 documents, at epsilon / N = 1."""
    corpus = make_topics(rng=0, n_docs=120, n_topics=3, n_words=60, words_per_topic=20,
                         doc_length=40.0, doc_mass=0.9)
    y_tilde = privatize(corpus.y, ALPHA_1, rng=100)
    order = np.random.default_rng(0).permutation(120)
    train, held = order[:90], order[90:]
    est = PrivateTopicModel(3, alpha=ALPHA_1, inference=inference, method=method, n_iter=300,
                            burn_in=100, random_state=0).fit(y_tilde[train])
    shares = est.transform(y_tilde[held])  # topic proportions
    # the topics come out in any order: match them to the true ones by their word distributions
    fitted = est.components_ / est.components_.sum(axis=1, keepdims=True)
    true = corpus.phi / corpus.phi.sum(axis=1, keepdims=True)
    _, order_k = linear_sum_assignment(np.abs(true[:, None] - fitted[None]).sum(axis=-1))
    truth = _topic_shares(corpus.theta[held], corpus.phi)
    return 0.5 * np.abs(shares[:, order_k] - truth).sum(axis=1).mean()


# True shares are 0.9 on one topic and 0.05 on the others (a uniform guess is 0.57 away); at
# epsilon / N = 1 the noise adds about 0.43 tokens per word to the 0.67 a document has. Over
# seeds 0-9 of this design the collapsed Gibbs transform's error was 0.06-0.08 against
# 0.13-0.21 for the naive method's, and the collapsed CAVI's 0.10-0.13 against 0.18-0.23: the
# bounds leave room for other seeds, and each method must beat its naive counterpart.
@pytest.mark.parametrize("inference, bound", [("gibbs", 0.12), ("variational", 0.17)])
def test_transform_recovers_heldout_documents_better_than_the_naive_method(inference, bound):
    ours = _heldout_error(inference, "collapsed")
    naive = _heldout_error(inference, "naive")
    assert ours < bound, f"{inference}: error {ours:.3f} of the held-out topic shares"
    assert ours < naive - 0.03, f"{inference}: collapsed {ours:.3f}, naive {naive:.3f}"


# ----- without scikit-learn ----------------------------------------------------------------------

def test_the_estimators_work_with_scikit_learn_blocked():
    """scikit-learn made unimportable: the light base classes keep the parameter protocol,
    fit_transform and the feature names, and nothing imports scikit-learn."""
    code = textwrap.dedent("""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "sklearn":
                    raise ModuleNotFoundError(f"No module named {name!r} (blocked)")
        sys.meta_path.insert(0, Block())
        import numpy as np
        from lpp.estimators import GeometricMechanism, NotFittedError, PrivateTopicModel
        from lpp.estimators._base import SKLEARN
        assert not SKLEARN
        counts = np.random.default_rng(0).poisson(1.0, (12, 6))
        mech = GeometricMechanism(0.5, random_state=1)
        y_tilde = mech.fit_transform(counts)
        assert list(mech.get_feature_names_out()) == [f"x{i}" for i in range(6)]
        est = PrivateTopicModel(2, alpha=0.5, n_iter=10, random_state=0)
        try:
            est.transform(y_tilde)
        except NotFittedError as err:
            assert isinstance(err, ValueError) and isinstance(err, AttributeError)
        shares = est.fit_transform(y_tilde, None)
        assert np.allclose(shares.sum(axis=1), 1.0)
        assert est.transform(y_tilde[:3]).shape == (3, 2)
        assert np.isfinite(est.score(y_tilde))
        assert list(est.get_feature_names_out()) == ["privatetopicmodel0", "privatetopicmodel1"]
        params = est.get_params()
        assert list(params) == sorted(params) and params["alpha"] == 0.5
        copy = type(est)(**params)
        assert copy.set_params(n_components=3).n_components == 3
        assert repr(copy) == ("PrivateTopicModel(alpha=0.5, n_components=3, n_iter=10, "
                              "random_state=0)"), repr(copy)
        try:
            copy.set_params(model="cp")
        except ValueError as err:
            assert "Invalid parameter" in str(err)
        with_y = PrivateTopicModel(2, alpha=0.5, n_iter=10, random_state=0).fit(y_tilde,
                                                                                 [0, 1] * 6)
        assert np.array_equal(with_y.components_, est.components_)
        try:
            est.transform(y_tilde[:, :4])
        except ValueError as err:
            assert "expecting 6 features" in str(err)
        loaded = sorted(m for m in sys.modules if m.split(".")[0] == "sklearn")
        assert not loaded, loaded
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


# ----- documentation -----------------------------------------------------------------------------

@pytest.mark.parametrize("module", ["_topic_model", "_mechanism", "_base", "_checks"])
def test_the_docstring_examples_run(module):
    mod = importlib.import_module(f"lpp.estimators.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted >= {"_topic_model": 10, "_mechanism": 3, "_base": 0,
                                "_checks": 1}[module]


def test_every_public_name_is_documented():
    assert sorted(lpp.estimators.__all__) == sorted(
        ["GeometricMechanism", "INFERENCES", "INITS", "METHODS", "NoisedRows", "NotFittedError",
         "PrivateTopicModel", "RenoisedRowsWarning", "expected_failed_checks",
         "forget_noised_rows", "noised_rows"])
    for cls in (GeometricMechanism, PrivateTopicModel):
        # cleandoc: Python 3.13 strips the docstrings' indentation at compile time
        doc = inspect.cleandoc(cls.__doc__)
        for section in ("Parameters", "Attributes", "Examples"):
            assert f"\n{section}\n---" in doc, (cls.__name__, section)
        for name in ("fit", "transform"):
            method_doc = inspect.cleandoc(getattr(cls, name).__doc__)
            for section in ("Parameters", "Returns", "Examples"):
                assert f"\n{section}\n---" in method_doc, (cls.__name__, name, section)
    for est in (PrivateTopicModel(), GeometricMechanism(0.5)):
        for name in est.get_params():  # a line "name : type" or "name, other : type"
            doc = inspect.cleandoc(type(est).__doc__)
            assert re.search(rf"\n(\w+, )*{name}(, \w+)* : ", doc), name


@pytest.mark.parametrize("cell", [True, np.True_, "3", None, float("nan")])
def test_an_object_array_holding_other_than_numbers_is_refused(cell):
    """A DataFrame of mixed columns arrives as an object array: a bool or a numeric string in
    it is not a count (casting would take True for 1 and "3" for 3), and the error names X."""
    X = np.ones((4, 3), dtype=object)
    X[1, 2] = cell
    for estimator in (GeometricMechanism(0.5, random_state=0),
                      PrivateTopicModel(2, alpha=0.5, n_iter=2)):
        with pytest.raises((TypeError, ValueError), match=r"X must hold counts|NaN"):
            estimator.fit_transform(X) if isinstance(estimator, GeometricMechanism) else \
                estimator.fit(X)


def test_an_object_array_of_numbers_is_read_as_counts():
    X = np.array([[1, 2.0], [np.int64(3), 0]], dtype=object)
    out = GeometricMechanism(0.5, random_state=0).fit_transform(X)
    assert out.shape == (2, 2) and out.dtype == np.int64


def test_a_dispersed_fit_transforms_and_scores_new_documents():
    """The fixed-topic chains of transform and score have no variational fit of the topics
    to disperse a start around: they start from the data."""
    X = privatize(np.random.default_rng(0).poisson(1.0, (30, 25)), 0.6, rng=1)
    est = PrivateTopicModel(3, alpha=0.6, init="dispersed", n_iter=5, random_state=0).fit(X)
    theta = est.transform(X[:5])
    assert theta.shape == (5, 3) and np.allclose(theta.sum(axis=1), 1.0)
    assert np.isfinite(est.score(X[:5]))
