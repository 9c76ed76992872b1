"""NPMI and Mimno coherence: hand-computed cases, gensim cross-checks, scale, bad input."""
from __future__ import annotations

from math import log, log10

import numpy as np
import pytest
import scipy.sparse as sp

from lpp.metrics import (
    ReferenceCorpus,
    co_document_frequencies,
    document_frequencies,
    mean_over_topics,
    mimno_coherence,
    npmi,
)

# Five documents over five words. Word 0 occurs twice in document 0 (counts, not
# occurrences, are stored; occurrence is what matters).
#   d0: w0 w0 w1 w2     d1: w0 w1     d2: w0 w3     d3: w1 w2 w4     d4: w3
HAND = np.array(
    [
        [2, 1, 1, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 0, 0, 1, 0],
        [0, 1, 1, 0, 1],
        [0, 0, 0, 1, 0],
    ]
)
# D(v) = 3 3 2 2 1; D(0,1)=2 D(0,2)=1 D(1,2)=2 D(0,3)=1 D(1,4)=1 D(2,4)=1, the rest 0.
HAND_DOC_FREQ = [3, 3, 2, 2, 1]
HAND_CO_DOC_FREQ = [
    [3, 2, 1, 1, 0],
    [2, 3, 2, 0, 1],
    [1, 2, 2, 0, 1],
    [1, 0, 0, 2, 0],
    [0, 1, 1, 0, 1],
]
TOPIC_A = [0, 1, 2]  # every pair co-occurs
TOPIC_B = [3, 1, 4]  # (3,1) and (3,4) never co-occur


def test_document_frequencies_by_hand():
    assert document_frequencies(HAND).tolist() == HAND_DOC_FREQ
    assert co_document_frequencies(HAND, np.arange(5)).tolist() == HAND_CO_DOC_FREQ
    # a subset, in a non-sorted order, indexes by position in `words`
    assert co_document_frequencies(HAND, [4, 1]).tolist() == [[1, 1], [1, 3]]


@pytest.mark.parametrize("fmt", ["csr_matrix", "csc_array", "coo_array", "lil_matrix", "float"])
def test_document_frequencies_accept_every_format(fmt):
    counts = HAND.astype(float) if fmt == "float" else getattr(sp, fmt)(HAND)
    assert document_frequencies(counts).tolist() == HAND_DOC_FREQ
    assert co_document_frequencies(counts, np.arange(5)).tolist() == HAND_CO_DOC_FREQ


def test_stored_zeros_and_duplicates_are_handled():
    rows = np.array([0, 0, 1, 1, 2])
    cols = np.array([0, 0, 1, 2, 2])
    vals = np.array([1, 2, 0, 3, 0])  # (0,0) duplicated; two explicit zeros
    counts = sp.csr_array((vals, (rows, cols)), shape=(3, 3))
    assert counts.nnz == 4 and np.sum(counts.data == 0) == 2  # zeros are stored entries
    assert document_frequencies(counts).tolist() == [1, 0, 1]
    coo = sp.coo_array((vals, (rows, cols)), shape=(3, 3))  # duplicates left unsummed
    assert document_frequencies(coo).tolist() == [1, 0, 1]


def test_npmi_by_hand():
    # Topic A: P(0)=P(1)=3/5, P(2)=2/5; P(0,1)=2/5, P(0,2)=1/5, P(1,2)=2/5.
    npmi_01 = log((2 / 5) / (3 / 5 * 3 / 5)) / -log(2 / 5)  # = log(10/9) / log(5/2)
    npmi_02 = log((1 / 5) / (3 / 5 * 2 / 5)) / -log(1 / 5)  # = log(5/6) / log(5)
    npmi_12 = log((2 / 5) / (3 / 5 * 2 / 5)) / -log(2 / 5)  # = log(5/3) / log(5/2)
    expected_a = (npmi_01 + npmi_02 + npmi_12) / 3
    assert expected_a == pytest.approx(0.1863986998, abs=1e-10)
    # Topic B: (3,1) and (3,4) never co-occur -> -1 each; P(1,4)=1/5, P(1)=3/5, P(4)=1/5.
    npmi_14 = log((1 / 5) / (3 / 5 * 1 / 5)) / -log(1 / 5)  # = log(5/3) / log(5)
    expected_b = (-1 - 1 + npmi_14) / 3
    got = npmi([TOPIC_A, TOPIC_B], HAND)
    np.testing.assert_allclose(got, [expected_a, expected_b], rtol=1e-13)
    # Lau's reference code scores a never-co-occurring pair 0 instead of the limit -1
    lau = npmi([TOPIC_A, TOPIC_B], HAND, no_cooccurrence=0.0)
    np.testing.assert_allclose(lau, [expected_a, npmi_14 / 3], rtol=1e-13)


