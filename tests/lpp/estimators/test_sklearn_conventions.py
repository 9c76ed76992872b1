"""The estimators among scikit-learn's own objects: pipelines from raw text, cross-validation
and grid searches on the built-in score, clone, set_output, check_is_fitted, and
scikit-learn's estimator checks (those that feed non-count data are expected to fail, each for
a reason lpp.estimators.expected_failed_checks states, and the tests check that they fail for
that reason and that every other check passes)."""
import functools
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks
from sklearn.utils.validation import check_is_fitted

from lpp.estimators import (GeometricMechanism, NotFittedError, PrivateTopicModel,
                            RenoisedRowsWarning, expected_failed_checks)

ALPHA_1 = float(np.exp(-1.0))  # epsilon / N = 1
#: three groups of words; a document draws most of its words from its group's
GROUPS = (["apple", "banana", "cherry", "grape", "lemon", "mango", "peach", "plum"],
          ["cat", "dog", "horse", "mouse", "rabbit", "sheep", "tiger", "wolf"],
          ["bus", "car", "train", "plane", "boat", "truck", "bike", "tram"])


def make_corpus(n_docs=45, length=25, seed=0):
    """``n_docs`` short texts, document d from group ``d % 3`` (90% of its words), and the
    group as its label."""
    rng = np.random.default_rng(seed)
    everything = [w for group in GROUPS for w in group]
    texts, labels = [], []
    for d in range(n_docs):
        own = rng.random(length) < 0.9
        words = np.where(own, rng.choice(GROUPS[d % 3], length), rng.choice(everything, length))
        texts.append(" ".join(words))
        labels.append(d % 3)
    return texts, np.array(labels)


TEXTS, LABELS = make_corpus()


def model(**params):
    """A private topic model that fits in a blink."""
    settings = dict(n_components=3, alpha=ALPHA_1, n_iter=20, random_state=0) | params
    return PrivateTopicModel(**settings)


# ----- pipelines ---------------------------------------------------------------------------------

def test_the_whole_study_of_a_corpus_is_one_pipeline():
    """The privacy level given once: the model reads it from the mechanism that noised."""
    mechanism = GeometricMechanism(epsilon=1.0, N=1, random_state=0)
    pipe = make_pipeline(CountVectorizer(), mechanism,
                         model(alpha=None, mechanism=mechanism, n_iter=100))
    assert pipe[-1]._check_params() == ALPHA_1
    shares = pipe.fit_transform(TEXTS)
    assert shares.shape == (45, 3)
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    # other documents than the fit's: new noise for rows the fit noised, a second copy
    with pytest.warns(RenoisedRowsWarning):
        np.testing.assert_allclose(pipe.transform(TEXTS[:5]).sum(axis=1), 1.0)
    est = pipe[-1]
    vocabulary = pipe[0].get_feature_names_out()
    assert est.n_features_in_ == len(vocabulary) == 24
    # each topic's top words come from one group: the pipeline found the groups
    top = [set(vocabulary[np.argsort(topic)[::-1][:6]]) for topic in est.components_]
    assert sorted(max(len(t & set(g)) for g in GROUPS) for t in top) == [6, 6, 6], top
    assert np.isfinite(pipe.score(TEXTS[:9]))


def test_a_pipeline_can_end_in_a_classifier_and_the_labels_never_reach_alpha():
    pipe = make_pipeline(CountVectorizer(), GeometricMechanism(ALPHA_1, random_state=0),
                         model(n_iter=100), LogisticRegression())
    pipe.fit(TEXTS, LABELS)
    topic_model = pipe[2]
    assert topic_model.alpha == ALPHA_1
    assert pipe.score(TEXTS, LABELS) > 0.9  # the topics separate the groups
    # the labels are passed to fit as y, and ignored: the same fit as without them
    counts = pipe[1].transform(pipe[0].transform(TEXTS))
    np.testing.assert_array_equal(clone(topic_model).fit(counts, LABELS).components_,
                                  clone(topic_model).fit(counts).components_)


