"""The topic model's engine with the topics' directions summed out (``collapse_phi=True``):
the posterior by enumeration on a tiny problem, Geweke, bit-identical repeats (seeds, threads,
sparse input, checkpoints) and clear refusals."""
import itertools
import math

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from scipy import integrate
from scipy.special import gammaln

from lpp.inference import GibbsSampler, TopicModel, fit_nonprivate, fit_private
from lpp.inference import RunOptions
from lpp.inference.engines import CollapsedPhiTopicEngine, collapsed_phi
from lpp.inference.models import model_from_params
from lpp.testing import chisquare_gof, geweke_test
from lpp.testing.geweke import geweke_simulations

QUIET = {"progress": False}


def _data(seed=3, n_docs=25, n_words=30, k=3):
    rng = np.random.default_rng(seed)
    return rng.poisson(rng.gamma(1.0, 1.0, (n_docs, k)) @ rng.gamma(0.3, 1.0, (k, n_words)))


def _same(a, b):
    for name in ("theta", "phi"):
        assert np.array_equal(a.samples[name], b.samples[name]), name
    assert np.array_equal(a.log_joint, b.log_joint)
    assert np.array_equal(a.mu_hat, b.mu_hat)


def test_the_option_is_recorded_only_when_set():
    assert "collapse_phi" not in TopicModel(3).params()
    params = TopicModel(3, collapse_phi=True).params()
    assert params["collapse_phi"] is True
    assert model_from_params(params).collapse_phi


def test_a_fit_saves_what_the_default_engine_saves():
    y = _data()
    kw = dict(n_iter=12, burn_in=4, thin=2, rng=1, **QUIET)
    plain = fit_nonprivate(y, TopicModel(3),
                           run=RunOptions(n_iter=12, burn_in=4, thin=2, progress=False), rng=1)
    res = fit_nonprivate(y, TopicModel(3, collapse_phi=True),
                         run=RunOptions(n_iter=12, burn_in=4, thin=2, progress=False), rng=1)
    assert res.engine == "collapsed-phi"
    for name in ("theta", "phi"):
        assert res.samples[name].shape == plain.samples[name].shape
        assert np.all(res.samples[name] > 0)
    assert res.log_joint.shape == plain.log_joint.shape and np.isfinite(res.log_joint).all()
    # the rates' mean is that of the saved draws, the log joint that of each saved point
    assert np.allclose(res.mu_hat, np.mean(res.samples["theta"] @ res.samples["phi"], axis=0))
    chain = GibbsSampler.nonprivate(y, TopicModel(3, collapse_phi=True), rng=1)
    for _ in range(3):
        chain.sweep()
    state = chain.state
    default_form = TopicModel(3).log_joint(state, y, chain.observed)
    assert chain.log_joint() == default_form
    assert chain.state is state  # phi is drawn once per sweep, then kept


def test_the_same_seed_repeats_the_chain_on_any_thread_count_and_sparse_input():
    y = _data()
    model = TopicModel(3, collapse_phi=True)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = fit_nonprivate(y, model,
                             run=RunOptions(n_iter=10, burn_in=2, thin=2, progress=False), rng=4)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = fit_nonprivate(y, model,
                             run=RunOptions(n_iter=10, burn_in=2, thin=2, progress=False), rng=4)
    finally:
        numba.set_num_threads(before)
    _same(one, two)
    _same(one, fit_nonprivate(sp.csr_matrix(y), model,
                              run=RunOptions(n_iter=10, burn_in=2, thin=2, progress=False), rng=4))
    other = fit_nonprivate(y, model,
                           run=RunOptions(n_iter=10, burn_in=2, thin=2, progress=False), rng=5)
    assert not np.array_equal(one.samples["theta"], other.samples["theta"])


def test_a_checkpoint_continues_the_chain_bit_for_bit(tmp_path):
    y = _data()
    model = TopicModel(3, collapse_phi=True)
    run = dict(burn_in=2, thin=2, rng=6, **QUIET)
    full = fit_nonprivate(y, model, run=RunOptions(n_iter=14, burn_in=2, thin=2, progress=False),
                          rng=6)
    path = tmp_path / "c.npz"
    fit_nonprivate(y, model,
                   run=RunOptions(n_iter=7, checkpoint=path, burn_in=2, thin=2, progress=False),
                   rng=6)
    resumed = fit_nonprivate(y, model,
                             run=RunOptions(n_iter=14, checkpoint=path, resume=True, burn_in=2, thin=2, progress=False),
                             rng=6)
    _same(full, resumed)
    assert sorted(resumed.aux) == sorted(collapsed_phi.CARRIED)
    assert np.array_equal(resumed.aux["token_topics"], full.aux["token_topics"])


