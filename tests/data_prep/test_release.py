"""The owners' release of a prepared matrix, attacked by a hostile analyst who holds the private
folder: metadata, ids and their order.

The pipeline's own path (``privatize_prepared``, which the privatize notebook runs) on
synthetic corpora built to make a leak visible: words of very unequal frequency, whose
vocabulary is chosen and ranked by frequency; actors whose numeric ids are their activity
ranks. The analyst must learn no more about the true totals from the folder's order and
metadata than from ``y_tilde`` alone; each test first shows that the same attack succeeds on
the prepared order (the test has power).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats

from data_prep.corpus import main as corpus_main, prepare_network, prepare_topics
from data_prep.release import privatize_prepared, selection_record
from lpp.formats.counts import load_counts, write_counts
from lpp.formats.privatized import canonical_counts, is_canonical
from lpp.mechanism import alpha_from_epsilon, privatize

LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def _words(rng, n):
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(LETTERS, size=rng.integers(4, 9))))
    return sorted(words)


def _corpus(path, rng, words, n_docs=300, tokens=120):
    """A text-lines corpus whose word frequencies fall off as a power law (very unequal)."""
    p = 1.0 / np.arange(1, len(words) + 1) ** 1.1
    order = rng.permutation(len(words))  # which word is frequent has nothing to do with its name
    p = p[np.argsort(order)]
    lines = [" ".join(rng.choice(words, size=tokens, p=p / p.sum())) for _ in range(n_docs)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _isotonic_decreasing(values):
    """The least-squares non-increasing fit of ``values`` in the order given (pool adjacent
    violators): the analyst's best use of an order that ranks the true totals."""
    blocks = []  # [mean, weight]
    for v in np.asarray(values, dtype=float):
        blocks.append([v, 1.0])
        while len(blocks) > 1 and blocks[-2][0] < blocks[-1][0]:
            (m2, w2), (m1, w1) = blocks.pop(), blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2])
    return np.concatenate([np.full(int(w), m) for m, w in blocks])


def _order_attack(noisy_totals):
    """The analyst's estimate of the true totals of the stored order: the noisy totals alone,
    or fitted as ranked (largest first)."""
    return noisy_totals.astype(float), _isotonic_decreasing(noisy_totals)


def _tolerance(n):
    """|Spearman rho| of an order unrelated to the totals stays below 4 / sqrt(n - 1) (four
    standard errors under independence)."""
    return 4.0 / np.sqrt(n - 1)


@pytest.fixture(scope="module")
def topics(tmp_path_factory):
    root = tmp_path_factory.mktemp("topics")
    rng = np.random.default_rng(20)
    words = _words(rng, 400)
    corpus = _corpus(root / "corpus.txt", rng, words)
    prepare_topics(corpus, root / "prepared", fmt="text-lines", n_docs=250, min_tokens=50,
                   vocab_size=200, max_df=1.0, seed=3)
    prepared, private = privatize_prepared(root / "prepared", root / "private",
                                           epsilon_over_n=1.0, simulation=True, noise_seed_base=77, replicate=0)
    return root, prepared, private


def test_the_column_order_tells_nothing_of_the_true_word_totals(topics):
    """Today's frequency-ranked vocabulary, kept in the private folder, tells the rank of every
    word's true total: fitting the private totals under that order cuts their error. In
    canonical order neither works: the order is unrelated to the totals, and fitting under it
    does worse than the private totals alone."""
    _, prepared, private = topics
    truth = canonical_counts(prepared)
    assert private.column_ids == truth.column_ids and is_canonical(private.column_ids)
    true_totals = np.asarray(truth.counts.sum(axis=0)).ravel()
    noisy = private.y_tilde.sum(axis=0)
    n = true_totals.size
    rho = stats.spearmanr(np.arange(n), true_totals).statistic
    assert abs(rho) < _tolerance(n), rho
    alone, ranked = _order_attack(noisy)
    assert np.abs(ranked - true_totals).mean() >= np.abs(alone - true_totals).mean()
    # power: the same attack on the prepared (frequency) order
    position = {w: k for k, w in enumerate(private.column_ids)}
    ranked_order = [position[w] for w in prepared.column_ids]
    prepared_totals = np.asarray(prepared.counts.sum(axis=0)).ravel()
    assert stats.spearmanr(np.arange(n), prepared_totals).statistic < -0.9
    alone, ranked = _order_attack(noisy[ranked_order])
    assert np.abs(ranked - prepared_totals).mean() < 0.6 * np.abs(alone - prepared_totals).mean()


