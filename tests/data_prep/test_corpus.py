"""Input formats, the Python API and the command line."""
import gzip
import mailbox
import tarfile

import numpy as np
import pandas as pd
import pytest

from data_prep._cli import byte_size
from data_prep.corpus import main, prepare_network, prepare_topics
from data_prep.formats import read_uci
from data_prep.tokens import Tokenizer
from data_prep.vocabulary import bag_of_words
from lpp.formats.counts import COUNTS_FILE, META_FILE, SUMMARY_FILE, load_counts

SETTINGS = {"n_docs": 3, "min_tokens": 5, "vocab_size": None, "max_df": 0.7, "seed": 3}


def _write_all_formats(root, docs, message):
    """The same documents in every topic format; returns {format: (input, extra kwargs)}."""
    made = {}
    (root / "texts").mkdir()
    for doc_id, text in docs:
        (root / "texts" / f"{doc_id}.txt").write_text(text)
    (root / "texts" / ".hidden").write_text("ignored ignored ignored ignored ignored")
    made["text-dir"] = (root / "texts", {})

    pd.DataFrame({"id": [d for d, _ in docs], "text": [t for _, t in docs]}).to_csv(
        root / "texts.csv", index=False)
    made["text-csv"] = (root / "texts.csv", {"id_column": "id"})

    lines = "".join(f"{text}\r\n" for _, text in docs).encode()
    (root / "texts.txt.gz").write_bytes(gzip.compress(lines))
    made["text-lines"] = (root / "texts.txt.gz", {})

    messages = [message(text + "\n", subject=f"s{i}") for i, (_, text) in enumerate(docs)]
    pd.DataFrame({"file": [f"u/inbox/{i + 1}." for i in range(len(docs))],
                  "message": messages}).to_csv(root / "emails.csv.gz", index=False)
    made["emails-csv"] = (root / "emails.csv.gz", {"id_column": "file"})

    box = mailbox.mbox(root / "box.mbox")
    for raw in messages:
        box.add(raw.encode())
    box.close()
    made["mbox"] = (root / "box.mbox", {})

    for sub in ("cur", "new", "tmp"):
        (root / "maildir" / sub).mkdir(parents=True)
    for i, raw in enumerate(messages):
        (root / "maildir" / "cur" / f"{i + 1}.host:2,S").write_text(raw)
    made["maildir"] = (root / "maildir", {})

    for i, raw in enumerate(messages):
        path = root / "tree" / "maildir" / "u" / "inbox" / f"{i + 1}."
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(raw)
    made["email-dir"] = (root / "tree" / "maildir", {})
    with tarfile.open(root / "mail.tar.gz", "w:gz") as archive:
        for i in reversed(range(len(messages))):  # member order must not matter
            archive.add(root / "tree" / "maildir" / "u" / "inbox" / f"{i + 1}.",
                        arcname=f"maildir/u/inbox/{i + 1}.")
    made["email-tar"] = (root / "mail.tar.gz", {})

    counts, types = bag_of_words([Tokenizer()(t) for _, t in docs])
    coo = counts.tocoo()
    lines = [f"{len(docs)}", f"{len(types)}", f"{coo.nnz}"] + [
        f"{r + 1} {c + 1} {v}" for r, c, v in zip(coo.row, coo.col, coo.data)]
    (root / "docword.txt").write_text("\n".join(lines) + "\n")
    (root / "vocab.txt").write_text("\n".join(types) + "\n")
    made["uci"] = (root / "docword.txt", {"vocab": root / "vocab.txt"})
    return made


