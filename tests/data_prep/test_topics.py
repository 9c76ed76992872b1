import itertools

import numpy as np
import pytest

from data_prep.corpus import documents_from_emails
from data_prep.emails import collect_emails
from data_prep.tokens import Tokenizer
from data_prep.topics import (BagOfWordsDocuments, TextDocuments, build_topic_counts,
                              sample_documents)
from lpp.testing import FALSE_ALARM, chisquare_gof


@pytest.fixture
def small_emails(message):
    items = [
        ("u/inbox/1.", message("apple banana apple cherry\n", message_id="<1@x>",
                               to="b@x.com, c@x.com")),
        ("u/inbox/2.", b"From: a@x.com\nTo: b@x.com\nSubject: s\n\ncaf\xe9 apple date\n"),
        ("u/all/3.", message("apple banana apple cherry\n", message_id="<2@x>",
                             to="b@x.com, c@x.com")),                      # a copy of 1.
        ("u/inbox/4.", ""),                                                # malformed
        ("u/inbox/5.", message("banana date DATE\n-----Original Message-----\n"
                               "apple apple apple\n", to="b@x.com", cc="c@x.com, d@x.com")),
        ("u/inbox/6.", message("x\n")),                                   # too short
    ]
    emails, stats = collect_emails(items)
    assert (stats.kept, stats.duplicates, stats.malformed) == (4, 1, 1)
    return emails


def _build(emails, body_rule="own_text", **settings):
    documents = documents_from_emails(emails, Tokenizer(), body_rule)
    args = {"n_docs": None, "min_tokens": 2, "vocab_size": None, "max_df": 1.0, "seed": 0}
    return build_topic_counts(documents, **{**args, **settings})


def test_exact_matrix_on_small_emails(small_emails):
    result = _build(small_emails)
    # the duplicate (u/all/3.) sorts first and is the copy kept; 6. is under min_tokens
    assert result.doc_ids == ["u/all/3.", "u/inbox/2.", "u/inbox/5."]
    assert result.vocabulary == ["apple", "date", "banana", "caf", "cherry"]
    np.testing.assert_array_equal(result.counts.toarray(), [[2, 0, 1, 0, 1],
                                                            [1, 1, 0, 1, 0],
                                                            [0, 2, 1, 0, 0]])
    assert result.counts.dtype == np.int64
    summary = result.summary
    assert (summary["documents"], summary["vocabulary"], summary["tokens"]) == (3, 5, 10)
    assert summary["eligible_documents"] == 3 and summary["corpus_documents"] == 4


def test_full_body_rule_counts_the_quoted_text(small_emails):
    result = _build(small_emails, body_rule="full")
    row = result.doc_ids.index("u/inbox/5.")
    counts = dict(zip(result.vocabulary, result.counts.toarray()[row]))
    assert counts["date"] == 2 and counts["original"] == 1 and counts["message"] == 1
    assert "apple" not in counts  # now in every document: df = 1 is not below max_df = 1


def test_document_frequency_and_size_rules(small_emails):
    # df: apple, banana, date 2/3; caf, cherry 1/3 -> max_df 0.5 keeps caf and cherry only
    result = _build(small_emails, max_df=0.5)
    assert result.vocabulary == ["caf", "cherry"]
    np.testing.assert_array_equal(result.counts.toarray(), [[0, 1], [1, 0], [0, 0]])
    # the token threshold is applied before the vocabulary: 5. stays although it is empty now
    assert result.summary["empty_documents"] == 1
    assert result.summary["raw_tokens_per_document"]["min"] == 3
    assert _build(small_emails, vocab_size=2).vocabulary == ["apple", "date"]


def test_sampling_is_reproducible_and_keeps_corpus_order(small_emails):
    first = _build(small_emails, n_docs=2, seed=5)
    again = _build(small_emails, n_docs=2, seed=5)
    assert first.doc_ids == again.doc_ids and len(first.doc_ids) == 2
    assert first.doc_ids == sorted(first.doc_ids, key=["u/all/3.", "u/inbox/2.",
                                                       "u/inbox/5."].index)
    seen = {tuple(_build(small_emails, n_docs=2, seed=s).doc_ids) for s in range(20)}
    assert len(seen) == 3  # every pair of the three eligible documents comes up


def test_sample_is_uniform_over_subsets_of_eligible_documents():
    lengths = np.array([60, 10, 50, 49, 75, 200])    # eligible at 50: rows 0, 2, 4, 5
    subsets = {s: i for i, s in enumerate(itertools.combinations([0, 2, 4, 5], 2))}
    draws = [subsets[tuple(sample_documents(lengths, n_docs=2, min_tokens=50, rng=seed))]
             for seed in range(10_000)]
    pmf = np.full(len(subsets), 1 / len(subsets))
    assert chisquare_gof(draws, np.arange(len(subsets)), pmf).pvalue >= FALSE_ALARM
    # the same test rejects a sampler biased towards long documents
    rng = np.random.default_rng(1)
    eligible = np.array([0, 2, 4, 5])
    biased = [subsets[tuple(np.sort(rng.choice(eligible, 2, replace=False,
                                               p=lengths[eligible] / lengths[eligible].sum())))]
              for _ in range(10_000)]
    assert chisquare_gof(biased, np.arange(len(subsets)), pmf).pvalue < FALSE_ALARM


def test_bag_of_words_documents_apply_the_tokenizer_filters():
    counts = np.array([[3, 1, 0], [0, 2, 2]])
    documents = BagOfWordsDocuments(["1", "2"], counts, ["the", "gas", "at"],
                                    Tokenizer(min_length=3, stop_words=frozenset({"the"})))
    assert documents.types == ["gas"]
    np.testing.assert_array_equal(documents.lengths, [1, 2])


@pytest.mark.parametrize("settings, error, match", [
    ({"n_docs": 4}, ValueError, "only 3 of 4 documents"),
    ({"vocab_size": 0}, ValueError, "vocab_size must be at least 1"),
    ({"vocab_size": 6}, ValueError, "only 5 word types"),
    ({"max_df": 0.0}, ValueError, "max_df"),
    ({"max_df": 1.5}, ValueError, "max_df"),
    ({"min_tokens": -1}, ValueError, "min_tokens"),
    ({"n_docs": True}, TypeError, "n_docs"),
    ({"n_docs": 2.5}, TypeError, "n_docs"),
    ({"min_tokens": 100}, ValueError, "no document has at least 100"),
])
def test_bad_settings_are_rejected(small_emails, settings, error, match):
    with pytest.raises(error, match=match):
        _build(small_emails, **settings)


def test_empty_corpus_is_rejected():
    with pytest.raises(ValueError, match="empty"):
        build_topic_counts(TextDocuments([], [], Tokenizer()), n_docs=None, min_tokens=1,
                           vocab_size=None, max_df=0.3, seed=0)