def test_npmi_log_base_cancels_and_order_does_not_matter():
    npmi_base10 = log10((1 / 5) / (3 / 5 * 1 / 5)) / -log10(1 / 5)
    assert npmi([[1, 4]], HAND)[0] == pytest.approx(npmi_base10, rel=1e-13)
    np.testing.assert_allclose(npmi([[2, 1, 0]], HAND), npmi([TOPIC_A], HAND), rtol=1e-14)


def test_npmi_epsilon_smoothing_by_hand():
    eps = 0.01
    pair_31 = log((0 + eps) / (2 / 5 * 3 / 5)) / -log(eps)
    pair_34 = log((0 + eps) / (2 / 5 * 1 / 5)) / -log(eps)
    pair_14 = log((1 / 5 + eps) / (3 / 5 * 1 / 5)) / -log(1 / 5 + eps)
    got = npmi([TOPIC_B], HAND, eps=eps)
    assert got[0] == pytest.approx((pair_31 + pair_34 + pair_14) / 3, rel=1e-13)


def test_npmi_of_a_pair_in_every_document_is_one():
    counts = np.array([[1, 1, 0], [2, 1, 1], [1, 3, 0]])
    assert npmi([[0, 1]], counts)[0] == 1.0
    # perfect co-occurrence short of every document is 1 by the formula itself
    counts = np.array([[1, 1, 0], [0, 0, 1], [1, 3, 0]])
    assert npmi([[0, 1]], counts)[0] == pytest.approx(1.0, rel=1e-14)


def test_mimno_by_hand_and_order_matters():
    # [0, 1, 2]: log((D(1,0)+1)/D(0)) + log((D(2,0)+1)/D(0)) + log((D(2,1)+1)/D(1))
    #          = log(3/3) + log(2/3) + log(3/3)
    forward = log(3 / 3) + log(2 / 3) + log(3 / 3)
    # [2, 1, 0]: log((D(1,2)+1)/D(2)) + log((D(0,2)+1)/D(2)) + log((D(0,1)+1)/D(1))
    backward = log(3 / 2) + log(2 / 2) + log(3 / 3)
    # [3, 1, 4]: log((0+1)/D(3)) + log((0+1)/D(3)) + log((D(4,1)+1)/D(1))
    topic_b = log(1 / 2) + log(1 / 2) + log(2 / 3)
    got = mimno_coherence([TOPIC_A, TOPIC_A[::-1], TOPIC_B], HAND)
    np.testing.assert_allclose(got, [forward, backward, topic_b], rtol=1e-13)
    assert forward != pytest.approx(backward)  # the denominator is the higher-ranked word
    half = mimno_coherence([TOPIC_B], HAND, smoothing=0.5)
    assert half[0] == pytest.approx(log(0.5 / 2) * 2 + log(1.5 / 3), rel=1e-13)


def test_ragged_topics_and_reused_reference_agree():
    corpus = ReferenceCorpus(sp.csr_array(HAND))
    ragged = [[0, 1, 2, 4], [3, 0], TOPIC_B]
    joint_npmi = npmi(ragged, corpus)
    joint_mimno = mimno_coherence(ragged, HAND)
    for k, topic in enumerate(ragged):
        assert joint_npmi[k] == npmi([topic], HAND)[0]
        assert joint_mimno[k] == mimno_coherence([topic], corpus)[0]
    as_array = npmi(np.array([TOPIC_A, TOPIC_B]), corpus)
    assert as_array.tolist() == npmi([TOPIC_A, TOPIC_B], HAND).tolist()