def test_every_topic_format_gives_the_same_matrix(tmp_path, round_trip_docs, message):
    made = _write_all_formats(tmp_path, round_trip_docs, message)
    results = {fmt: prepare_topics(path, fmt=fmt, **extra, **SETTINGS)
               for fmt, (path, extra) in made.items()}
    reference = results["text-csv"]
    assert reference.doc_ids == ["doc1", "doc3", "doc6"]  # sampled 3 of the 5 eligible
    assert reference.summary["eligible_documents"] == 5
    assert "gas" in reference.vocabulary and "the" not in reference.vocabulary  # df 5/6
    for fmt, result in results.items():
        np.testing.assert_array_equal(result.counts.toarray(), reference.counts.toarray(),
                                      err_msg=fmt)
        assert result.vocabulary == reference.vocabulary, fmt
    assert results["email-tar"].doc_ids == ["u/inbox/1.", "u/inbox/3.", "u/inbox/6."]
    assert results["email-dir"].doc_ids == results["email-tar"].doc_ids
    assert results["mbox"].doc_ids == ["box.mbox:0", "box.mbox:2", "box.mbox:5"]
    assert results["uci"].doc_ids == ["1", "3", "6"]
    assert results["text-dir"].doc_ids == ["doc1.txt", "doc3.txt", "doc6.txt"]
    assert results["text-lines"].doc_ids == ["1", "3", "6"]  # line numbers


def test_text_lines_round_trip_through_the_cli(tmp_path, round_trip_docs):
    texts = [text for _, text in round_trip_docs]
    (tmp_path / "docs.txt").write_text("\n".join(texts) + "\n")
    assert main(["topics", "--format", "text-lines", "--input", str(tmp_path / "docs.txt"),
                 "--n-docs", "all", "--min-tokens", "0", "--vocab-size", "all", "--max-df",
                 "0.7", "--out", str(tmp_path / "out")]) == 0
    data = load_counts(tmp_path / "out")
    assert data.row_ids == ["1", "2", "3", "4", "5", "6"]
    assert data.meta["params"]["format"] == "text-lines"
    counts, types = bag_of_words([Tokenizer()(t) for t in texts])
    for row, text in enumerate(texts):  # every kept word of line d is counted in row d
        expected = {types[c]: counts[row, c] for c in range(len(types))
                    if types[c] in data.column_ids and counts[row, c]}
        got = {w: data.counts[row, c] for c, w in enumerate(data.column_ids)
               if data.counts[row, c]}
        assert got == expected, text


def test_n_docs_and_vocab_size_all_in_the_python_api(tmp_path, round_trip_docs, message):
    path, extra = _write_all_formats(tmp_path, round_trip_docs, message)["text-csv"]
    settings = {**SETTINGS, "vocab_size": "all", "min_tokens": 0}
    everything = prepare_topics(path, fmt="text-csv", **extra, **{**settings, "n_docs": "all"})
    unset = prepare_topics(path, fmt="text-csv", **extra, **{**settings, "n_docs": None})
    assert everything.doc_ids == unset.doc_ids == [d for d, _ in round_trip_docs]
    np.testing.assert_array_equal(everything.counts.toarray(), unset.counts.toarray())
    prepare_topics(path, tmp_path / "out", fmt="text-csv", **extra, **settings | {"n_docs": "all"})
    assert load_counts(tmp_path / "out").meta["params"]["n_docs"] is None  # as the CLI records
    with pytest.raises(TypeError, match="prepare_topics.n_docs must be a count or 'all', got "
                                        "'every'"):
        prepare_topics(path, fmt="text-csv", **extra, **{**settings, "n_docs": "every"})


def _email_network_fixture(root, message):
    emails = [  # sender, to, cc (bcc repeats cc, as in the CMU headers)
        ("a@x.com", ["b@x.com", "c@x.com"], ["d@x.com"]),
        ("b@x.com", ["a@x.com"], []),
        ("c@x.com", ["a@x.com"], ["b@x.com"]),
        ("a@x.com", ["a@x.com", "b@x.com"], []),
        ("d@x.com", ["a@x.com"], ["c@x.com"]),
        ("b@x.com", ["c@x.com", "a@x.com"], []),
    ]
    box = mailbox.mbox(root / "net.mbox")
    rows = []
    for i, (sender, to, cc) in enumerate(emails):
        box.add(message(f"message {i}\n", sender=sender, to=", ".join(to),
                        cc=", ".join(cc) if cc else None, bcc=", ".join(cc) if cc else None))
        rows += [(sender, r, "to") for r in to] + [(sender, r, kind) for r in cc
                                                    for kind in ("cc", "bcc")]
    box.close()
    table = pd.DataFrame(rows, columns=["from", "to", "reciptype"])
    table.to_csv(root / "edges.tsv", sep="\t", index=False)
    table.to_csv(root / "edges.csv", index=False)
    return root / "net.mbox", root / "edges.tsv", root / "edges.csv"