def test_the_folder_does_not_depend_on_the_order_the_owners_kept(topics):
    """The noise is drawn in canonical order: privatizing the prepared counts as they are, or
    already in canonical order, gives the same folder, byte for byte."""
    root, prepared, _ = topics
    truth = canonical_counts(prepared)
    write_counts(root / "canonical", truth.counts, row_ids=truth.row_ids,
                 column_ids=truth.column_ids, kind="topics", params=prepared.meta["params"],
                 inputs={}, summary={})
    privatize_prepared(root / "canonical", root / "again", epsilon_over_n=1.0,
                       simulation=True, noise_seed_base=77, replicate=0)
    mine = json.loads((root / "again" / "meta.json").read_text())
    theirs = json.loads((root / "private" / "meta.json").read_text())
    assert {k: v for k, v in mine.items() if k != "source"} == {
        k: v for k, v in theirs.items() if k != "source"}
    assert (root / "again" / "y_tilde.npz").read_bytes() == (
        root / "private" / "y_tilde.npz").read_bytes()


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    """Actors numbered by activity (id 1 the most active, as many published edge lists are),
    named by e-mail addresses that say nothing of it."""
    root = tmp_path_factory.mktemp("network")
    rng = np.random.default_rng(21)
    n = 150
    activity = 2000.0 / np.arange(1, n + 1) ** 0.9 + 5
    rows = []
    for i in range(n):
        for j in rng.choice(n, size=rng.poisson(activity[i]) + 1,
                            p=activity / activity.sum()):
            if i != j:
                rows.append(f"{i + 1}\t{j + 1}")
    (root / "edges.tsv").write_text("from\tto\n" + "\n".join(rows) + "\n")
    names = _words(rng, n)
    rng.shuffle(names)
    (root / "nodes.tsv").write_text(
        "id\temail\n" + "".join(f"{i + 1}\t{names[i]}@corp.example\n" for i in range(n)))
    prepare_network(root / "edges.tsv", root / "prepared", fmt="edges", nodes=root / "nodes.tsv",
                    label_column="email", min_sent=1, min_total=1, heldout_top=10)
    return root


def test_the_row_order_tells_nothing_of_the_actors_true_totals(network, monkeypatch):
    monkeypatch.chdir(network)
    prepared, private = privatize_prepared("prepared", "private", epsilon_over_n=1.0,
                                           simulation=True, noise_seed_base=78, replicate=2)
    truth = canonical_counts(prepared)
    assert private.row_ids == truth.row_ids and is_canonical(private.row_ids)
    for totals, prepared_totals in ((truth.counts.sum(axis=1), prepared.counts.sum(axis=1)),
                                    (truth.counts.sum(axis=0), prepared.counts.sum(axis=0))):
        totals, prepared_totals = np.ravel(totals), np.ravel(prepared_totals)
        n = totals.size
        assert abs(stats.spearmanr(np.arange(n), totals).statistic) < _tolerance(n)
        assert stats.spearmanr(np.arange(n), prepared_totals).statistic < -0.9  # power
    noisy = private.y_tilde.sum(axis=1)
    true_rows = np.ravel(truth.counts.sum(axis=1))
    alone, ranked = _order_attack(noisy)
    assert np.abs(ranked - true_rows).mean() >= np.abs(alone - true_rows).mean()
    assert np.array_equal(private.heldout, truth.arrays["heldout"])


def _numbers_in(value, skip=("data_sha256", "dataset_id", "release_sha256")):
    """Every whole number an analyst can read out of a JSON value (numbers, digit runs of
    strings), the hexadecimal digests left out."""
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, (int, float)):
        return {int(value)} if float(value).is_integer() else set()
    if isinstance(value, str):
        return {int(d) for d in re.findall(r"\d+", value)}
    if isinstance(value, dict):
        return set().union(set(), *(_numbers_in(v) for k, v in value.items() if k not in skip))
    return set().union(set(), *(_numbers_in(v) for v in value))


