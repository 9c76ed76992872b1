"""The mechanism's noise is keyed by the random state and by the counts: no random state, not
even a copy of one, gives two inputs the same noise; and the process warns once when rows
noised before get new noise, with the budget they have spent."""
import re
import warnings

import numpy as np
import pytest

import lpp.estimators._mechanism as mechanism_module
import lpp.mechanism
from lpp.estimators import (GeometricMechanism, RenoisedRowsWarning, forget_noised_rows,
                            noised_rows)
from lpp.formats.ledger import SeveralCopiesWarning
from lpp.mechanism import exact_alpha

ALPHA_1 = float(np.exp(-1.0))  # epsilon / N = 1
ALPHA_2 = float(np.exp(-2.0))  # epsilon / N = 2
#: two 4 x 3 count matrices with no row in common
A = np.arange(12).reshape(4, 3)
B = A + 20
#: five distinct rows
ROWS = np.arange(15).reshape(5, 3)


def composed(message) -> float:
    """The composed epsilon/N a warning states."""
    return float(re.search(r"epsilon/N = ([0-9.e+-]+) per unit of change", str(message))[1])


def renoised(caught):
    return [w for w in caught if issubclass(w.category, RenoisedRowsWarning)]


# ----- the noise is keyed by the counts --------------------------------------------------------

def test_an_int_seed_never_releases_the_difference_of_two_inputs():
    mech = GeometricMechanism(0.5, random_state=7)
    t_a, t_b = mech.transform(A), mech.transform(B)
    assert not np.array_equal(t_a - t_b, A - B)
    assert not np.array_equal(t_a - A, t_b - B)
    # the same counts under the same seed: the same output (nothing new released)
    np.testing.assert_array_equal(mech.transform(A), t_a)
    np.testing.assert_array_equal(GeometricMechanism(0.5, random_state=7).transform(A), t_a)
    # the same rows in another order are another input: other noise (and a new copy)
    with pytest.warns(RenoisedRowsWarning):
        shuffled = mech.transform(A[::-1])
    assert not np.array_equal(shuffled[::-1], t_a)


def test_the_exact_sampler_is_keyed_too():
    mech = GeometricMechanism(exact_alpha(1, 1), exact=True, random_state=7)
    noise_a, noise_b = mech.transform(A) - A, mech.transform(B) - B
    assert not np.array_equal(noise_a, noise_b)
    np.testing.assert_array_equal(mech.transform(A) - A, noise_a)


@pytest.mark.parametrize("state", [lambda: np.random.RandomState(3),
                                   lambda: np.random.default_rng(3)],
                         ids=["RandomState", "Generator"])
def test_a_cloned_random_state_gives_other_inputs_other_noise(state):
    clone = pytest.importorskip("sklearn.base").clone
    mech = GeometricMechanism(0.5, random_state=state())
    first, second = clone(mech), clone(mech)  # each holds a copy of the same state
    noise_a, noise_b = first.transform(A) - A, second.transform(B) - B
    assert not np.array_equal(noise_a, noise_b)
    # inputs that share rows at other positions: the rows' noise differs too
    third = clone(mech)
    with pytest.warns(RenoisedRowsWarning):
        noise_reversed = third.transform(A[::-1]) - A[::-1]
    assert not np.array_equal(noise_reversed[::-1], noise_a)
    # a copy of the same state on the same counts repeats the output: no new release
    np.testing.assert_array_equal(clone(mech).transform(A) - A, noise_a)
    # the instance itself advances: a second call, new noise (unwarned: the process has
    # warned once already)
    assert not np.array_equal(first.transform(A) - A, noise_a)


def test_no_random_state_reads_the_system_csprng_on_the_exact_path(monkeypatch):
    reads = []
    urandom = lpp.mechanism.os.urandom
    monkeypatch.setattr(lpp.mechanism.os, "urandom", lambda n: reads.append(n) or urandom(n))
    mech = GeometricMechanism(exact_alpha(1, 1), exact=True)
    noise_a, noise_b = mech.transform(A) - A, mech.transform(B) - B
    assert reads and not np.array_equal(noise_a, noise_b)


# ----- repeated noising warns once, with the budget spent --------------------------------------