def test_npmi_bounded_on_random_corpus():
    rng = np.random.default_rng(11)
    counts = sp.csr_array(rng.poisson(0.4, size=(200, 60)))
    topics = [rng.permutation(60)[:10] for _ in range(30)]
    values = npmi(topics, counts)
    assert np.all((values >= -1) & (values <= 1))


def test_mean_over_topics():
    assert mean_over_topics([0.5, -0.25, 1.0]) == pytest.approx(0.41666666666666667)
    np.testing.assert_allclose(mean_over_topics([[1.0, 3.0], [0.0, -2.0]]), [2.0, -1.0])
    for bad in ([], [np.nan, 1.0], 3.0):
        with pytest.raises(ValueError):
            mean_over_topics(bad)


# ---------------------------------------------------------------- gensim 4.4.0 cross-checks


def _gensim_inputs(counts):
    from gensim.corpora import Dictionary

    texts = [[f"w{v}" for v in np.flatnonzero(row) for _ in range(row[v])] for row in counts]
    dictionary = Dictionary(texts)
    bow = [dictionary.doc2bow(text) for text in texts]
    return texts, dictionary, bow


def _tokens(topics):
    return [[f"w{v}" for v in topic] for topic in topics]


@pytest.fixture(scope="module")
def gensim_case():
    """A small corpus with words that co-occur, and pairs that never do."""
    rng = np.random.default_rng(2019)
    counts = rng.poisson(rng.gamma(0.3, 2.0, size=(1, 40)), size=(80, 40))
    counts[:, 0] = 0
    counts[:3, 0] = 1  # a rare word, absent from most documents
    present = np.flatnonzero(counts.sum(axis=0) > 0)
    topics = [rng.choice(present, size=8, replace=False) for _ in range(12)]
    topics.append(np.array([0, *present[present > 0][:7]]))
    return counts, np.array(topics)


def test_mimno_matches_gensim_u_mass_after_exact_transformation(gensim_case):
    from gensim.models.coherencemodel import CoherenceModel

    counts, topics = gensim_case
    n_docs, n_top = counts.shape[0], topics.shape[1]
    pairs = n_top * (n_top - 1) // 2
    _, dictionary, bow = _gensim_inputs(counts)
    u_mass = np.array(
        CoherenceModel(
            topics=_tokens(topics), corpus=bow, dictionary=dictionary,
            coherence="u_mass", topn=n_top, processes=1,
        ).get_coherence_per_topic()
    )
    # gensim: mean over the same (lower-ranked, higher-ranked) pairs of
    #   log((D(v_m, v_l)/D + 1e-12) / (D(v_l)/D)) = log((D(v_m, v_l) + D*1e-12) / D(v_l))
    ours = mimno_coherence(topics, counts, smoothing=n_docs * 1e-12) / pairs
    np.testing.assert_allclose(ours, u_mass, rtol=1e-12, atol=1e-12)

    # Mimno's +1 instead of +D*1e-12: the difference is explicit, pair by pair.
    joint = co_document_frequencies(counts, np.arange(counts.shape[1]))
    expected_gap = [
        sum(
            log(joint[t[m], t[l]] + 1) - log(joint[t[m], t[l]] + n_docs * 1e-12)
            for m in range(n_top) for l in range(m)
        )
        for t in topics
    ]
    gap = mimno_coherence(topics, counts) - pairs * u_mass
    np.testing.assert_allclose(gap, expected_gap, rtol=1e-10)
    never = [any(joint[t[m], t[l]] == 0 for m in range(n_top) for l in range(m)) for t in topics]
    assert any(never), "the case must contain never-co-occurring pairs"
    assert np.all(gap > 0)  # +1 > +D*1e-12, and the gap is large (~27) per zero pair
    assert np.all(gap[np.array(never)] > 20)


