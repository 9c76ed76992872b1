"""Every built-in model against the interface (rates, allocation totals, densities, input
checks, the expectation step) and the registry; each model's own tests are in its folder."""
import itertools

import numpy as np
import pytest
from scipy import stats

from lpp.distributions import TINY
from lpp.inference.models import (
    CommunityModel,
    CPTensorModel,
    Observed,
    PoissonFactorization,
    TopicModel,
    model_from_params,
)
from lpp.testing import FALSE_ALARM

MODELS = [
    (TopicModel(3), (7, 5)),
    (CommunityModel(2), (6, 6)),
    (CPTensorModel(2), (3, 4, 5)),
]


def _observed(model, shape, missing=None):
    mask = np.ones(shape, dtype=bool) if missing is None else ~missing
    never = model.always_missing(shape)
    if never is not None:
        mask &= ~never
    return Observed(mask)


@pytest.mark.parametrize("model,shape", MODELS, ids=lambda m: getattr(m, "name", ""))
def test_rates_match_the_definitions(model, shape):
    state = model.sample_prior(shape, 1)
    mu = model.rate(state)
    if model.name == "topics":
        expected = np.einsum("dk,kv->dv", state["theta"], state["phi"])
    elif model.name == "communities":
        expected = np.einsum("ic,cd,jd->ij", state["theta"], state["pi"], state["theta"])
        np.fill_diagonal(expected, 0.0)
    else:
        expected = np.einsum("ir,jr,lr->ijl", state["factor0"], state["factor1"], state["factor2"])
    assert mu.shape == shape and np.allclose(mu, expected, rtol=1e-12)


@pytest.mark.parametrize("model,shape", MODELS, ids=lambda m: getattr(m, "name", ""))
def test_allocation_conserves_observed_counts(model, shape):
    rng = np.random.default_rng(2)
    y = rng.poisson(3.0, shape)
    missing = rng.random(shape) < 0.2
    missing.flat[0] = False
    obs = _observed(model, shape, missing)
    stats_ = model.allocate(model.sample_prior(shape, 3), y, obs, 5, 0)
    total = int(y[obs.is_observed].sum())
    for name, counts in stats_.items():
        # each role of a count adds it once; a community count has a sender and a receiver
        per_count = 2 if name == "node_community" else 1
        assert counts.dtype == np.int64 and counts.sum() == per_count * total, name


def test_log_prior_and_likelihood_match_scipy():
    model = TopicModel(2, a0=0.7, b0=1.3)
    state = model.sample_prior((4, 3), 1)
    expected = sum(stats.gamma(0.7, scale=1 / 1.3).logpdf(a).sum() for a in state.values())
    assert np.isclose(model.log_prior(state), expected, rtol=1e-12)
    y = np.array([[0, 1, 2], [3, 0, 0], [1, 1, 1], [0, 0, 5]])
    mu = model.rate(state)
    obs = Observed(y != 5)
    assert np.isclose(model.log_likelihood(y, mu, obs), stats.poisson.logpmf(y, mu)[y != 5].sum())


def test_prior_draws_never_underflow_to_zero():
    state = TopicModel(2, a0=0.005).sample_prior((50, 40), 1)
    assert all(np.all(a >= TINY) for a in state.values())
    assert np.isfinite(TopicModel(2, a0=0.005).log_prior(state))


@pytest.mark.parametrize("model,shape", MODELS, ids=lambda m: getattr(m, "name", ""))
def test_allocation_survives_underflowing_factor_products(model, shape):
    state = {k: np.full(v.shape, TINY) for k, v in model.sample_prior(shape, 1).items()}
    y = np.ones(shape, dtype=np.int64)
    obs = _observed(model, shape)
    out = model.allocate(state, y, obs, 1, 0)
    assert sum(int(v.sum()) for v in out.values()) > 0
    new = model.update_latents(state, out, obs, 2, 0)
    assert all(np.isfinite(a).all() and (a > 0).all() for a in new.values())