def test_edge_list_and_email_formats_give_the_same_network(tmp_path, message):
    mbox_path, tsv, csv = _email_network_fixture(tmp_path, message)
    settings = {"min_total": 3, "heldout_top": 1}
    from_mbox = prepare_network(mbox_path, fmt="mbox", **settings)
    from_tsv = prepare_network(tsv, type_column="reciptype", **settings)
    from_csv = prepare_network(csv, type_column="reciptype", **settings)
    assert from_tsv.actor_ids == ["a@x.com", "b@x.com", "c@x.com", "d@x.com"]
    # a: sent b, c, d, (a dropped), b -> row [0, 2, 1, 1]
    np.testing.assert_array_equal(from_tsv.counts, [[0, 2, 1, 1], [2, 0, 1, 0],
                                                    [1, 1, 0, 0], [1, 0, 1, 0]])
    for other in (from_mbox, from_csv):
        np.testing.assert_array_equal(other.counts, from_tsv.counts)
        np.testing.assert_array_equal(other.heldout, from_tsv.heldout)
        assert other.actor_ids == from_tsv.actor_ids
    assert from_tsv.summary["edges"]["bcc_mirrors_cc"] is True
    assert from_mbox.summary["emails"] == from_tsv.summary["emails"] == 11
    assert from_mbox.summary["email_parsing"]["messages_kept"] == 6


def test_a_weight_column_counts_like_repeated_rows(tmp_path, message):
    _, tsv, _ = _email_network_fixture(tmp_path, message)
    rows = pd.read_csv(tsv, sep="\t")
    weighted = rows.groupby(["from", "to", "reciptype"], as_index=False).size()
    weighted = weighted.rename(columns={"size": "n"})
    weighted.loc[len(weighted)] = ["d@x.com", "b@x.com", "to", 0]  # a zero adds nothing
    weighted.to_csv(tmp_path / "weighted.csv", index=False)
    assert len(weighted) < len(rows)
    settings = {"type_column": "reciptype", "min_total": 3, "heldout_top": 2}
    plain = prepare_network(tsv, tmp_path / "plain", **settings)
    summed = prepare_network(tmp_path / "weighted.csv", tmp_path / "summed",
                             weight_column="n", **settings)
    np.testing.assert_array_equal(summed.counts, plain.counts)
    np.testing.assert_array_equal(summed.heldout, plain.heldout)
    assert summed.actor_ids == plain.actor_ids
    assert summed.summary["edges"]["bcc_mirrors_cc"] is True
    assert summed.summary["edges"]["weight_total"] == plain.summary["edges"]["rows_counted"]
    assert load_counts(tmp_path / "summed").meta["params"]["weight_column"] == "n"
    # a run without the new settings records neither (its outputs keep their bytes)
    assert not {"weight_column", "undirected"} & set(load_counts(tmp_path / "plain").meta["params"])
    assert "weight_total" not in plain.summary["edges"]
    assert main(["network", "--input", str(tmp_path / "weighted.csv"), "--type-column",
                 "reciptype", "--weight-column", "n", "--min-total", "3", "--heldout-top", "2",
                 "--out", str(tmp_path / "cli")]) == 0
    np.testing.assert_array_equal(load_counts(tmp_path / "cli").counts.toarray(), plain.counts)
    with pytest.raises(ValueError, match="weight_column .* set it to none"):
        prepare_network(tmp_path / "net.mbox", fmt="mbox", weight_column="n", min_total=3)