def test_a_restored_point_without_its_tokens_starts_from_theta_and_phi():
    """A point of theta and phi alone (a user's start, the Geweke simulator's) is a valid start:
    the tokens' topics are drawn given them."""
    y = _data()
    chain = GibbsSampler.nonprivate(y, TopicModel(3, collapse_phi=True), rng=2)
    chain.sweep()
    state = chain.state
    chain.restore(state, {}, 1)
    assert chain.aux == {}
    chain.sweep()
    assert sorted(chain.aux) == sorted(collapsed_phi.CARRIED)


def test_broken_carried_arrays_are_refused():
    y = _data()
    chain = GibbsSampler.nonprivate(y, TopicModel(3, collapse_phi=True), rng=2)
    chain.sweep()
    state, aux = chain.state, chain.aux
    with pytest.raises(ValueError, match="token_topics must hold one topic in"):
        chain.restore(state, {**aux, "token_topics": aux["token_topics"] + 3}, 1)
    with pytest.raises(ValueError, match="topic_mass must hold 3"):
        chain.restore(state, {**aux, "topic_mass": -aux["topic_mass"]}, 1)
    with pytest.raises(ValueError, match="needs .*topic_mass"):
        chain.restore(state, {"token_topics": aux["token_topics"]}, 1)


@pytest.mark.parametrize("call,match", [
    (lambda y: fit_private(y, 0.5, TopicModel(2, collapse_phi=True),
                           run=RunOptions(n_iter=2, progress=False)),
     "collapse_phi=True runs on known counts"),
    (lambda y: fit_nonprivate(y, TopicModel(2, collapse_phi=True),
                              run=RunOptions(n_iter=2, sparse=False, progress=False)), "collapse_phi=True runs on known counts"),
    (lambda y: fit_nonprivate(np.ma.masked_array(y, np.eye(*y.shape, dtype=bool)),
                              TopicModel(2, collapse_phi=True),
                              run=RunOptions(n_iter=2, progress=False)), "no mask"),
    (lambda y: fit_nonprivate(y, TopicModel(2, collapse_phi=True),
                              run=RunOptions(n_iter=2, progress=False), device="cuda"), "collapse_phi=False"),
    (lambda y: TopicModel(2, collapse_phi=True, collapse_theta=True), "set one of them"),
])
def test_where_it_cannot_run_it_says_so(call, match):
    with pytest.raises(ValueError, match=match):
        call(_data())


def test_bad_settings_are_refused():
    with pytest.raises(TypeError, match="collapse_phi must be True or False"):
        TopicModel(2, collapse_phi=1)


def test_the_naive_method_runs_it():
    """The naive method's counts are known (max(y_tilde, 0)): the engine applies."""
    y = _data()
    res = fit_private(y - 1, 0.5, TopicModel(2, collapse_phi=True), method="naive",
                      run=RunOptions(n_iter=3, progress=False), rng=1)
    assert res.engine == "collapsed-phi"


def test_too_many_tokens_are_refused(monkeypatch):
    monkeypatch.setattr(collapsed_phi, "MAX_TOKENS", 10)
    with pytest.raises(ValueError, match="tokens .*at most"):
        fit_nonprivate(_data(), TopicModel(2, collapse_phi=True),
                       run=RunOptions(n_iter=1, progress=False))


def test_engine_selection():
    from lpp.inference.count_sources import TrueCounts
    from lpp.inference.engines import select_engine

    assert select_engine(TopicModel(2, collapse_phi=True), TrueCounts, None) is \
        CollapsedPhiTopicEngine
    assert select_engine(TopicModel(2), TrueCounts, None) is not CollapsedPhiTopicEngine


def test_a_saved_fit_is_not_continued_without_its_tokens(tmp_path):
    from lpp.formats.fits import load_chains, save_fit
    from lpp.inference.continuation import checkpoint_from_fit

    y = _data()
    model = TopicModel(2, collapse_phi=True)
    res = fit_nonprivate(y, model, run=RunOptions(n_iter=4, progress=False), rng=1)
    save_fit(res, tmp_path / "fit", data="tiny")
    saved = load_chains(tmp_path / "fit")[0]
    chain = GibbsSampler.nonprivate(y, model, rng=1)
    with pytest.raises(ValueError, match="carries .*token_topics"):
        checkpoint_from_fit(saved, chain, tmp_path / "c.npz")


# ----- the posterior ---------------------------------------------------------------------------

#: a tiny corpus: 2 documents, 2 words, 5 tokens; K = 2
TINY = np.array([[2, 1], [0, 2]])
A0, B0 = 1.0, 1.0


