"""The real Enron data shipped in data/raw/enron, at the paper's settings."""
import email.utils
import re

import numpy as np
import pandas as pd
import pytest

from data_prep.corpus import (
    NETWORK_DEFAULTS,
    TOPIC_DEFAULTS,
    documents_from_emails,
    prepare_network,
    write_network,
    write_topics,
)
from data_prep.emails import addresses
from data_prep.raw import ENRON_EMAILS_INDEX, PRIEBE_EDGES, PRIEBE_NODES
from data_prep.tokens import Tokenizer
from data_prep.topics import build_topic_counts, sample_documents
from data_prep.vocabulary import document_frequency
from lpp.formats.counts import COUNTS_FILE, META_FILE, SUMMARY_FILE

PRIEBE = {"nodes": PRIEBE_NODES, "label_column": "email", "type_column": "reciptype"}


def _same_bytes(a, b):
    return all((a / n).read_bytes() == (b / n).read_bytes()
               for n in (COUNTS_FILE, META_FILE, SUMMARY_FILE))


def test_parsing_and_dedup_agree_with_the_shipped_index(enron_emails):
    emails, stats = enron_emails
    assert (stats.read, stats.malformed, stats.duplicates, stats.kept) == (64256, 0, 18563,
                                                                            45693)
    index = pd.read_csv(ENRON_EMAILS_INDEX, usecols=["file", "dedup_key"])
    key_of = dict(zip(index["file"], index["dedup_key"]))
    # the one message with a blank line before its headers is repaired here; the index
    # hashed it as a message with no headers
    differ = [m.source_id for m in emails if m.dedup_key != key_of[m.source_id]]
    assert differ == ["allen-p/inbox/8."]
    assert {m.dedup_key for m in emails} ^ set(index["dedup_key"]) == {
        emails[[m.source_id for m in emails].index(differ[0])].dedup_key, key_of[differ[0]]}


def test_address_fast_path_agrees_with_the_standard_library(enron_emails):
    for message in enron_emails[0][::15]:
        for header in (message.from_header, message.to_header, message.cc_header):
            reference = tuple(a.strip().lower() for _, a in email.utils.getaddresses([header])
                              if a.strip())
            assert addresses(header) == reference, header


@pytest.fixture(scope="module")
def enron_documents(enron_emails):
    tokenizer = Tokenizer.from_params(TOPIC_DEFAULTS["min_token_length"],
                                      TOPIC_DEFAULTS["stop_words"])
    return documents_from_emails(enron_emails[0], tokenizer, TOPIC_DEFAULTS["body_rule"])


def _paper_topics(documents, seed=TOPIC_DEFAULTS["seed"]):
    d = TOPIC_DEFAULTS
    return build_topic_counts(documents, n_docs=d["n_docs"], min_tokens=d["min_tokens"],
                              vocab_size=d["vocab_size"], max_df=d["max_df"], seed=seed)


def test_topic_matrix_at_the_paper_settings(enron_documents, tmp_path):
    result = _paper_topics(enron_documents)
    counts = result.counts
    assert counts.shape == (10_000, 10_000) == (len(result.doc_ids), len(result.vocabulary))
    # every document has >= 50 raw word tokens, recounted here without the package's tokenizer
    text_of = dict(zip(enron_documents.ids, enron_documents.texts))
    raw_tokens = [len(re.findall("[a-z]+", text_of[d].lower())) for d in result.doc_ids]
    assert min(raw_tokens) >= 50
    # no word at or above the document-frequency threshold, and the words are the most frequent
    # of those below it in the sample
    assert (document_frequency(counts) / 10_000).max() < 0.3
    rows = np.flatnonzero(np.isin(enron_documents.ids, result.doc_ids))
    sample, types = enron_documents.counts_for(rows)
    frequency = np.asarray(sample.sum(axis=0)).ravel()
    below = (document_frequency(sample) / 10_000 < 0.3) & (frequency > 0)
    chosen = np.isin(types, result.vocabulary)
    assert frequency[below & ~chosen].max() <= frequency[chosen].min()
    assert result.summary["empty_documents"] == 0

    write_topics(tmp_path / "a", result, params=TOPIC_DEFAULTS, inputs={})
    write_topics(tmp_path / "b", _paper_topics(enron_documents), params=TOPIC_DEFAULTS,
                 inputs={})
    assert _same_bytes(tmp_path / "a", tmp_path / "b")
    other = sample_documents(enron_documents.lengths, n_docs=10_000, min_tokens=50, rng=1)
    assert not np.array_equal(other, rows)


def test_network_at_the_paper_settings(tmp_path):
    result = prepare_network(PRIEBE_EDGES, tmp_path / "a", **PRIEBE)
    prepare_network(PRIEBE_EDGES, tmp_path / "b", **PRIEBE)
    assert _same_bytes(tmp_path / "a", tmp_path / "b")
    assert result.summary["actors"] == 157  # the paper reports 161
    assert np.trace(result.counts) == 0
    assert result.summary["edges"]["bcc_mirrors_cc"] is True
    assert result.summary["heldout"]["rule"] == NETWORK_DEFAULTS["heldout_rule"]

    # recount independently: to + cc rows between kept actors, self-loops dropped
    edges = pd.read_csv(PRIEBE_EDGES, sep="\t")
    nodes = pd.read_csv(PRIEBE_NODES, sep="\t", keep_default_na=False)
    ids = nodes.set_index("email").loc[result.actor_ids, "id"].to_numpy()
    kept = edges[edges["reciptype"].isin(["to", "cc"]) & (edges["from"] != edges["to"])
                 & edges["from"].isin(ids) & edges["to"].isin(ids)]
    expected = pd.crosstab(kept["from"], kept["to"]).reindex(index=ids, columns=ids,
                                                            fill_value=0)
    np.testing.assert_array_equal(result.counts, expected.to_numpy())

    # to and cc are interchangeable; self-loops change the count of actors kept
    swapped = edges.assign(reciptype=edges["reciptype"].replace({"to": "cc", "cc": "to"}))
    swapped.to_csv(tmp_path / "swapped.tsv", sep="\t", index=False)
    again = prepare_network(tmp_path / "swapped.tsv", **PRIEBE)
    np.testing.assert_array_equal(again.counts, result.counts)
    with_loops = prepare_network(PRIEBE_EDGES, **PRIEBE, self_loops="keep")
    assert with_loops.summary["actors"] == 160 and np.trace(with_loops.counts) > 0
    write_network(tmp_path / "c", with_loops, params={}, inputs={})