def test_npmi_matches_gensim_c_npmi_with_whole_document_windows(gensim_case):
    from gensim.models.coherencemodel import CoherenceModel

    counts, topics = gensim_case
    texts, dictionary, _ = _gensim_inputs(counts)
    longest = max(len(t) for t in texts)
    assert longest > 10  # so gensim's default window (10) would not be whole documents

    def c_npmi(window):
        return np.array(
            CoherenceModel(
                topics=_tokens(topics), texts=texts, dictionary=dictionary,
                coherence="c_npmi", window_size=window, topn=topics.shape[1], processes=1,
            ).get_coherence_per_topic()
        )

    gensim_doc = c_npmi(longest)
    np.testing.assert_allclose(npmi(topics, counts, eps=1e-12), gensim_doc, rtol=1e-10, atol=1e-12)
    # gensim's default sliding window counts windows, not documents: a different measure
    assert np.max(np.abs(c_npmi(10) - gensim_doc)) > 1e-3

    # Without eps, ours gives a never-co-occurring pair exactly -1; gensim's eps gives
    # log(1e-12 / (P(v) P(w))) / -log(1e-12). The per-topic gap is that, averaged.
    n_docs = counts.shape[0]
    freq = document_frequencies(counts)
    joint = co_document_frequencies(counts, np.arange(counts.shape[1]))
    expected_gap = []
    for t in topics:
        gap = 0.0
        pairs = [(t[i], t[j]) for i in range(len(t)) for j in range(i + 1, len(t))]
        for v, w in pairs:
            if joint[v, w] == 0:
                gensim_value = log(1e-12 / (freq[v] / n_docs * freq[w] / n_docs)) / -log(1e-12)
                gap += (-1.0 - gensim_value) / len(pairs)
        expected_gap.append(gap)
    assert np.any(np.abs(expected_gap) > 1e-3)
    gap = npmi(topics, counts) - gensim_doc
    np.testing.assert_allclose(gap, expected_gap, rtol=1e-8, atol=1e-11)


# ------------------------------------------------------------------------------- scale


def _random_corpus(n_docs, n_words, nnz_per_doc, rng):
    """A sparse D x V count matrix with Zipf-like column popularity."""
    popularity = 1.0 / np.arange(1, n_words + 1) ** 0.5
    popularity /= popularity.sum()
    rows = np.repeat(np.arange(n_docs), nnz_per_doc)
    cols = rng.choice(n_words, size=rows.size, p=popularity)
    data = rng.geometric(0.6, size=rows.size)
    return sp.csr_array((data, (rows, cols)), shape=(n_docs, n_words))


def test_10k_by_10k_corpus_is_right():
    """At the paper's scale (its speed is measured by ``python -m bench.metrics``)."""
    rng = np.random.default_rng(7)
    counts = _random_corpus(10_000, 10_000, 260, rng)
    assert 2.0e6 < counts.nnz < 2.8e6
    topics = np.array([rng.choice(2000, size=10, replace=False) for _ in range(50)])
    values_npmi = npmi(topics, counts)
    values_mimno = mimno_coherence(topics, counts)
    assert np.isfinite(values_npmi).all() and np.isfinite(values_mimno).all()
    # spot-check co-document counts against set intersections of each word's documents
    csc = counts.tocsc()
    docs = [set(csc.indices[csc.indptr[v]: csc.indptr[v + 1]]) for v in topics[0]]
    joint = co_document_frequencies(counts, topics[0])
    for i in range(10):
        for j in range(10):
            assert joint[i, j] == len(docs[i] & docs[j])
    topic = topics[0]
    n = counts.shape[0]
    by_hand = np.mean([
        (log(joint[i, j] / n) - log(joint[i, i] / n) - log(joint[j, j] / n)) / -log(joint[i, j] / n)
        if joint[i, j] else -1.0
        for i in range(10) for j in range(i + 1, 10)
    ])
    assert values_npmi[0] == pytest.approx(by_hand, rel=1e-12)
    assert len(topic) == 10


