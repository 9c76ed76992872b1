"""PrivateTopicModel(method="nonprivate") on scipy.sparse counts: the same fit, transform and
score as on the same counts given dense, and the dense input's errors."""
import numpy as np
import pytest
import scipy.sparse as sp

from lpp.estimators import PrivateTopicModel
from lpp.estimators._base import count_matrix
from lpp.inference.sparse_counts import SparseCounts


@pytest.fixture(scope="module")
def corpus():
    rng = np.random.default_rng(11)
    return rng.poisson(rng.gamma(0.3, 1.0, (24, 1)) * rng.gamma(0.3, 1.0, (1, 18)))


def nonprivate(**params):
    return PrivateTopicModel(2, method="nonprivate", n_iter=10, random_state=0, progress=False,
                             **params)


@pytest.mark.parametrize("form", [sp.csr_matrix, sp.csc_array, sp.coo_matrix,
                                  lambda a: sp.csr_array(a.astype(np.float32))])
@pytest.mark.parametrize("keep_samples", [False, True])
def test_sparse_input_gives_the_dense_fit_and_transform(corpus, form, keep_samples):
    train, new = corpus[:18], corpus[18:]
    dense = nonprivate(keep_samples=keep_samples).fit(train)
    sparse = nonprivate(keep_samples=keep_samples).fit(form(train))
    np.testing.assert_array_equal(sparse.components_, dense.components_)
    np.testing.assert_array_equal(sparse.factors_["theta"], dense.factors_["theta"])
    np.testing.assert_array_equal(sparse.fit_.log_joint, dense.fit_.log_joint)
    assert sparse.fit_.data_fingerprint == dense.fit_.data_fingerprint
    if keep_samples:
        np.testing.assert_array_equal(sparse.fit_.mu_hat, dense.fit_.mu_hat)
    else:
        assert sparse.fit_.mu_hat is None
    np.testing.assert_array_equal(sparse.transform(form(new)), dense.transform(new))
    assert sparse.score(form(new)) == dense.score(new)


def test_a_variational_fit_of_sparse_counts_is_the_dense_one(corpus):
    dense = nonprivate(inference="variational").fit(corpus)
    sparse = nonprivate(inference="variational").fit(sp.csr_matrix(corpus))
    np.testing.assert_array_equal(sparse.components_, dense.components_)


def test_true_counts_stay_sparse_and_privatized_ones_are_densified(corpus):
    held = count_matrix(sp.coo_array(corpus), signed=False, keep_sparse=True)
    assert isinstance(held, SparseCounts)
    np.testing.assert_array_equal(held.dense(), corpus)
    np.testing.assert_array_equal(count_matrix(sp.coo_array(corpus), signed=True,
                                               keep_sparse=True), corpus)
    np.testing.assert_array_equal(count_matrix(sp.coo_array(corpus), signed=False), corpus)


@pytest.mark.parametrize("bad", [[[1.0, -1.0], [0.0, 2.0]], [[1.5, 0.0], [0.0, 2.0]],
                                 [[np.nan, 0.0], [0.0, 2.0]], [[1 + 1j, 0], [0, 2]],
                                 [[True, False], [False, True]]])
def test_bad_sparse_values_get_the_dense_inputs_errors(bad):
    dense = np.array(bad)
    with pytest.raises((TypeError, ValueError)) as from_dense:
        nonprivate().fit(dense)
    with pytest.raises(type(from_dense.value), match=str(from_dense.value)[:25]):
        nonprivate().fit(sp.csr_matrix(dense))
