"""The known-counts topic engine (the non-private chain and the naive method): the dense
sweep's chain bit for bit, the same with any number of threads, and a Geweke test of the
non-private chain through it (docs/design.md, *The known-counts engine*)."""
from dataclasses import replace

import numba
import numpy as np
import pytest

from lpp.inference import kernels, numerics
from lpp.inference.models.topics import kernels as topic_kernels
from lpp.inference import FixedTopicModel, GibbsSampler, TopicModel, fit_nonprivate, fit_private
from lpp.inference import RunOptions
from lpp.inference.engines import KnownCountsTopicEngine, known_topics, select_engine
from lpp.testing.geweke import geweke_simulations
from lpp.inference.privacy import NaivePrivacy, make_privacy_step
from lpp.inference.count_sources import TrueCounts
from lpp.mechanism import privatize
from lpp.testing import geweke_test


def _data(seed=5, n_docs=160, n_words=120, k=4):
    rng = np.random.default_rng(seed)
    mu = rng.gamma(0.3, 1.0, (n_docs, k)) @ rng.gamma(0.3, 1.0, (k, n_words))
    y = rng.poisson(mu)
    return y, privatize(y, 0.5, rng=rng), rng.random(y.shape) < 0.05


def _same(a, b, names=("theta", "phi", "y")):
    for k in names:
        assert np.array_equal(a.samples[k], b.samples[k]), k
    assert np.array_equal(a.log_joint, b.log_joint)
    assert np.array_equal(a.mu_hat, b.mu_hat)


@pytest.mark.parametrize("mask_kind", ["none", "few", "many"])
def test_the_chain_is_the_dense_sweeps_bit_for_bit(mask_kind):
    """The engine replaces the dense sweep of the non-private and the naive chain: same
    draws, so the same chain (with no mask, a few held-out entries, and 40% held out, where the
    Gamma rates take the dense route)."""
    y, y_tilde, few = _data()
    mask = {"none": None, "few": few,
            "many": np.random.default_rng(1).random(y.shape) < 0.4}[mask_kind]
    known = fit_nonprivate(np.ma.masked_array(y, mask), TopicModel(4),
                           run=RunOptions(n_iter=5, save_counts=True, progress=False), rng=9)
    dense = fit_nonprivate(np.ma.masked_array(y, mask), TopicModel(4),
                           run=RunOptions(sparse=False, n_iter=5, save_counts=True,
                                          progress=False),
                           rng=9)
    assert (known.engine, dense.engine) == ("sparse-known", "dense")
    _same(known, dense)
    known = fit_private(np.ma.masked_array(y_tilde, mask), 0.5, TopicModel(4), method="naive",
                        run=RunOptions(n_iter=5, save_counts=True, progress=False), rng=9)
    dense = fit_private(np.ma.masked_array(y_tilde, mask), 0.5, TopicModel(4), method="naive",
                        run=RunOptions(sparse=False, n_iter=5, save_counts=True, progress=False),
                        rng=9)
    assert (known.engine, dense.engine) == ("sparse-known", "dense")
    _same(known, dense)


# below EAGER_SUMS, within two blocks of it, and over several blocks with a rest
@pytest.mark.parametrize("k", [5, 9, 20, 43])
@pytest.mark.parametrize("case", ["plain", "underflow", "nan", "ties", "zeros", "inf", "deep"])
def test_the_allocation_is_the_dense_kernels_on_awkward_factors(case, k):
    """The engine's kernel writes the dense kernel's arithmetic and draws out, and puts a row's
    topics in order only as far as its scans reach: the same split as the dense kernel where
    the products underflow (log-space weights), a factor is NaN or infinite, factors tie
    (the order's ties), weights are zero (the walk back off zero-weight topics), and for
    counts above FEW_TRIALS and above LARGE_COUNT; with fewer topics than the running sums
    formed at once, and more; and where most tokens lie beyond the first blocks ("deep": the
    row's heaviest topics have the lightest words)."""
    from lpp.distributions import FEW_TRIALS, LARGE_COUNT

    rng = np.random.default_rng(3)
    n_docs, n_words = 60, 50
    y = rng.poisson(3.0, (n_docs, n_words))
    y[0, :4] = [FEW_TRIALS + 1, 200, LARGE_COUNT + 7, FEW_TRIALS]
    observed = rng.random(y.shape) < 0.9
    theta = rng.gamma(0.1, 1.0, (n_docs, k))
    phi = rng.gamma(0.1, 1.0, (k, n_words))
    if case == "underflow":
        theta[:10] *= 1e-160
        phi[:, :10] *= 1e-160
    elif case == "nan":
        theta[3, 2] = np.nan
    elif case == "ties":
        theta[5] = theta[5, 0]
        theta[6, ::2] = theta[6, 1]
    elif case == "zeros":
        phi[:, 7] = 0.0
        theta[6, :4] = 0.0
        phi[:4, 8] = 0.0
    elif case == "inf":
        theta[8, 1] = np.inf
    elif case == "deep":  # the row's order is 0, 1, ...; the weights grow along it
        theta = np.broadcast_to(0.8 ** np.arange(k), theta.shape).copy()
        phi *= 0.7 ** -np.arange(k)[:, None]
    engine = KnownCountsTopicEngine(y, observed)
    for iteration in range(3):
        doc_topic, topic_word = engine.allocate(theta, phi, 77, iteration)
        dense_doc, dense_word = topic_kernels.allocate_matrix_kernel(
            y, observed, theta, np.ascontiguousarray(phi.T), 77, iteration)
        assert np.array_equal(doc_topic, dense_doc) and np.array_equal(topic_word, dense_word.T)
    if case == "deep":  # tokens reached the last blocks and the rest
        rest = k - k % topic_kernels.EAGER_SUMS  # the rest is scanned a sum at a time
        assert doc_topic[:, rest:].sum() > 0
        assert rest == 0 or doc_topic[:, rest - topic_kernels.EAGER_SUMS:rest].sum() > 0