def test_an_undirected_network_counts_each_edge_both_ways(tmp_path, capsys):
    edges = pd.DataFrame({"a": ["x", "x", "y", "z", "z", "w"],
                          "b": ["y", "y", "x", "x", "z", "x"], "n": [1, 1, 2, 1, 5, 1]})
    edges.to_csv(tmp_path / "e.csv", index=False)
    common = {"sender_column": "a", "recipient_column": "b", "weight_column": "n",
              "heldout_top": 1}
    # edges either way round: x-y 1+1+2 = 4, x-z 1, x-w 1, z-z 5 (a self-loop, kept once)
    result = prepare_network(tmp_path / "e.csv", tmp_path / "out", undirected=True,
                             self_loops="keep", min_total=1, **common)
    assert result.actor_ids == ["w", "x", "y", "z"]
    np.testing.assert_array_equal(result.counts, [[0, 1, 0, 0], [1, 0, 4, 1],
                                                  [0, 4, 0, 0], [0, 1, 0, 5]])
    np.testing.assert_array_equal(result.counts, result.counts.T)
    assert [a["sent"] for a in result.actors] == [1, 6, 4, 6]  # an actor's edges, once
    assert result.summary["edges"]["undirected"] is True
    assert load_counts(tmp_path / "out").meta["params"]["undirected"] is True
    # min_total compares with an actor's edges (w has 1), not with its row plus column sum
    # of the symmetric matrix (2); z keeps 1 edge once its self-loop is dropped
    dropped = prepare_network(tmp_path / "e.csv", undirected=True, min_total=2, **common)
    assert dropped.actor_ids == ["x", "y"]
    np.testing.assert_array_equal(dropped.counts, [[0, 4], [4, 0]])
    directed = prepare_network(tmp_path / "e.csv", min_total=2, **common)
    assert directed.actor_ids == ["x", "y"]
    np.testing.assert_array_equal(directed.counts, [[0, 2], [2, 0]])
    argv = ["network", "--input", str(tmp_path / "e.csv"), "--sender-column", "a",
            "--recipient-column", "b", "--weight-column", "n", "--self-loops", "keep",
            "--min-total", "1", "--heldout-top", "1"]
    assert main(argv + ["--undirected", "true", "--out", str(tmp_path / "cli")]) == 0
    np.testing.assert_array_equal(load_counts(tmp_path / "cli").counts.toarray(),
                                  result.counts)
    with pytest.raises(SystemExit):
        main(argv + ["--undirected", "maybe", "--out", str(tmp_path / "bad")])
    assert "not true or false" in capsys.readouterr().err
    with pytest.raises(TypeError, match="prepare_network.undirected must be true or false"):
        prepare_network(tmp_path / "e.csv", undirected="yes", min_total=1, **common)
    assert not (tmp_path / "bad").exists()


def test_network_with_node_table_is_written_and_loaded(tmp_path):
    edges = pd.DataFrame({"from": [0, 0, 1, 2, 2, 1], "to": [1, 2, 0, 0, 1, 2]})
    edges.to_csv(tmp_path / "e.tsv", sep="\t", index=False)
    pd.DataFrame({"id": [0, 1, 2], "email": ["x.a", "x.b", "x.c"],
                  "name": ["A", "B", "NA"]}).to_csv(tmp_path / "n.tsv", sep="\t", index=False)
    result = prepare_network(tmp_path / "e.tsv", tmp_path / "out", nodes=tmp_path / "n.tsv",
                             label_column="email", min_total=2, heldout_top=1,
                             heldout_rule="block")
    data = load_counts(tmp_path / "out")
    assert data.kind == "network" and data.row_ids == data.column_ids == ["x.a", "x.b", "x.c"]
    np.testing.assert_array_equal(data.counts.toarray(), result.counts)
    np.testing.assert_array_equal(data.arrays["heldout"], result.heldout)
    assert data.meta["actors"][2]["name"] == "NA"  # kept as text, as in the Priebe table
    assert data.meta["top_senders"] == ["x.a"] and data.meta["top_recipients"] == ["x.a"]
    assert set(data.meta["inputs"]) == {"input", "nodes"}
    with pytest.raises(ValueError, match="no column 'mail'"):
        prepare_network(tmp_path / "e.tsv", nodes=tmp_path / "n.tsv", label_column="mail")
    with pytest.raises(ValueError, match="set prepare_network.nodes .--nodes. too"):
        prepare_network(tmp_path / "e.tsv", label_column="email")


