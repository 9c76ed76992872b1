"""Sparse true counts: checked as dense ones, held as CSR, and a non-private chain on them that
equals the chain on the same counts given dense, bit for bit, without a D x V array."""
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from lpp.inference import (
    CommunityModel,
    FixedTopicModel,
    GibbsSampler,
    TopicModel,
    fit_nonprivate,
)
from lpp.inference import RunOptions
from lpp.inference.sparse_counts import SparseCounts
from lpp.validation import count_array

QUIET = {"progress": False}
FORMATS = [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array, sp.csc_array,
           sp.coo_array, sp.lil_matrix, sp.dok_array]


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(7)
    y = rng.poisson(0.4, (30, 25))
    y[4] = 0  # an empty document and an unused word
    y[:, 6] = 0
    return y


def _same_fit(a, b):
    """Bit-identical fits (timings aside)."""
    assert a.engine == b.engine == "sparse-known"
    assert a.saved_iterations.tolist() == b.saved_iterations.tolist()
    assert a.samples.keys() == b.samples.keys()
    for name in a.samples:
        np.testing.assert_array_equal(a.samples[name], b.samples[name])
    for name in a.state:
        np.testing.assert_array_equal(a.state[name], b.state[name])
    np.testing.assert_array_equal(a.log_joint, b.log_joint)
    if a.mu_hat is None:
        assert b.mu_hat is None
    else:
        np.testing.assert_array_equal(a.mu_hat, b.mu_hat)
    assert a.data_fingerprint == b.data_fingerprint