def test_the_chunks_share_the_tokens(monkeypatch):
    """The row chunks of the threads hold about equal work counted in tokens as well as
    entries (:meth:`KnownCountsLayout.row_steps`): long documents repeat their words, and
    chunks of equal entries would leave one thread most of the tokens."""
    rng = np.random.default_rng(6)
    y = (rng.random((400, 60)) < 0.2).astype(np.int64)
    y[:60] *= 12  # the first rows: as many entries as the others, 12 times the tokens
    engine = KnownCountsTopicEngine(y, np.ones(y.shape, dtype=bool))
    monkeypatch.setattr(known_topics, "n_chunks", lambda *a, **k: 4)
    monkeypatch.setattr(known_topics.numba, "get_num_threads", lambda: 4)
    calls, _ = engine._plan_for(5)
    monkeypatch.undo()
    starts = calls[0][0]
    bounds = np.concatenate((starts, [y.shape[0]]))
    steps = engine.layout.row_steps(5)
    shares = np.add.reduceat(steps, bounds[:-1])
    assert starts.size == 4 and np.all(np.abs(shares - steps.sum() / 4) <= steps.max())


def test_fixed_topics_run_on_it_alike():
    y, y_tilde, mask = _data()
    model = FixedTopicModel(np.random.default_rng(2).gamma(1.0, 1.0, (4, y.shape[1])))
    run = RunOptions(n_iter=4, save_counts=True, progress=False)
    data = np.ma.masked_array(y, mask)
    for fit in (fit_nonprivate, lambda *a, **k: fit_private(a[0], 0.5, a[1], method="naive",
                                                           **k)):
        known = fit(data, model, run=run, rng=3)
        dense = fit(data, model, run=replace(run, sparse=False), rng=3)
        assert (known.engine, dense.engine) == ("sparse-known", "dense")
        _same(known, dense, names=("theta", "y"))


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_bit_identical_with_one_or_two_threads_and_the_serial_twin(threads, monkeypatch):
    y, y_tilde, mask = _data()
    runs = []
    for n_threads in (1, 2):
        numba.set_num_threads(n_threads)
        runs.append((fit_nonprivate(np.ma.masked_array(y, mask), TopicModel(4),
                                    run=RunOptions(n_iter=4, save_counts=True, progress=False),
                                    rng=9),
                     fit_private(np.ma.masked_array(y_tilde, mask), 0.5, TopicModel(4),
                                 method="naive",
                                 run=RunOptions(n_iter=4, save_counts=True,
                                                progress=False), rng=9)))
    monkeypatch.setattr(known_topics, "SERIAL_BELOW", 10**12)
    runs.append((fit_nonprivate(np.ma.masked_array(y, mask), TopicModel(4),
                                run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9),
                 fit_private(np.ma.masked_array(y_tilde, mask), 0.5, TopicModel(4), method="naive",
                             run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9)))
    monkeypatch.undo()
    # other chunkings, calls of bounded work, and the int64 partial counts
    monkeypatch.setattr(kernels, "MAX_CHUNKS", 3)
    monkeypatch.setattr(numerics, "CALL_STEPS", 500)
    monkeypatch.setattr(known_topics, "PARTIAL_LIMIT", 0)
    runs.append((fit_nonprivate(np.ma.masked_array(y, mask), TopicModel(4),
                                run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9),
                 fit_private(np.ma.masked_array(y_tilde, mask), 0.5, TopicModel(4), method="naive",
                             run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9)))
    for other in runs[1:]:
        for first, again in zip(runs[0], other):
            assert again.engine == "sparse-known"
            _same(first, again)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