def test_the_warning_states_the_composed_epsilon_over_n():
    mech = GeometricMechanism(ALPHA_1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mech.transform(ROWS)
        assert not renoised(caught)
        mech.transform(ROWS)  # the second noisy copy of the five rows: 1 + 1
        mech.transform(ROWS)  # the third: no second warning
    (warning,) = renoised(caught)
    assert issubclass(warning.category, SeveralCopiesWarning)
    assert "5 rows 2 times" in str(warning.message)
    assert composed(warning.message) == pytest.approx(2)
    assert warning.filename == __file__  # it points at the line that transformed
    record = noised_rows()
    assert record.rows == 5 and record.times == {3: 5} and not record.full
    assert record.epsilon_over_n == pytest.approx(3)  # three noisings at epsilon/N = 1
    # forgetting empties the record and re-arms the warning; the levels add up
    assert forget_noised_rows() == record
    assert noised_rows().rows == 0
    GeometricMechanism(ALPHA_1).transform(ROWS)
    with pytest.warns(RenoisedRowsWarning) as caught:
        GeometricMechanism(ALPHA_2).transform(ROWS[::-1])  # 1 + 2
    assert composed(caught[0].message) == pytest.approx(3)
    assert noised_rows().epsilon_over_n == pytest.approx(3)


def test_an_exact_repeat_and_identical_rows_within_a_call_do_not_warn():
    mech = GeometricMechanism(ALPHA_1, random_state=5)
    mech.transform(np.ones((6, 4), dtype=np.int64))  # six identical rows: one row, once
    assert noised_rows().times == {1: 1}
    for _ in range(3):  # the same counts, the same seed, the same output
        mech.transform(ROWS)
    assert noised_rows().times == {1: 6}


def test_the_record_is_bounded(monkeypatch):
    monkeypatch.setattr(mechanism_module, "_MAX_ROWS", 3)
    GeometricMechanism(ALPHA_1).transform(ROWS)
    record = noised_rows()
    assert record.rows == 3 and record.full


def test_cross_validation_noises_each_fold_anew_and_warns_once():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    class Recorder(sklearn.base.BaseEstimator):
        """Keeps what the pipeline hands it (its clones share the list)."""

        seen = []

        def fit(self, X, y=None):
            Recorder.seen.append(np.array(X))
            self.fitted_ = True
            return self

        def score(self, X, y=None):
            Recorder.seen.append(np.array(X))
            return 0.0

    counts = np.random.default_rng(0).poisson(3.0, (16, 4))
    folds = KFold(4)
    pipe = make_pipeline(GeometricMechanism(ALPHA_1, random_state=np.random.RandomState(0)),
                         Recorder())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cross_val_score(pipe, counts, cv=folds, error_score="raise")
    # per fold: fit on the training rows, then score on the held-out rows
    noises = [Recorder.seen[2 * k] - counts[train]
              for k, (train, _) in enumerate(folds.split(counts))]
    for k in range(1, 4):
        assert not np.array_equal(noises[0], noises[k])
    (warning,) = renoised(caught)
    assert "12 rows 2 times" in str(warning.message)
    assert composed(warning.message) == pytest.approx(2)
    assert warning.filename == __file__
    # every row was noised four times: three as training rows, once held out
    record = noised_rows()
    assert record.times == {4: 16} and record.epsilon_over_n == pytest.approx(4)


@pytest.mark.parametrize("random_state, copies", [(None, 9), (0, 5)])
def test_a_grid_search_over_the_mechanism_warns_once_and_counts_every_copy(random_state, copies):
    """2 candidates x 4 folds x (fit + score) + the refit: 17 transforms. Without a seed each
    is a new copy: 9 per row (8 in the folds, 1 in the refit). With an int seed the second
    candidate's folds repeat the first's outputs exactly, which releases nothing new: 5."""
    sklearn = pytest.importorskip("sklearn")
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    class Constant(sklearn.base.BaseEstimator):
        def __init__(self, c=0):
            self.c = c

        def fit(self, X, y=None):
            self.fitted_ = True
            return self

        def score(self, X, y=None):
            return float(self.c)

    counts = np.random.default_rng(1).poisson(3.0, (16, 4))
    pipe = make_pipeline(GeometricMechanism(ALPHA_1, random_state=random_state), Constant())
    search = GridSearchCV(pipe, {"constant__c": [1, 2]}, cv=4, error_score="raise")
    with pytest.warns(RenoisedRowsWarning) as caught:
        search.fit(counts)
    assert len(renoised(caught)) == 1
    record = noised_rows()
    assert record.times == {copies: 16}
    assert record.epsilon_over_n == pytest.approx(copies)