@pytest.mark.parametrize("form", FORMATS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_every_format_and_dtype_holds_the_dense_counts(counts, form, dtype):
    held = SparseCounts.from_input(form(counts.astype(dtype)), "y")
    np.testing.assert_array_equal(held.dense(), counts)
    assert held.data.dtype == np.int64 and held.indices.dtype == np.int32
    assert (held.data > 0).all()  # zeros are not entries


def test_explicit_zeros_and_duplicates_are_summed_and_dropped_without_changing_the_input():
    coo = sp.coo_array((np.array([2.0, 0.0, 1.0, 3.0]), (np.array([0, 0, 1, 1]),
                                                        np.array([1, 2, 0, 0]))), shape=(2, 3))
    before = coo.data.copy()
    held = SparseCounts.from_input(coo, "y")
    np.testing.assert_array_equal(held.dense(), [[0, 2, 0], [4, 0, 0]])
    assert held.nnz == 2
    np.testing.assert_array_equal(coo.data, before)
    csr = sp.csr_matrix((np.array([1, 0, 2]), np.array([2, 0, 1]), np.array([0, 3])),
                        shape=(1, 3))  # an explicit zero, columns out of order
    held = SparseCounts.from_input(csr, "y")
    np.testing.assert_array_equal(held.indices, [1, 2])
    np.testing.assert_array_equal(csr.indices, [2, 0, 1])


@pytest.mark.parametrize("bad", [[[1.0, -1.0]], [[1.5, 0.0]], [[np.nan, 1.0]], [[np.inf, 0.0]],
                                 [[True, False]]])
def test_bad_values_get_the_errors_of_dense_counts(bad):
    dense = np.array(bad)
    with pytest.raises((TypeError, ValueError)) as from_dense:
        count_array(dense, "y", signed=False)
    with pytest.raises(type(from_dense.value), match=str(from_dense.value)[:30]):
        SparseCounts.from_input(sp.csr_matrix(dense), "y")
    with pytest.raises(type(from_dense.value), match=str(from_dense.value)[:30]):
        fit_nonprivate(sp.csr_matrix(dense), TopicModel(1),
                       run=RunOptions(n_iter=1, progress=False))


@pytest.mark.parametrize("init", ["data", "em", "prior"])
def test_a_sparse_fit_is_the_dense_fit(counts, init):
    dense = fit_nonprivate(counts, TopicModel(3),
                           run=RunOptions(n_iter=6, burn_in=2, init=init, progress=False), rng=5)
    _same_fit(fit_nonprivate(sp.coo_array(counts.astype(float)), TopicModel(3),
                             run=RunOptions(n_iter=6, burn_in=2, init=init,
                                            progress=False), rng=5), dense)


def test_a_sparse_fit_is_the_dense_fit_with_a_mask_saved_counts_and_collapsed_theta(counts):
    mask = np.random.default_rng(1).random(counts.shape) < 0.1
    run = RunOptions(n_iter=5, burn_in=1, save_counts=True, progress=False)
    for model in (TopicModel(3), TopicModel(3, collapse_theta=True)):
        # a mask beside sparse counts is the deprecated keyword's (a masked array is dense)
        with pytest.warns(FutureWarning):
            _same_fit(fit_nonprivate(sp.csr_matrix(counts), model, mask=mask, rng=2,
                                     **vars(run)),
                      fit_nonprivate(counts, model, mask=mask, rng=2, **vars(run)))


def test_a_fixed_topic_chain_on_sparse_counts_is_the_dense_one(counts):
    phi = np.random.default_rng(3).gamma(1.0, 1.0, (3, counts.shape[1]))
    _same_fit(fit_nonprivate(sp.csr_array(counts), FixedTopicModel(phi),
                             run=RunOptions(n_iter=4, save_rates=False, progress=False), rng=9),
              fit_nonprivate(counts, FixedTopicModel(phi),
                             run=RunOptions(n_iter=4, save_rates=False, progress=False), rng=9))


def test_without_rates_there_is_no_mu_hat_and_the_chain_is_the_same(counts):
    with_rates = fit_nonprivate(counts, TopicModel(2),
                                run=RunOptions(n_iter=4, burn_in=1, progress=False), rng=3)
    without = fit_nonprivate(counts, TopicModel(2),
                             run=RunOptions(save_rates=False, n_iter=4, burn_in=1, progress=False),
                             rng=3)
    assert without.mu_hat is None
    np.testing.assert_array_equal(without.samples["phi"], with_rates.samples["phi"])
    np.testing.assert_array_equal(without.log_joint, with_rates.log_joint)


def test_sparse_counts_are_densified_once_where_the_chain_needs_them(counts):
    sparse = sp.csr_matrix(counts)
    held = GibbsSampler.nonprivate(sparse, TopicModel(2), rng=0)
    assert isinstance(held.source.y, SparseCounts)
    assert held.observed.is_observed.strides == (0, 0)  # no D x V mask either
    dense_sweep = GibbsSampler.nonprivate(sparse, TopicModel(2), rng=0, sparse=False)
    np.testing.assert_array_equal(dense_sweep.source.y, counts)
    square = sp.csr_matrix(counts[:25, :25])
    communities = GibbsSampler.nonprivate(square, CommunityModel(2), rng=0)
    assert isinstance(communities.source.y, np.ndarray)  # no sparse engine for this model


def test_a_sparse_fit_forms_no_array_of_the_datas_size():
    n_docs, n_words = 400, 20_000
    rng = np.random.default_rng(0)
    cols = np.sort(rng.choice(n_words, (n_docs, 10)), axis=1)
    data = sp.csr_matrix((np.ones(cols.size, dtype=np.int64), cols.ravel(),
                          np.arange(0, cols.size + 1, 10)), shape=(n_docs, n_words))
    data.sum_duplicates()
    fit_nonprivate(data[:20], TopicModel(5),
                   run=RunOptions(n_iter=3, burn_in=1, save_latents=False, save_rates=False,
                                  progress=False),
                   rng=0)  # compiled and loaded before measuring
    tracemalloc.start()
    fit_nonprivate(data, TopicModel(5),
                   run=RunOptions(n_iter=3, burn_in=1, save_latents=False, save_rates=False,
                                  progress=False),
                   rng=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < n_docs * n_words * 8 / 4, peak  # a quarter of the dense int64 counts