@pytest.mark.parametrize("method", ["nonprivate", "naive"])
def test_a_chain_whose_thread_count_changes_between_sweeps_plans_each_count_once(threads,
                                                                                   method):
    y, y_tilde, _ = _data()

    def chain():
        if method == "nonprivate":
            return GibbsSampler.nonprivate(y, TopicModel(4), rng=3)
        return GibbsSampler.private(y_tilde, 0.5, TopicModel(4), method="naive", rng=3)

    steady, turns = chain(), chain()
    plans = []
    for n_threads in (1, 2, 1, 2, 1):
        numba.set_num_threads(2)
        steady.sweep()
        numba.set_num_threads(n_threads)
        turns.sweep()
        plans.append(turns._fused._plan_for(4))
    # each count is planned once: the kernel calls are made once per thread count
    assert plans[0][0] is plans[2][0] is plans[4][0] and plans[1][0] is plans[3][0]
    # every plan adds into the largest table made, the one-chunk plan into its first chunk
    assert all(np.shares_memory(p[1], plans[1][1]) for p in plans[1:])
    assert (plans[2][1].shape[0], plans[1][1].shape[0]) == (1, 2)
    assert turns.engine == "sparse-known"
    for k in ("theta", "phi"):
        assert np.array_equal(steady.state[k], turns.state[k]), k


def test_engine_selection_by_declared_capabilities():
    y, y_tilde, _ = _data()

    class OwnRates(TopicModel):
        def rate(self, state):
            return super().rate(state)

    class OwnNaive(NaivePrivacy):  # overriding sample voids the "known_counts" promise
        def sample(self, *args):
            return super().sample(*args)

    assert KnownCountsTopicEngine.applies(TopicModel(3), TrueCounts(y), None)
    assert select_engine(TopicModel(3), make_privacy_step("naive"), None) is KnownCountsTopicEngine
    assert "known_counts" not in OwnNaive.capabilities
    assert GibbsSampler.nonprivate(y, TopicModel(3), rng=1).engine == "sparse-known"
    assert GibbsSampler.nonprivate(y, OwnRates(3), rng=1).engine == "dense"
    assert GibbsSampler.nonprivate(y, TopicModel(3), rng=1, sparse=False).engine == "dense"
    assert GibbsSampler.private(y_tilde, 0.5, TopicModel(3), method=OwnNaive(),
                                rng=1).engine == "dense"
    with pytest.raises(ValueError, match="sparse=True"):
        GibbsSampler.nonprivate(y, OwnRates(3), rng=1, sparse=True)
    with pytest.raises(ValueError, match="sparse=True"):
        GibbsSampler.private(y_tilde, 0.5, TopicModel(3), method="bessel", rng=1, sparse=True)
    with pytest.raises(TypeError, match="sparse"):
        GibbsSampler.nonprivate(y, TopicModel(3), rng=1, sparse="yes")


def test_the_layout_holds_the_observed_non_zero_counts():
    y, _, mask = _data()
    layout = known_topics.KnownCountsLayout(y, ~mask)
    dense = np.zeros_like(y)
    for d in range(y.shape[0]):
        cols = layout.cols[layout.indptr[d]:layout.indptr[d + 1]]
        assert np.all(np.diff(cols) > 0)
        dense[d, cols] = layout.values[layout.indptr[d]:layout.indptr[d + 1]]
    assert np.array_equal(dense, np.where(mask, 0, y)) and np.all(layout.values > 0)
    assert np.array_equal(layout.row_counts, dense.sum(axis=1))


@pytest.mark.slow
@pytest.mark.parametrize("masked", [False, True])
def test_the_nonprivate_chain_gets_it_right(masked):
    """Geweke: the non-private chain through the engine (sparse=True) targets the posterior."""
    mask = None
    if masked:
        mask = np.zeros((3, 4), dtype=bool)
        mask[0, 1] = mask[2, 3] = True
    forward, chain = geweke_simulations(TopicModel(2, a0=3.0, b0=3.0), (3, 4),
                                        method="nonprivate", mask=mask, rng=7, sparse=True,
                                        n_forward=10_000, n_chain=10_000)
    result = geweke_test(forward, chain)
    assert result, f"\n{result}"


@pytest.mark.slow
def test_the_geweke_check_catches_a_wrong_allocation(monkeypatch):
    """Power: allocating every count to topic 0 must fail the same test."""
    original = known_topics.KnownCountsTopicEngine.allocate

    def to_topic_zero(self, theta, phi, seed, iteration):
        doc_topic, topic_word = original(self, theta, phi, seed, iteration)
        doc_topic[:, 0] = doc_topic.sum(axis=1)
        doc_topic[:, 1:] = 0
        topic_word[0] = topic_word.sum(axis=0)
        topic_word[1:] = 0
        return doc_topic, topic_word

    monkeypatch.setattr(known_topics.KnownCountsTopicEngine, "allocate", to_topic_zero)
    forward, chain = geweke_simulations(TopicModel(2, a0=3.0, b0=3.0), (3, 4),
                                        method="nonprivate", rng=7, sparse=True,
                                        n_forward=10_000, n_chain=10_000)
    assert not geweke_test(forward, chain)
