from collections import Counter

import numpy as np
import pytest

from data_prep.vocabulary import bag_of_words, document_frequency, select_vocabulary


def test_bag_of_words_exact():
    counts, types = bag_of_words([["b", "a", "b"], [], ["c", "a"]])
    assert types == ["a", "b", "c"]
    assert counts.dtype == np.int64
    np.testing.assert_array_equal(counts.toarray(), [[1, 2, 0], [0, 0, 0], [1, 0, 1]])
    # the type order does not depend on the order in which types are first seen
    again, types_again = bag_of_words([["c", "a"], [], ["b", "a", "b"]])
    assert types_again == types
    np.testing.assert_array_equal(again.toarray(), counts.toarray()[::-1])


def test_document_frequency_threshold_is_strict():
    # 10 documents: "often" in 3 (df = 0.3, excluded at max_df = 0.3), "some" in 2
    docs = [["often", "some"], ["often", "some"], ["often"]] + [["rare", "filler"]] * 7
    counts, types = bag_of_words(docs)
    chosen = [types[c] for c in select_vocabulary(counts, types, size=None, max_df=0.3)]
    assert "often" not in chosen and "some" in chosen
    assert "filler" not in chosen and "rare" not in chosen          # df = 0.7
    chosen = [types[c] for c in select_vocabulary(counts, types, size=None, max_df=0.31)]
    assert chosen == ["often", "some"]                              # 3 tokens, then 2


def test_ties_are_broken_alphabetically_and_size_is_respected():
    docs = [["zeta", "alpha", "mid", "mid"]] + [[f"pad{i}"] for i in range(9)]
    counts, types = bag_of_words(docs)
    chosen = select_vocabulary(counts, types, size=3, max_df=0.5)
    assert [types[c] for c in chosen] == ["mid", "alpha", "pad0"]
    with pytest.raises(ValueError, match="only 12 word types"):
        select_vocabulary(counts, types, size=13, max_df=0.5)


def _reference_vocabulary(docs, size, max_df):
    """The rule written out directly with Counters (independent of the sparse code)."""
    df = Counter(t for doc in docs for t in set(doc))
    freq = Counter(t for doc in docs for t in doc)
    eligible = [t for t in freq if df[t] / len(docs) < max_df]
    return sorted(eligible, key=lambda t: (-freq[t], t))[:size]


def test_matches_a_direct_implementation_on_a_zipf_corpus():
    rng = np.random.default_rng(7)
    words = np.array([f"w{i}" for i in range(400)])
    docs = [list(words[np.minimum(rng.zipf(1.3, size=rng.integers(5, 60)) - 1, 399)])
            for _ in range(300)]
    counts, types = bag_of_words(docs)
    for size, max_df in [(50, 0.3), (120, 0.1), (10, 0.9)]:
        chosen = [types[c] for c in select_vocabulary(counts, types, size=size, max_df=max_df)]
        assert chosen == _reference_vocabulary(docs, size, max_df)
        if max_df < 0.9:  # the threshold bites: plain top-by-frequency would differ
            assert chosen != _reference_vocabulary(docs, size, 1.01)
    df = document_frequency(counts)
    assert df[types.index("w0")] == sum("w0" in doc for doc in docs)


def test_zero_documents():
    counts, types = bag_of_words([])
    with pytest.raises(ValueError, match="zero documents"):
        select_vocabulary(counts, types, size=1, max_df=0.3)