def test_cross_validation_and_grid_search_use_the_built_in_score():
    counts = CountVectorizer().fit_transform(TEXTS)
    pipe = make_pipeline(GeometricMechanism(ALPHA_1, random_state=np.random.default_rng(0)),
                         model(n_iter=60))
    folds = KFold(3, shuffle=True, random_state=0)
    with pytest.warns(RenoisedRowsWarning):  # each fold noises the rows anew
        scores = cross_val_score(pipe, counts, cv=folds)
    assert scores.shape == (3,) and np.isfinite(scores).all() and (scores < 0).all()
    search = GridSearchCV(model(n_iter=60), {"n_components": [1, 3]}, cv=folds)
    search.fit(GeometricMechanism(ALPHA_1, random_state=1).fit_transform(counts))
    assert search.best_params_ == {"n_components": 3}, search.cv_results_["mean_test_score"]
    assert isinstance(search.best_estimator_, PrivateTopicModel)


def test_clone_gives_an_unfitted_copy_with_the_same_parameters():
    est = model(random_state=np.random.default_rng(1)).fit(
        GeometricMechanism(ALPHA_1, random_state=0).fit_transform(np.ones((6, 4), int)))
    copy = clone(est)
    assert type(copy) is PrivateTopicModel and copy is not est
    assert copy.get_params().keys() == est.get_params().keys()
    assert copy.alpha == est.alpha and not hasattr(copy, "components_")
    assert clone(model(device="cuda")).get_params()["device"] == "cuda"
    mech = clone(GeometricMechanism(ALPHA_1, exact=False, random_state=3))
    assert mech.get_params() == {"alpha": ALPHA_1, "epsilon": None, "N": 1, "exact": False,
                                 "random_state": 3}
    nested = clone(model(alpha=None, mechanism=GeometricMechanism(epsilon=2.0, N=3)))
    assert nested.get_params()["mechanism__epsilon"] == 2.0
    assert nested._check_params() == np.exp(-2.0 / 3)


def test_check_is_fitted_and_the_fitted_state():
    est = model()
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    with pytest.raises(NotFittedError):
        est.transform([[1, 2, 3]])
    est.fit(np.array([[1, 0, 2], [0, 3, 1], [2, 2, 0]]))
    check_is_fitted(est)
    check_is_fitted(GeometricMechanism(0.5))  # stateless: nothing to fit


def test_set_output_pandas_names_the_topics_and_keeps_the_words():
    pd = pytest.importorskip("pandas")
    vectorizer = CountVectorizer()
    counts = vectorizer.fit_transform(TEXTS)
    frame = pd.DataFrame(counts.toarray(), columns=vectorizer.get_feature_names_out(),
                         index=[f"doc{d}" for d in range(45)])
    mech = GeometricMechanism(ALPHA_1, random_state=0).set_output(transform="pandas")
    noised = mech.fit_transform(frame)
    assert list(noised.columns) == list(frame.columns) and list(noised.index) == list(frame.index)
    est = model().set_output(transform="pandas").fit(noised)
    assert list(est.feature_names_in_) == list(frame.columns)
    shares = est.transform(noised)
    assert list(shares.columns) == ["privatetopicmodel0", "privatetopicmodel1",
                                    "privatetopicmodel2"]
    assert list(shares.index) == list(frame.index)
    pipe = make_pipeline(GeometricMechanism(ALPHA_1, random_state=0), model())
    assert list(pipe.set_output(transform="pandas").fit_transform(frame).columns) == \
        list(shares.columns)


def test_the_count_data_contracts_of_the_checks_that_need_counts():
    """What the estimator checks expected to fail below would check, on count data: fit
    returns self and changes no parameter, the same seed repeats a fit, n_features_in_ and
    its check, pickling, read-only and Fortran-ordered input, sparse input."""
    counts = CountVectorizer().fit_transform(TEXTS)
    noised = GeometricMechanism(ALPHA_1, random_state=0).fit_transform(counts)
    for est in (model(), model(inference="variational")):
        params = est.get_params()
        assert est.fit(noised) is est and est.get_params() == params
        first = est.transform(noised[:9])
        np.testing.assert_array_equal(clone(est).fit(noised).transform(noised[:9]), first)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).transform(noised[:9]),
                                      first)
        read_only = np.asfortranarray(noised[:9])
        read_only.setflags(write=False)
        np.testing.assert_array_equal(est.transform(read_only), first)
        with pytest.raises(ValueError, match="expecting 24 features"):
            est.transform(noised[:, :5])
        assert est.n_features_in_ == 24 and est.n_iter_ >= 1
    mech = GeometricMechanism(ALPHA_1, random_state=0)
    assert mech.fit(counts) is mech and mech.n_features_in_ == 24
    np.testing.assert_array_equal(mech.transform(counts), noised)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(mech)).transform(counts.tocsc()),
                                  noised)