def test_masked_out_indices_are_refused_except_network_nodes():
    topics = TopicModel(2)
    mask = np.ones((3, 4), dtype=bool)
    mask[1] = False
    with pytest.raises(ValueError, match=r"index \[1\] along axis 0"):
        topics.check_observed(Observed(mask))
    # a node of the community model may lose every entry (the paper's held-out design)
    net = CommunityModel(2)
    mask = ~np.eye(4, dtype=bool)
    mask[2, :] = False
    mask[:, 2] = False
    net.check_observed(Observed(mask))
    with pytest.raises(ValueError, match="every entry is masked"):
        net.check_observed(Observed(np.zeros((4, 4), dtype=bool)))
    cp = CPTensorModel(2)
    mask = np.ones((2, 3, 2), dtype=bool)
    mask[:, 1, :] = False
    with pytest.raises(ValueError, match="axis 1"):
        cp.check_observed(Observed(mask))


@pytest.mark.parametrize("bad,err", [(0, ValueError), (-1, ValueError), (2.5, TypeError),
                                     (True, TypeError)])
def test_component_count_is_checked(bad, err):
    with pytest.raises(err, match="n_components"):
        TopicModel(bad)


@pytest.mark.parametrize("kw", [{"a0": 0.0}, {"b0": -1.0}, {"a0": np.inf}])
def test_hyperparameters_are_checked(kw):
    with pytest.raises(ValueError):
        CommunityModel(2, **kw)


def test_shapes_are_checked():
    with pytest.raises(ValueError, match="3-d"):
        CPTensorModel(2).check_shape((3, 4))
    with pytest.raises(ValueError, match="2-d"):
        TopicModel(2).check_shape((3, 4, 5))


def test_user_states_are_validated():
    model = TopicModel(2)
    good = model.sample_prior((3, 4), 1)
    assert model.check_state(good, (3, 4))["theta"] is not good["theta"]
    with pytest.raises(ValueError, match="shape"):
        model.check_state({"theta": np.ones((3, 3)), "phi": good["phi"]}, (3, 4))
    with pytest.raises(ValueError, match="needs"):
        model.check_state({"theta": good["theta"]}, (3, 4))
    with pytest.raises(ValueError, match="> 0"):
        model.check_state({"theta": -good["theta"], "phi": good["phi"]}, (3, 4))


def test_plug_in_interface_is_abstract():
    with pytest.raises(TypeError):
        PoissonFactorization(2)
    assert repr(TopicModel(4, a0=0.2)) == "TopicModel(n_components=4, a0=0.2, b0=1.0)"


# ----- expectation step (init="em") ----------------------------------------------------------

def _expected_topic_step_by_loops(theta, phi, y, obs, a0, b0):
    """The expectation step written out entry by entry (an independent reference)."""
    n_docs, k = theta.shape
    n_words = phi.shape[1]
    doc_topic, topic_word = np.zeros((n_docs, k)), np.zeros((k, n_words))
    for d, v in itertools.product(range(n_docs), range(n_words)):
        if obs[d, v]:
            share = theta[d] * phi[:, v]
            doc_topic[d] += y[d, v] * share / share.sum()
            topic_word[:, v] += y[d, v] * share / share.sum()
    phi_new = np.empty_like(phi)
    for kk, v in itertools.product(range(k), range(n_words)):
        phi_new[kk, v] = (a0 + topic_word[kk, v]) / (b0 + sum(
            theta[d, kk] for d in range(n_docs) if obs[d, v]))
    theta_new = np.empty_like(theta)
    for d, kk in itertools.product(range(n_docs), range(k)):
        theta_new[d, kk] = (a0 + doc_topic[d, kk]) / (b0 + sum(
            phi_new[kk, v] for v in range(n_words) if obs[d, v]))
    return {"theta": theta_new, "phi": phi_new}