def test_the_private_metadata_carries_no_true_count_statistic(network, monkeypatch):
    """No total, no count of an actor's emails, no rank list, no summary: the private folder's
    ``meta.json`` holds the format's fields and nothing else; no true total (row, column,
    grand, an actor's sent or received emails) can be read out of it; its only order is the
    ids'; and its selection record states rules by their settings."""
    monkeypatch.chdir(network)
    prepared, private = privatize_prepared("prepared", "private_meta", epsilon_over_n=2.0,
                                           simulation=True, noise_seed_base=79, replicate=0)
    meta = json.loads((network / "private_meta" / "meta.json").read_text())
    assert set(meta) == {"format", "format_version", "shape", "data_file", "data_sha256",
                         "epsilon", "N", "epsilon_over_n", "mechanism", "randomness", "source",
                         "has_heldout", "order", "ledger", "selection", "row_ids",
                         "column_ids"}
    y = prepared.counts.toarray()
    statistics = set(y.sum(axis=0)) | set(y.sum(axis=1)) | {int(y.sum()), int((y > 0).sum())}
    for actor in prepared.meta["actors"]:
        statistics |= {actor[k] for k in ("sent", "received", "sent_in_matrix",
                                          "received_in_matrix")}
    # the settings are small numbers; the shape (how many actors were kept) is released by
    # design, and the selection record says by which rule
    statistics = {int(s) for s in statistics if s > 20} - set(meta["shape"])
    assert len(statistics) > 50
    assert not statistics & _numbers_in(meta)
    assert is_canonical(meta["row_ids"]) and is_canonical(meta["column_ids"])
    settings = prepared.meta["params"]
    assert _numbers_in(meta["selection"]) <= {settings["min_sent"], settings["min_total"],
                                              settings["heldout_top"]}
    chosen = {e["what"]: e for e in meta["selection"]}
    assert set(chosen) == {"rows", "columns", "heldout"}
    assert all(e["from_true_counts"] and e["epsilon"] is None for e in chosen.values())
    assert "top senders" in chosen["heldout"]["rule"]
    assert meta["ledger"]["copy"] == 0


def test_the_selection_record_of_the_simulated_topics_says_what_the_counts_chose(topics):
    _, prepared, private = topics
    chosen = {e["what"]: e for e in private.meta["selection"]}
    assert set(chosen) == {"rows", "columns"}
    assert chosen["columns"]["from_true_counts"] and "200 word types with the most tokens" in \
        chosen["columns"]["rule"]
    assert chosen["rows"]["from_true_counts"] and "at least 50 word tokens" in \
        chosen["rows"]["rule"]
    assert "3" not in re.findall(r"\d+", chosen["rows"]["rule"])  # the sample seed is not told
    assert selection_record({"kind": "topics", "params": {}})[0]["from_true_counts"]
    assert selection_record({"params": {}}) == [
        {"what": w, "rule": "not recorded by the prepared data: read it as chosen from the true "
                            "counts", "from_true_counts": True, "epsilon": None}
        for w in ("rows", "columns")]


# ---- a public vocabulary: nothing about the counts chooses the columns ----------------------

@pytest.fixture(scope="module")
def public(tmp_path_factory):
    root = tmp_path_factory.mktemp("public")
    rng = np.random.default_rng(22)
    words = _words(rng, 300)
    corpora = [_corpus(root / f"corpus{k}.txt", rng, words, n_docs=120) for k in range(2)]
    listed = sorted(rng.choice(words, size=80, replace=False)) + ["zzzabsent", "neverseen"]
    vocab = root / "vocab.txt"
    vocab.write_text("# a public word list\n\n" + "\n".join(rng.permutation(listed)) + "\n")
    return root, corpora, vocab, sorted(listed)


