"""Property tests of the prepare functions over arbitrary small corpora and settings: each
call returns a valid matrix (and writes exactly it) or raises ValueError/TypeError having
written nothing, and never hangs."""
import io
import math
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from data_prep.corpus import prepare_network, prepare_topics
from lpp.formats.counts import load_counts
from lpp.testing import time_limit

CALL_SECONDS = 30  # a small corpus takes milliseconds; this only turns a hang into a failure
PROPERTY = settings(max_examples=60, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

WORDS = ["gas", "power", "the", "a", "café", "x", "plant", "naïve", "GAS"]
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join).map(str.encode)
# mostly words, so that many corpora make a matrix; sometimes any bytes or any text
document = st.one_of(words, words, words, st.binary(max_size=40),
                     st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass")))


def _call(prepare, out: Path, *args, **kwargs):
    """The result, or None after a clear error that left ``out`` unwritten."""
    try:
        with time_limit(CALL_SECONDS, "a prepare call"):
            return prepare(*args, out, **kwargs)
    except (ValueError, TypeError):
        assert not out.exists() or not any(out.iterdir()), "a failed call wrote output"
        return None


def _write_corpus(root: Path, fmt: str, docs: list[bytes]) -> Path:
    if fmt == "text-dir":
        (root / "docs").mkdir()
        for i, doc in enumerate(docs):
            (root / "docs" / f"{i}.txt").write_bytes(doc)
        return root / "docs"
    if fmt == "text-csv":  # a well-formed table of (possibly undecodable) cells
        texts = [doc.decode("latin-1") for doc in docs]
        pd.DataFrame({"text": texts}).to_csv(root / "docs.csv", index=False)
        return root / "docs.csv"
    if fmt == "raw-csv":  # whatever the bytes make of a table
        (root / "docs.csv").write_bytes(b"text\n" + b"\n".join(docs))
        return root / "docs.csv"
    with tarfile.open(root / "mail.tar.gz", "w:gz") as archive:
        for i, doc in enumerate(docs):
            data = b"From: a@x.com\nSubject: s%d\n\n" % i + doc
            info = tarfile.TarInfo(f"maildir/u/{i + 1}.")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return root / "mail.tar.gz"


def _settings(valid: dict, bad: dict):
    """Valid settings three times in four; otherwise one of them spoiled by a bad value."""
    good = st.fixed_dictionaries(valid)
    spoiled = st.tuples(good, st.sampled_from(sorted(bad)).flatmap(
        lambda key: st.tuples(st.just(key), st.sampled_from(bad[key])))).map(
        lambda pair: {**pair[0], pair[1][0]: pair[1][1]})
    return st.one_of(good, good, good, spoiled)


topic_settings = _settings({
    "n_docs": st.one_of(st.none(), st.none(), st.integers(1, 4)),
    "min_tokens": st.integers(0, 3),
    "vocab_size": st.one_of(st.none(), st.none(), st.integers(1, 5)),
    "max_df": st.one_of(st.sampled_from([0.6, 0.9, 1.0]), st.floats(0.05, 1.0)),
    "min_token_length": st.integers(1, 3),
    "seed": st.integers(0, 2**32),
}, {
    "n_docs": [0, -1, 2.5, "3"], "min_tokens": [-1, 1.5, None], "vocab_size": [0, True],
    "max_df": [0.0, -0.5, 1.5, math.nan, math.inf, True, "0.3"],
    "min_token_length": [0, 1.5], "seed": ["x", -1],
})
@PROPERTY
@given(fmt=st.sampled_from(["text-dir", "text-csv", "raw-csv", "email-tar"]),
       docs=st.lists(document, min_size=1, max_size=7), params=topic_settings)
def test_prepare_topics_gives_a_valid_matrix_or_a_clear_error(fmt, docs, params):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = _write_corpus(root, fmt, docs)
        fmt = "text-csv" if fmt == "raw-csv" else fmt
        result = _call(prepare_topics, root / "out", source, fmt=fmt, **params)
        if result is None:
            return
        counts = result.counts
        n_rows, n_columns = counts.shape
        assert counts.dtype == np.int64 and (counts.data >= 0).all()
        assert n_rows == len(result.doc_ids) == len(set(result.doc_ids)) >= 1
        assert n_columns == len(result.vocabulary) == len(set(result.vocabulary)) >= 1
        assert (np.asarray(counts.sum(axis=0)).ravel() > 0).all()
        assert params["n_docs"] is None or n_rows == params["n_docs"]
        assert params["vocab_size"] is None or n_columns == params["vocab_size"]
        assert result.summary["documents"] == n_rows
        written = load_counts(root / "out")
        np.testing.assert_array_equal(written.counts.toarray(), counts.toarray())
        assert written.row_ids == result.doc_ids and written.column_ids == result.vocabulary


ACTORS = ["a", "b", "c", "d", "é"]
edge = st.tuples(st.sampled_from(ACTORS), st.sampled_from(ACTORS),
                 st.sampled_from(["to", "cc", "bcc", "fax"]))
network_settings = _settings({
    "recipient_types": st.one_of(st.none(), st.lists(st.sampled_from(["to", "cc", "bcc"]),
                                                     min_size=1, max_size=3)),
    "self_loops": st.sampled_from(["drop", "keep"]),
    "min_sent": st.integers(0, 2),
    "min_total": st.integers(0, 4),
    "heldout_top": st.integers(0, 2),
    "heldout_rule": st.sampled_from(["block", "rows_cols", "any", "none"]),
}, {
    "recipient_types": [[], "to"], "self_loops": ["zero", None], "min_sent": [-1, 0.5],
    "min_total": [-2, "3"], "heldout_top": [-1, 99, 1.0], "heldout_rule": ["rows", None],
})


@PROPERTY
@given(edges=st.lists(edge, min_size=1, max_size=12),
       raw=st.one_of(st.none(), st.none(), st.none(), st.binary(max_size=60)),
       params=network_settings)
def test_prepare_network_gives_a_valid_matrix_or_a_clear_error(edges, raw, params):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = root / "edges.tsv"
        if raw is None:
            pd.DataFrame(edges, columns=["from", "to", "kind"]).to_csv(source, sep="\t",
                                                                       index=False)
        else:  # a header, then whatever the bytes make of the rows
            source.write_bytes(b"from\tto\tkind\n" + raw)
        result = _call(prepare_network, root / "out", source, type_column="kind", **params)
        if result is None:
            return
        counts = result.counts
        n = len(result.actor_ids)
        assert counts.shape == (n, n) and n >= 1 and len(set(result.actor_ids)) == n
        assert counts.dtype == np.int64 and (counts >= 0).all()
        assert result.heldout.shape == (n, n) and result.heldout.dtype == bool
        assert result.summary["emails"] == counts.sum()
        if params["self_loops"] == "drop":
            assert not np.trace(counts)
        written = load_counts(root / "out")
        np.testing.assert_array_equal(written.counts.toarray(), counts)
        np.testing.assert_array_equal(written.arrays["heldout"], result.heldout)
        assert written.row_ids == result.actor_ids