def test_sparse_and_blocked_dense_products_agree(monkeypatch):
    import lpp.metrics.coherence as coherence

    rng = np.random.default_rng(5)
    counts = sp.csr_array(rng.poisson(rng.gamma(0.5, 1.0, size=(1, 80)), size=(500, 80)))
    words = np.flatnonzero(document_frequencies(counts))
    topics = [rng.choice(words, size=10, replace=False) for _ in range(20)]
    results = {}
    for path, speedup in (("sparse", 0), ("dense", 1e30)):
        monkeypatch.setattr(coherence, "_DENSE_SPEEDUP", speedup)
        monkeypatch.setattr(coherence, "_DENSE_BLOCK_ENTRIES", 7 * 80)  # many uneven blocks
        results[path] = (
            co_document_frequencies(counts, words),
            npmi(topics, counts),
            mimno_coherence(topics, counts),
        )
    for sparse_result, dense_result in zip(results["sparse"], results["dense"]):
        np.testing.assert_array_equal(sparse_result, dense_result)
    brute = (counts.toarray() > 0).astype(np.int64)[:, words]
    np.testing.assert_array_equal(results["dense"][0], brute.T @ brute)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "topics, error, match",
    [
        ([], ValueError, "empty"),
        ([[0, 1], []], ValueError, "no words"),
        ([[0]], ValueError, "at least 2"),
        ([[0, 1, 0]], ValueError, "more than once"),
        ([[0, 5]], ValueError, r"\[0, 5\)"),
        ([[-1, 2]], ValueError, r"\[0, 5\)"),
        ([[0.0, 1.0]], TypeError, "integers"),
        (np.arange(6), ValueError, "K x M"),
        ([[[0, 1]]], ValueError, "flat"),
        (5, TypeError, "list of lists"),
    ],
)
def test_bad_topics(topics, error, match):
    for score in (npmi, mimno_coherence):
        with pytest.raises(error, match=match):
            score(topics, HAND)


def test_word_absent_from_reference_is_an_error():
    counts = HAND.copy()
    counts[:, 4] = 0
    for score in (npmi, mimno_coherence):
        with pytest.raises(ValueError, match=r"\[4\] never occur"):
            score([[0, 1], [1, 4]], counts)


@pytest.mark.parametrize(
    "counts, error, match",
    [
        (-HAND, ValueError, "non-negative"),
        (HAND + 0.5, ValueError, "integer"),
        (np.where(HAND > 0, np.nan, 0.0), ValueError, "finite"),
        (sp.csr_array(-HAND), ValueError, "non-negative"),
        (sp.csr_array(HAND * 0.5), ValueError, "integer"),
        (np.zeros((0, 5)), ValueError, "empty"),
        (HAND[0], ValueError, "D x V"),
        (HAND.astype(str), TypeError, "real numbers"),
        (HAND.astype(complex), TypeError, "real numbers"),
    ],
)
def test_bad_reference_counts(counts, error, match):
    with pytest.raises(error, match=match):
        npmi([[0, 1]], counts)
    with pytest.raises(error, match=match):
        document_frequencies(counts)


def test_bad_options():
    with pytest.raises(ValueError, match="eps"):
        npmi([TOPIC_A], HAND, eps=-1e-3)
    with pytest.raises(ValueError, match="eps"):
        npmi([TOPIC_A], HAND, eps=0.2)  # 1/D = 0.2: a pair in 4 of 5 documents would break
    with pytest.raises(ValueError, match="not both"):
        npmi([TOPIC_A], HAND, eps=1e-12, no_cooccurrence=0.0)
    with pytest.raises(ValueError, match="no_cooccurrence"):
        npmi([TOPIC_A], HAND, no_cooccurrence=-2.0)
    for smoothing in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="smoothing"):
            mimno_coherence([TOPIC_A], HAND, smoothing=smoothing)
    with pytest.raises(ValueError, match="non-empty"):
        co_document_frequencies(HAND, [])
    with pytest.raises(TypeError, match="integers"):
        co_document_frequencies(HAND, [0.5])
    with pytest.raises(ValueError, match=r"\[0, 5\)"):
        co_document_frequencies(HAND, [7])