# ----- scikit-learn's estimator checks -----------------------------------------------------------

#: what stops every check that lpp.estimators.expected_failed_checks lists: the random floats
#: it feeds are refused as counts
REFUSAL = "whole-number counts"
CHECKED = [model(n_components=2, alpha=None, mechanism=GeometricMechanism(epsilon=1.0)),
           model(n_components=2, inference="variational"),
           model(n_components=2, alpha=None, method="nonprivate"),
           GeometricMechanism(epsilon=1.0, random_state=0)]


def _check_name(check):
    return _check_name(check.func) if isinstance(check, functools.partial) else check.__name__


def _messages(exc):
    """The messages of an exception and of those it was raised from or during."""
    while exc is not None:
        yield str(exc)
        exc = exc.__cause__ or exc.__context__


@parametrize_with_checks(CHECKED)
def test_scikit_learn_estimator_checks(estimator, check):
    """Every check passes but those expected_failed_checks names, and each of those fails
    because the estimator refuses the random floats it feeds."""
    reason = expected_failed_checks(estimator).get(_check_name(check))
    if reason is None:
        check(estimator)
        return
    assert REFUSAL in reason
    with pytest.raises((ValueError, AssertionError)) as info:
        check(estimator)
    assert any(REFUSAL in message for message in _messages(info.value)), \
        (reason, str(info.value)[:500])


@pytest.mark.parametrize("estimator", [PrivateTopicModel(n_components=2, n_iter=4, alpha=ALPHA_1),
                                       PrivateTopicModel(n_components=2, n_iter=4,
                                                         method="nonprivate"),
                                       GeometricMechanism(ALPHA_1)], ids=repr)
def test_check_estimator_passes_with_the_expected_failures(estimator):
    """scikit-learn's check_estimator as a user runs it: nothing fails but the listed checks,
    and every listed check is run (none is named that the installed scikit-learn lacks)."""
    failing = expected_failed_checks(estimator)
    results = check_estimator(estimator, expected_failed_checks=failing, on_skip=None,
                              on_fail=None)
    status = {}
    for result in results:
        status.setdefault(result["check_name"], set()).add(result["status"])
    assert not [name for name, seen in status.items() if "failed" in seen], status
    assert set(failing) <= set(status)
    assert {name for name, seen in status.items() if "xfail" in seen} == set(failing)
    assert any(seen == {"passed"} for seen in status.values())


def test_expected_failed_checks_refuses_what_it_cannot_list():
    with pytest.raises(ValueError, match="needs a mechanism"):
        expected_failed_checks(PrivateTopicModel(2))
    with pytest.raises(TypeError, match="lpp's estimators"):
        expected_failed_checks(LogisticRegression())


def _sparse_forms(X):
    """``X`` in every scipy.sparse form scikit-learn's sparse checks try."""
    csr = sp.csr_matrix(X)
    forms = {name: csr.asformat(name) for name in ("csr", "csc", "coo", "dok", "lil", "dia",
                                                   "bsr")}
    forms["csr_array"] = sp.csr_array(X)
    for name in ("csr", "csc"):
        wide = csr.asformat(name)
        wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
        forms[f"{name}_64"] = wide
    return forms


@pytest.mark.parametrize("estimator", CHECKED, ids=repr)
def test_the_sparse_and_shape_checks_pass_on_counts(estimator):
    """What the sparse and the one-sample / one-feature checks test, on counts: every
    scipy.sparse form (64-bit indices included) gives what the dense counts give, and a fit
    to one document or to one word works."""
    counts = np.random.default_rng(0).poisson(1.0, (40, 3))
    private = getattr(estimator, "method", "nonprivate") != "nonprivate"
    data = GeometricMechanism(ALPHA_1, random_state=1).fit_transform(counts) if private \
        else counts
    dense = clone(estimator).fit(data).transform(data)
    for form, X in _sparse_forms(data).items():
        np.testing.assert_array_equal(clone(estimator).fit(X).transform(X), dense,
                                      err_msg=form)
    for shape in ((1, 10), (10, 1)):
        X = np.random.default_rng(1).poisson(2.0, shape)
        est = clone(estimator)
        if hasattr(est, "n_components"):
            est.set_params(n_components=1)
        assert est.fit(X).transform(X).shape[0] == shape[0]