def _log_integral(n_topic, n_doc_topic, n_cols):
    """``log of int_0^inf m^(V a0 + n_k - 1) e^(-b0 m) prod_d (b0 + m)^-(a0 + n_dk) dm``: the
    topic's mass and the documents' theta integrated out, by quadrature."""
    shape = n_cols * A0 + n_topic

    def log_f(m):
        return ((shape - 1.0) * math.log(m) - B0 * m
                - sum((A0 + n) * math.log(B0 + m) for n in n_doc_topic))

    peak = max(shape - 1.0, 1e-3)
    scale = log_f(peak)
    value, _ = integrate.quad(lambda m: math.exp(log_f(m) - scale) if m > 0 else 0.0, 0,
                              np.inf, limit=200, epsabs=0, epsrel=1e-11)
    return scale + math.log(value)


def _enumerated_posterior(y, k):
    """``p(z | y)`` of every assignment of the tokens (in the engine's order: rows, columns,
    then the entry's tokens) to ``k`` topics, from the model's own priors: theta and phi iid
    Gamma(a0, b0), phi's direction a Dirichlet(a0) integrated out exactly, theta and the mass
    by conjugacy and quadrature."""
    rows, cols = np.nonzero(y)
    tokens = [(d, v) for d, v in zip(rows, cols) for _ in range(y[d, v])]
    n_docs, n_cols = y.shape
    log_p = []
    for z in itertools.product(range(k), repeat=len(tokens)):
        n_dk = np.zeros((n_docs, k), dtype=int)
        n_kv = np.zeros((k, n_cols), dtype=int)
        for (d, v), t in zip(tokens, z):
            n_dk[d, t] += 1
            n_kv[t, v] += 1
        value = gammaln(A0 + n_kv).sum() - gammaln(n_cols * A0 + n_kv.sum(axis=1)).sum()
        value += gammaln(A0 + n_dk).sum()
        value += sum(_log_integral(n_kv[t].sum(), n_dk[:, t], n_cols) for t in range(k))
        log_p.append(value)
    log_p = np.array(log_p)
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def _codes(topics, k):
    return (topics * k ** np.arange(topics.size)).sum()


@pytest.mark.slow
def test_the_tokens_topics_follow_the_enumerated_posterior():
    """The chain's token topics, every ``thin``-th sweep, against ``p(z | y)`` by enumeration
    (chi-square); a chain whose token sweep smooths with ten times ``a0`` fails the same
    test."""
    k, thin, n_draws = 2, 4, 6000
    pmf = _enumerated_posterior(TINY, k)
    support = np.arange(pmf.size)

    def draws():
        chain = GibbsSampler.nonprivate(TINY, TopicModel(k, a0=A0, b0=B0, collapse_phi=True),
                                        rng=11)
        out = np.empty(n_draws, dtype=np.int64)
        for i in range(n_draws):
            for _ in range(thin):
                chain.sweep()
            out[i] = _codes(chain.aux["token_topics"].astype(np.int64), k)
        return out

    assert chisquare_gof(draws(), support, pmf)

    real = collapsed_phi.sweep_topics

    def over_smoothed(indptr, cols, token_ptr, topics, theta, mass, a0, *rest):
        return real(indptr, cols, token_ptr, topics, theta, mass, 10.0 * a0, *rest)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(collapsed_phi, "sweep_topics", over_smoothed)
        assert not chisquare_gof(draws(), support, pmf)


@pytest.mark.slow
def test_the_chain_gets_it_right():
    """Geweke: the chain (tokens' topics drawn anew given theta and phi after every fresh data
    set, one collapsed sweep, phi drawn where read) leaves the joint distribution invariant."""
    forward, chain = geweke_simulations(TopicModel(2, a0=3.0, b0=3.0, collapse_phi=True),
                                        (3, 4), method="nonprivate", rng=7, n_forward=10_000,
                                        n_chain=10_000)
    result = geweke_test(forward, chain)
    assert result, f"\n{result}"


@pytest.mark.slow
def test_the_geweke_check_catches_a_wrong_mass(monkeypatch):
    """Power: each topic's mass drawn at twice its conditional's scale must fail the same
    test."""
    real = collapsed_phi.draw_topic_mass
    monkeypatch.setattr(collapsed_phi, "draw_topic_mass", lambda *args: 2.0 * real(*args))
    forward, chain = geweke_simulations(TopicModel(2, a0=3.0, b0=3.0, collapse_phi=True),
                                        (3, 4), method="nonprivate", rng=7, n_forward=10_000,
                                        n_chain=10_000)
    assert not geweke_test(forward, chain)