def _expected_community_step_by_loops(theta, pi, y, obs, a0, b0):
    n, c = theta.shape
    block, node_comm = np.zeros((c, c)), np.zeros((n, c))
    pair_mass = np.zeros((c, c))
    for i, j in itertools.product(range(n), range(n)):
        if not obs[i, j]:
            continue
        share = theta[i][:, None] * pi * theta[j][None, :]
        alloc = y[i, j] * share / share.sum()
        block += alloc
        node_comm[i] += alloc.sum(axis=1)
        node_comm[j] += alloc.sum(axis=0)
        pair_mass += np.outer(theta[i], theta[j])
    pi_new = (a0 + block) / (b0 + pair_mass)
    exposure = np.full((n, c), b0)
    for i, j in itertools.product(range(n), range(n)):
        if obs[i, j]:
            exposure[i] += pi_new @ theta[j]
            exposure[j] += theta[i] @ pi_new
    return {"theta": (a0 + node_comm) / exposure, "pi": pi_new}


@pytest.mark.parametrize("model,shape,reference", [
    (TopicModel(3, a0=0.3, b0=0.7), (7, 5), _expected_topic_step_by_loops),
    (CommunityModel(2, a0=0.3, b0=0.7), (6, 6), _expected_community_step_by_loops),
], ids=["topics", "communities"])
@pytest.mark.parametrize("missing_fraction", [0.0, 0.1, 0.4])
def test_expectation_step_matches_its_definition(model, shape, reference, missing_fraction):
    rng = np.random.default_rng(31)
    y = rng.poisson(2.0, shape)
    missing = rng.random(shape) < missing_fraction
    missing.flat[1] = False  # keep one entry of the first row observed
    obs = _observed(model, shape, missing)
    state = model.sample_prior(shape, 4)
    got = model.expectation_step(state, y, obs)
    first, second = model.latent_shapes(shape)  # theta, then phi / pi
    want = reference(state[first], state[second], y, obs.is_observed, model.a0, model.b0)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-10, err_msg=name)


@pytest.mark.parametrize("model,shape,first", [
    (TopicModel(3), (6, 5), "phi"),
    (CommunityModel(2), (6, 6), "pi"),
], ids=["topics", "communities"])
def test_expectation_step_is_the_mean_of_the_gibbs_step(model, shape, first):
    """The latent a Gibbs sweep updates first (phi, pi) has, over the sweep's randomness
    (allocation and Gamma draw), exactly the expectation step's value as its mean. 4000 sweeps
    from one state; a two-sided z-test per entry, Bonferroni over entries, false alarm <= 1e-3.
    A rate that omits the mask or a mis-weighted allocation shifts the mean by many sigma."""
    rng = np.random.default_rng(8)
    y = rng.poisson(3.0, shape)
    missing = rng.random(shape) < 0.2
    missing.flat[1] = False
    obs = _observed(model, shape, missing)
    state = model.sample_prior(shape, 6)
    state = {k: v + 0.3 for k, v in state.items()}  # away from the tiny prior draws
    draws = np.stack([model.step(state, y, obs, 1000 + s, 0)[first] for s in range(4000)])
    want = model.expectation_step(state, y, obs)[first]
    z = (draws.mean(axis=0) - want) / (draws.std(axis=0, ddof=1) / np.sqrt(len(draws)))
    threshold = stats.norm.isf(FALSE_ALARM / 2 / z.size)
    assert np.abs(z).max() < threshold, np.abs(z).max()


@pytest.mark.parametrize("model, alias", [(TopicModel(3, a0=0.2), "n_topics"),
                                          (CommunityModel(4, b0=2.0), "n_communities"),
                                          (CPTensorModel(2), "rank")])
def test_one_name_for_the_component_count_and_the_papers_names_as_aliases(model, alias):
    assert getattr(model, alias) == model.n_components
    rebuilt = model_from_params(model.params())
    assert type(rebuilt) is type(model) and rebuilt.params() == model.params()
    assert type(model)(n_components=model.n_components).n_components == model.n_components


@pytest.mark.parametrize("params, error, match", [
    ({"n_components": 2}, TypeError, "'model' name"),
    ("topics", TypeError, "'model' name"),
    ({"model": "topics", "n_components": 2, "K": 3}, ValueError, "unknown settings"),
    ({"model": "lda", "n_components": 2}, ValueError, "unknown model"),
    ({"model": "topics"}, TypeError, "needs n_components"),
])
def test_model_from_params_refuses_what_no_model_recorded(params, error, match):
    with pytest.raises(error, match=match):
        model_from_params(params)
