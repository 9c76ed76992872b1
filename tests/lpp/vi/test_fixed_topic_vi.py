"""FixedTopicVI: the collapsed CAVI over the documents' factors with q(phi) held."""
import numpy as np
import pytest

from lpp.inference import FixedTopicModel, TopicModel
from lpp.mechanism import privatize
from lpp.vi import (FixedTopicVI, GammaFactor, TopicVI, VIOptions, fit_variational,
                    variational_model)


def _case(seed=0, n_docs=12, n_words=8, k=2):
    rng = np.random.default_rng(seed)
    phi_mean = rng.gamma(1.0, 1.0, (k, n_words))
    q_phi = GammaFactor(np.full((k, n_words), 50.0), 50.0 / phi_mean)
    theta = rng.gamma(2.0, 1.0, (n_docs, k))
    alpha = 0.5
    return privatize(rng.poisson(theta @ phi_mean), alpha, rng=rng), alpha, q_phi


@pytest.mark.parametrize("method", ["collapsed", "bessel", "naive"])
def test_q_phi_is_held_and_only_theta_moves(method):
    y_tilde, alpha, q_phi = _case()
    fit = fit_variational(y_tilde, alpha, FixedTopicVI(TopicModel(2), q_phi), method=method,
                          run=VIOptions(em_sweeps=0), rng=1)
    assert fit.q["phi"] is q_phi
    assert fit.q["theta"].shape.shape == (12, 2) and fit.iterations > 1


def test_the_collapsed_bound_never_decreases_and_the_engines_agree():
    y_tilde, alpha, q_phi = _case()
    fits = [fit_variational(y_tilde, alpha, FixedTopicVI(TopicModel(2), q_phi),
                            run=VIOptions(em_sweeps=0, sparse=sparse, tol=1e-10, max_iter=200),
                            rng=1)
            for sparse in (True, False)]
    assert [f.engine for f in fits] == ["sparse", "dense"]
    for fit in fits:
        assert np.all(np.diff(fit.objective) >= -1e-9 * np.abs(fit.objective[1:]))
    np.testing.assert_allclose(fits[0].means()["theta"], fits[1].means()["theta"], rtol=1e-6)


def test_data_over_another_vocabulary_are_refused():
    y_tilde, alpha, q_phi = _case()
    with pytest.raises(ValueError, match="8 words, the data have 7 columns"):
        fit_variational(y_tilde[:, :7], alpha, FixedTopicVI(TopicModel(2), q_phi),
                        run=VIOptions(em_sweeps=0))


def test_a_factor_of_the_wrong_shape_is_refused():
    _, _, q_phi = _case()
    with pytest.raises(ValueError, match=r"GammaFactor of shape \(3, V\)"):
        FixedTopicVI(TopicModel(3), q_phi)


def test_a_fixed_topic_model_gets_no_topic_adapter():
    # its rates ignore q(phi), so TopicVI's updates of phi would be invisible to them
    model = FixedTopicModel(np.ones((2, 3)))
    for build in (TopicVI, variational_model):
        with pytest.raises(TypeError, match="FixedTopicVI"):
            build(model)