def test_a_public_vocabulary_is_the_same_whatever_the_counts(public):
    root, corpora, vocab, listed = public
    made = [prepare_topics(c, root / f"prepared{k}", fmt="text-lines", public_vocab=vocab,
                           n_docs=100, min_tokens=50, vocab_size=10, max_df=0.01, seed=1)
            for k, c in enumerate(corpora)]
    assert made[0].vocabulary == made[1].vocabulary == listed  # the list, sorted: no count chose
    assert not np.array_equal(made[0].counts.toarray(), made[1].counts.toarray())
    absent = [listed.index("neverseen"), listed.index("zzzabsent")]
    assert made[0].counts[:, absent].sum() == 0  # a word no document holds is a zero column
    data = load_counts(root / "prepared0")
    assert data.meta["params"]["public_vocab"] == str(vocab)
    assert data.meta["inputs"]["public_vocab"]["name"] == "vocab.txt"
    (columns,) = [e for e in selection_record(data.meta) if e["what"] == "columns"]
    assert columns == {"what": "columns", "rule": "a public vocabulary fixed before the counts "
                       "were read (vocab.txt), in alphabetical order", "from_true_counts": False,
                       "epsilon": None}
    # the counts are each word's tokens, as without the public list
    ruled = prepare_topics(corpora[0], None, fmt="text-lines", n_docs=100, min_tokens=50,
                           vocab_size="all", max_df=1.0, seed=1)
    for word in ("neverseen",) + tuple(listed[:5]):
        if word in ruled.vocabulary:
            column = ruled.counts[:, [ruled.vocabulary.index(word)]].toarray()
            assert np.array_equal(column, made[0].counts[:, [listed.index(word)]].toarray())


def test_the_command_line_takes_a_public_vocabulary(public):
    root, corpora, vocab, listed = public
    assert corpus_main(["topics", "--format", "text-lines", "--input", str(corpora[1]),
                        "--out", str(root / "cli"), "--public-vocab", str(vocab),
                        "--n-docs", "all", "--min-tokens", "50"]) == 0
    assert load_counts(root / "cli").column_ids == listed
    assert corpus_main(["topics", "--format", "text-lines", "--input", str(corpora[1]),
                        "--out", str(root / "cli_none"), "--public-vocab", "none",
                        "--n-docs", "all", "--min-tokens", "50", "--vocab-size", "20"]) == 0
    assert "public_vocab" not in load_counts(root / "cli_none").meta["params"]


@pytest.mark.parametrize("text, match", [
    ("gas\nPower\n", "never gives"),
    ("gas\ngas2\n", "never gives"),
    ("gas\npower\ngas\n", "listed twice"),
    ("gas power\n", "one word per line"),
    ("# nothing\n\n", "lists no word"),
])
def test_a_public_vocabulary_the_tokenizer_cannot_use_is_refused(public, tmp_path, text, match):
    _, corpora, _, _ = public
    (tmp_path / "v.txt").write_text(text)
    with pytest.raises(ValueError, match=match):
        prepare_topics(corpora[0], tmp_path / "out", fmt="text-lines",
                       public_vocab=tmp_path / "v.txt", n_docs=10, min_tokens=1)
    assert not (tmp_path / "out").exists()


def test_the_uci_word_table_is_not_a_public_vocabulary(public, tmp_path):
    """``vocab`` names the uci format's word ids; given for another format it was silently
    ignored, which a user could take for a public vocabulary: it is refused."""
    _, corpora, vocab, _ = public
    with pytest.raises(ValueError, match="public_vocab"):
        prepare_topics(corpora[0], tmp_path / "out", fmt="text-lines", vocab=vocab,
                       n_docs=10, min_tokens=1)


def _dense(counts):
    return counts.toarray() if hasattr(counts, "toarray") else np.asarray(counts)


def test_data_sets_noised_under_one_seed_level_and_replicate_get_independent_noise(topics,
                                                                                  network):
    """Whoever holds one data set's true counts (or guesses them: most entries are 0) learns
    nothing of another's noise: two data sets privatized with the same base seed, level and
    replicate draw unrelated numbers. A key of the seed, replicate and level alone gives the
    two matrices the same first draws, and their noise a correlation of about 1/2 entry by
    entry (the check's power)."""
    root = topics[0]
    noise = []
    for folder, out in ((root / "prepared", root / "same_key"),
                        (network / "prepared", network / "same_key")):
        prepared, private = privatize_prepared(folder, out, epsilon_over_n=1.0,
                                               simulation=True, noise_seed_base=5, replicate=0)
        noise.append((private.y_tilde - _dense(canonical_counts(prepared).counts)).ravel())
    n = min(a.size for a in noise)
    assert abs(np.corrcoef(noise[0][:n], noise[1][:n])[0, 1]) < _tolerance(n)
    alpha = float(alpha_from_epsilon(1.0, 1.0))
    shared = [(privatize(np.zeros(a.size, dtype=np.int64), alpha,
                         rng=np.random.default_rng([5, 0, 1_000_000]))) for a in noise]
    assert np.corrcoef(shared[0][:n], shared[1][:n])[0, 1] > 0.3