def test_node_table_errors_name_the_file(tmp_path):
    (tmp_path / "e.csv").write_text("from,to\n1,2\n2,1\n1,3\n3,1\n")
    (tmp_path / "n.csv").write_text("id,email\n1,a@x\n2,b@x\n")
    (tmp_path / "mixed.csv").write_text("id,email\n1,a@x\n2,b@x\n3,c@x\nq,d@x\n")
    common = {"label_column": "email", "min_total": 0, "heldout_top": 1}
    # actor 3 is not in n.csv: it was labelled "None"
    with pytest.raises(ValueError, match=(f"the node table {tmp_path / 'n.csv'} has no row for "
                                          r"1 of the 3 actors kept: ids \['3'\]")):
        prepare_network(tmp_path / "e.csv", nodes=tmp_path / "n.csv", **common)
    # one non-numeric id made the table text: every lookup missed ("labels are not unique")
    mixed = prepare_network(tmp_path / "e.csv", nodes=tmp_path / "mixed.csv", **common)
    assert mixed.actor_ids == ["a@x", "b@x", "c@x"]


def test_edge_weight_errors_name_the_file(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("from,to,n\n1,2,600000000000000\n2,1,600000000000000\n")
    with pytest.raises(ValueError, match=(f"the edge list {path}: the edge weights add up to "
                                          r"1\.2e\+15, more than the 1e\+15 counts lpp fits")):
        prepare_network(path, weight_column="n", min_total=0, heldout_top=1)
    path.write_text("from,to,n\n" + "1,2,4000000000000000000\n" * 5)
    with pytest.raises(ValueError, match=f"{path}: the weight column 'n' .* data row 1 "):
        prepare_network(path, weight_column="n", min_total=0, heldout_top=1)


def _cli_topics(tmp_path, *extra):
    return main(["topics", "--format", "text-csv", "--input", str(tmp_path / "texts.csv"),
                 "--id-column", "id", "--n-docs", "3", "--min-tokens", "5", "--vocab-size",
                 "all", "--max-df", "0.7", "--seed", "3", *extra])


def test_cli_writes_identical_bytes_for_the_same_seed(tmp_path, round_trip_docs, message,
                                                      capsys):
    _write_all_formats(tmp_path, round_trip_docs, message)
    assert _cli_topics(tmp_path, "--out", str(tmp_path / "a")) == 0
    assert _cli_topics(tmp_path, "--out", str(tmp_path / "b")) == 0
    assert "wrote" in capsys.readouterr().out
    for name in (COUNTS_FILE, META_FILE, SUMMARY_FILE):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    data = load_counts(tmp_path / "a")
    assert data.row_ids == ["doc1", "doc3", "doc6"]
    assert data.meta["params"]["seed"] == 3 and data.meta["params"]["format"] == "text-csv"
    assert data.meta["inputs"]["input"]["name"] == "texts.csv"
    assert _cli_topics(tmp_path, "--out", str(tmp_path / "c"), "--seed", "4") == 0
    assert load_counts(tmp_path / "c").row_ids != data.row_ids


@pytest.mark.parametrize("case", ["missing file", "empty corpus", "no such column",
                                  "too few documents", "vocabulary of 0", "uci without vocab",
                                  "header-only csv", "not a maildir", "bad checksum"])
def test_cli_errors_write_nothing(tmp_path, round_trip_docs, message, capsys, case):
    _write_all_formats(tmp_path, round_trip_docs, message)
    (tmp_path / "empty").mkdir()
    (tmp_path / "header.csv").write_text("text\n")
    base = ["topics", "--out", str(tmp_path / "out")]
    argv, expected = {
        "missing file": (["--format", "text-csv", "--input", str(tmp_path / "nope.csv")],
                         "not found"),
        "empty corpus": (["--format", "text-dir", "--input", str(tmp_path / "empty")],
                         "empty"),
        "no such column": (["--format", "text-csv", "--input", str(tmp_path / "texts.csv"),
                            "--text-column", "body"], "no column(s) ['body']"),
        "too few documents": (["--format", "text-dir", "--input", str(tmp_path / "texts"),
                               "--n-docs", "10", "--min-tokens", "5"], "only 5 of 6"),
        "vocabulary of 0": (["--format", "text-dir", "--input", str(tmp_path / "texts"),
                             "--vocab-size", "0"], "vocab_size must be at least 1"),
        "uci without vocab": (["--format", "uci", "--input", str(tmp_path / "docword.txt")],
                              "needs the vocab file"),
        "header-only csv": (["--format", "text-csv", "--input", str(tmp_path / "header.csv")],
                            "empty"),
        "not a maildir": (["--format", "maildir", "--input", str(tmp_path / "texts")],
                          "not a maildir"),
        "bad checksum": (["--format", "text-csv", "--input", str(tmp_path / "texts.csv"),
                          "--sha256", "0" * 64], "sha256"),
    }[case]
    assert main(base + argv) == 2
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_network_cli(tmp_path, message, capsys):
    _, tsv, _ = _email_network_fixture(tmp_path, message)
    argv = ["network", "--input", str(tsv), "--type-column", "reciptype", "--min-total", "3",
            "--heldout-top", "2", "--out", str(tmp_path / "net")]
    assert main(argv) == 0
    data = load_counts(tmp_path / "net")
    assert data.counts.shape == (4, 4) and data.arrays["heldout"].dtype == bool
    assert data.meta["params"]["recipient_types"] == ["to", "cc"]
    assert main(argv[:-1] + [str(tmp_path / "all"), "--recipient-types", "all"]) == 0
    assert load_counts(tmp_path / "all").counts.sum() > data.counts.sum()  # bcc counted twice
    with pytest.raises(SystemExit):  # argparse refuses a format the network cannot use
        main(["network", "--format", "uci", "--input", str(tsv), "--out", "x"])
    capsys.readouterr()
    assert main(argv[:-1] + [str(tmp_path / "bad"), "--heldout-top", "9"]) == 2
    assert "exceeds" in capsys.readouterr().err and not (tmp_path / "bad").exists()


def test_remask_gives_the_same_network_under_another_rule(tmp_path, message, capsys):
    _, tsv, _ = _email_network_fixture(tmp_path, message)
    common = ["--input", str(tsv), "--type-column", "reciptype", "--min-total", "3",
              "--heldout-top", "2"]
    assert main(["network", *common, "--out", str(tmp_path / "block")]) == 0
    assert main(["network", *common, "--heldout-rule", "rows_cols",
                 "--out", str(tmp_path / "direct")]) == 0
    assert main(["remask", "--input", str(tmp_path / "block"), "--heldout-rule", "rows_cols",
                 "--out", str(tmp_path / "remasked")]) == 0
    block, direct, remasked = (load_counts(tmp_path / n) for n in ("block", "direct", "remasked"))
    # remasking equals preparing with the rule from the start
    assert (remasked.counts != direct.counts).nnz == 0
    np.testing.assert_array_equal(remasked.arrays["heldout"], direct.arrays["heldout"])
    assert not np.array_equal(remasked.arrays["heldout"], block.arrays["heldout"])
    assert remasked.summary["heldout"] == direct.summary["heldout"]
    assert remasked.meta["params"] == direct.meta["params"]
    assert remasked.meta["row_ids"] == block.meta["row_ids"]
    with pytest.raises(SystemExit):  # argparse refuses an unknown rule
        main(["remask", "--input", str(tmp_path / "block"), "--heldout-rule", "odd",
              "--out", str(tmp_path / "x")])
    capsys.readouterr()


@pytest.mark.parametrize("lines, vocab, match", [
    ("x\n1\n1\n", "a\n", "first three lines"),
    ("1\n1\n2\n1 1 3\n", "a\n", "expected 2"),
    ("1\n1\n1\n2 1 3\n", "a\n", "out of range"),
    ("1\n1\n1\n1 1 0\n", "a\n", "positive"),
    ("1\n2\n1\n1 1 1\n", "a\n", "W=2"),
    ("0\n1\n0\n", "a\n", "empty"),
])
def test_uci_validation(tmp_path, lines, vocab, match):
    (tmp_path / "docword.txt").write_text(lines)
    (tmp_path / "vocab.txt").write_text(vocab)
    with pytest.raises(ValueError, match=match):
        read_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt")


def test_bad_settings_fail_before_reading(tmp_path):
    missing = tmp_path / "not-read.csv"
    with pytest.raises(ValueError, match="body_rule"):
        prepare_topics(missing, fmt="text-csv", body_rule="strip")
    with pytest.raises(ValueError, match="cannot be used"):
        prepare_topics(missing, fmt="edges")
    with pytest.raises(TypeError, match="unknown topic setting"):
        prepare_topics(missing, fmt="text-csv", vocabulary=5)
    with pytest.raises(TypeError, match="unknown network setting"):
        prepare_network(missing, heldout=5)


def test_uci_gzip(tmp_path):
    with gzip.open(tmp_path / "docword.txt.gz", "wt") as handle:
        handle.write("2\n2\n3\n1 1 2\n2 1 1\n2 2 4\n")
    (tmp_path / "vocab.txt").write_text("gas\npower\n")
    ids, counts, vocab = read_uci(tmp_path / "docword.txt.gz", tmp_path / "vocab.txt")
    assert ids == ["1", "2"] and vocab == ["gas", "power"]
    np.testing.assert_array_equal(counts.toarray(), [[2, 0], [1, 4]])


def test_cli_none_leaves_an_optional_input_unset(tmp_path, message, capsys):
    """The pipeline templates every option; 'none' must mean the same as leaving it out."""
    _, tsv, _ = _email_network_fixture(tmp_path, message)
    argv = ["network", "--input", str(tsv), "--type-column", "reciptype", "--min-total", "3",
            "--heldout-top", "2"]
    assert main(argv + ["--out", str(tmp_path / "a")]) == 0
    assert main(argv + ["--nodes", "none", "--label-column", "none", "--id-column", "none",
                        "--out", str(tmp_path / "b")]) == 0
    for name in (COUNTS_FILE, META_FILE):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert main(["network", "--input", str(tsv), "--type-column", "none", "--min-total", "3",
                 "--heldout-top", "2", "--out", str(tmp_path / "c")]) == 0
    assert load_counts(tmp_path / "c").meta["params"]["type_column"] is None


@pytest.mark.parametrize("case", ["empty vocabulary", "no tokens", "no actor", "not a tar",
                                  "member too large", "wrong encoding"])
def test_cli_refuses_with_one_line_naming_the_setting(tmp_path, round_trip_docs, message,
                                                     capsys, case):
    made = _write_all_formats(tmp_path, round_trip_docs, message)
    _, tsv, _ = _email_network_fixture(tmp_path, message)
    (tmp_path / "junk.tar.gz").write_bytes(b"not a tarball at all\n" * 50)
    (tmp_path / "latin.csv").write_bytes("id,text\n1,café gas\n".encode("latin-1"))
    texts = ["topics", "--format", "text-dir", "--input", str(made["text-dir"][0]),
             "--n-docs", "all", "--min-tokens", "0", "--vocab-size", "all"]
    argv, expected = {
        # every word of the 6 documents occurs in at least 1 of 6 (df >= 1/6)
        "empty vocabulary": (texts + ["--max-df", "0.1"], "raise prepare_topics.max_df"),
        "no tokens": (texts + ["--min-token-length", "50"],
                      "lower prepare_topics.min_token_length"),
        "no actor": (["network", "--input", str(tsv), "--min-total", "1000"],
                     "lower prepare_network.min_sent or prepare_network.min_total"),
        "not a tar": (["topics", "--format", "email-tar", "--input",
                       str(tmp_path / "junk.tar.gz")], "junk.tar.gz is not a readable tar"),
        "member too large": (["topics", "--format", "email-tar", "--input",
                              str(made["email-tar"][0]), "--max-member-bytes", "10"],
                             "more than max_member_bytes=10 (--max-member-bytes)"),
        "wrong encoding": (["topics", "--format", "text-csv", "--input",
                            str(tmp_path / "latin.csv"), "--encoding", "utf-8"],
                           "cannot be decoded as utf-8"),
    }[case]
    assert main(argv + ["--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and expected in err
    assert not (tmp_path / "out").exists()


def test_cli_reading_options(tmp_path, round_trip_docs, message, capsys):
    made = _write_all_formats(tmp_path, round_trip_docs, message)
    pd.DataFrame({"id": [d for d, _ in round_trip_docs],
                  "text": [f"{t} café" for _, t in round_trip_docs]}).to_csv(
        tmp_path / "latin.csv", index=False, encoding="latin-1")
    tar = ["topics", "--format", "email-tar", "--input", str(made["email-tar"][0]),
           "--n-docs", "all", "--min-tokens", "0", "--vocab-size", "all", "--max-df", "0.7"]
    assert main(tar + ["--max-member-bytes", "4k", "--max-archive-bytes", "1MiB",
                       "--out", str(tmp_path / "a")]) == 0
    assert main(tar + ["--max-archive-bytes", "2k", "--out", str(tmp_path / "b")]) == 2
    assert "max_archive_bytes=2,048" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(tar + ["--max-member-bytes", "lots", "--out", str(tmp_path / "c")])
    csv = ["topics", "--format", "text-csv", "--input", str(tmp_path / "latin.csv"),
           "--id-column", "id", "--n-docs", "all", "--min-tokens", "0", "--vocab-size", "all",
           "--max-df", "0.7"]
    assert main(csv + ["--out", str(tmp_path / "d")]) == 0
    assert main(csv + ["--encoding", "latin-1", "--out", str(tmp_path / "e")]) == 0
    detected, named = load_counts(tmp_path / "d"), load_counts(tmp_path / "e")
    np.testing.assert_array_equal(detected.counts.toarray(), named.counts.toarray())
    assert "encoding" not in detected.meta["params"]  # outputs of old runs keep their bytes
    assert named.meta["params"]["encoding"] == "latin-1"


def test_byte_sizes():
    assert byte_size("1000") == 1000
    assert byte_size("64M") == byte_size("64MiB") == byte_size("64mb") == 64 * 2**20
    assert byte_size("4G") == 4 * 2**30 and byte_size("2k") == 2048
    for bad in ("", "-5", "1.5G", "4X", "G"):
        with pytest.raises(Exception, match="not a size in bytes"):
            byte_size(bad)


def test_an_empty_vocabulary_is_refused_in_the_api(tmp_path, round_trip_docs, message):
    made = _write_all_formats(tmp_path, round_trip_docs, message)
    for fmt in ("text-csv", "uci"):
        path, extra = made[fmt]
        with pytest.raises(ValueError, match="only 0 word types .* raise prepare_topics.max_df"):
            prepare_topics(path, tmp_path / fmt, fmt=fmt, **extra, n_docs=None, min_tokens=0,
                           vocab_size=None, max_df=0.1)
        assert not (tmp_path / fmt).exists()


@pytest.mark.parametrize("case", ["heldout_top", "n_docs", "vocab_size", "max_df", "min_tokens",
                                  "format"])
def test_errors_name_the_params_yaml_keys_to_change(tmp_path, round_trip_docs, message, case):
    made = _write_all_formats(tmp_path, round_trip_docs, message)
    _, tsv, _ = _email_network_fixture(tmp_path, message)
    path, extra = made["text-csv"]
    loose = {"n_docs": "all", "min_tokens": 0, "vocab_size": "all", "max_df": 1.0}
    run, expected = {
        "heldout_top": (lambda: prepare_network(tsv, min_total=3, heldout_top=10),
                        r"prepare_network.heldout_top=10 exceeds the number of actors kept "
                        r"\(4\): lower prepare_network.heldout_top, or keep more actors by "
                        r"lowering prepare_network.min_total or prepare_network.min_sent"),
        "n_docs": (lambda: prepare_topics(path, fmt="text-csv", **extra,
                                          **{**loose, "n_docs": 7}),
                   r"cannot sample 7: lower prepare_topics.n_docs \(to 6 at most, or all\) "
                   r"or prepare_topics.min_tokens"),
        "vocab_size": (lambda: prepare_topics(path, fmt="text-csv", **extra,
                                              **{**loose, "vocab_size": 500}),
                       r"cannot choose a vocabulary of 500: raise prepare_topics.max_df, lower "
                       r"prepare_topics.vocab_size \(to \d+ at most, or all\)"),
        "max_df": (lambda: prepare_topics(path, fmt="text-csv", **extra,
                                          **{**loose, "max_df": 0.1}),
                   r"only 0 word types .* cannot choose any vocabulary: raise "
                   r"prepare_topics.max_df, lower prepare_topics.vocab_size, or"),
        "min_tokens": (lambda: prepare_topics(path, fmt="text-csv", **extra,
                                              **{**loose, "min_tokens": 10_000}),
                       r"no document has at least 10000 word tokens: lower "
                       r"prepare_topics.min_tokens"),
        "format": (lambda: prepare_network(tsv, fmt="text-lines"),
                   r"set prepare_network.format \(--format\) to one of"),
    }[case]
    with pytest.raises(ValueError, match=expected):
        run()
