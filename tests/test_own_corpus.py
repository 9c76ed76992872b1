"""Swapping the corpus is a change of parameters: the pipeline, end to end, on a user's corpus.

A temporary copy of the repository (the pipeline, the notebooks and the two packages only)
gets a small corpus of its own — a few dozen documents in a text file, one per line, for the
topic model and a weighted edge list for the network — and a params file that points the prepare stages at it, with
tiny sizes and sweeps. ``dvc repro`` of the two report stages must then run every stage
from preparation to the score tables and figures without any edit of ``dvc.yaml``, and
name what it made by the data set (``prepare_*.dataset``, ``dataset_label``).

Then the data set is switched: another sample of the corpus under another name is run, and
the params file is put back. ``dvc repro`` must restore the first data set's outputs from
DVC's cache (its run-cache: a stage whose command, inputs and settings match an earlier run
is checked out, not run), every file byte for byte as the first run left it.

Kept fast: one privacy level, one replicate, one private method, a few sweeps, one numba
thread; the synthetic stages are not asked for. It still starts two dozen notebook kernels,
each compiling the samplers it uses, so it is marked slow (about three minutes on 2 cores).
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from data_prep import load_counts
from lpp.evaluation import ORACLE, ZEROS
from study.notebook import check_settings

ROOT = Path(__file__).resolve().parents[1]
#: what the pipeline needs from the repository (outputs, data and the DVC cache stay behind)
PIPELINE_FILES = ("dvc.yaml", "notebooks", "lpp", "data_prep", "study")
CORPUS = "data/raw/mine"
#: two vocabularies, so that the corpus has topics to find
WORDS = ("gas pipeline power plant tariff supply demand traders capacity volume",
         "lunch pizza salad friday cafeteria menu pasta monday coffee dessert")
ACTORS = [f"user{i}@example.com" for i in range(6)]
#: the user's data set, and the one the test switches to and back from
DATASET, LABEL = "mine", "My mail"
OTHER = "other"
#: where the pipeline writes; a switch of data sets must leave them as they were
OUTPUT_DIRS = ("data/prepared", "data/private", "results", "figures")


def write_text_lines(path, n_docs=36, seed=0):
    """``n_docs`` documents, one per line (the ``text-lines`` format), each mostly about one of
    two topics."""
    rng = np.random.default_rng(seed)
    pools = [w.split() for w in WORDS]
    lines = []
    for i in range(n_docs):
        main, other = pools[i % 2], pools[1 - i % 2]
        lines.append(" ".join(list(rng.choice(main, 25)) + list(rng.choice(other, 5))))
    Path(path).write_text("\n".join(lines) + "\n")


def write_weighted_edges(path, seed=1):
    """A weighted edge list among six actors: one row per (sender, recipient) pair with the
    number of emails in a ``count`` column."""
    rng = np.random.default_rng(seed)
    rows = [(ACTORS[i], ACTORS[j], int(rng.poisson(4 if (i < 3) == (j < 3) else 1)))
            for i in range(6) for j in range(6) if i != j]
    pd.DataFrame([r for r in rows if r[2] > 0], columns=["sender", "recipient", "count"]).to_csv(
        path, sep="\t", index=False)


def tiny_params():
    """params.yaml pointed at the corpus under CORPUS, at toy scale (same keys)."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["prepare_topics"].update(
        dataset=DATASET, dataset_label=LABEL,
        corpus=CORPUS, input=f"{CORPUS}/docs.txt", format="text-lines", id_column="none",
        n_docs=30, min_tokens=10, vocab_size=15, max_df=0.9, seed=5)
    params["prepare_network"].update(
        dataset=DATASET, dataset_label=LABEL,
        corpus=CORPUS, input=f"{CORPUS}/edges.tsv", format="edges", nodes="none",
        label_column="none", type_column="none", sender_column="sender",
        recipient_column="recipient", weight_column="count", min_total=1, heldout_top=2)
    params["privacy"].update(levels=[1.0], replicates=[0])
    small = {"n_iter": 6, "burn_in": 2, "thin": 2, "methods": ["collapsed"], "replicates": [0]}
    params["topics"].update(K=2, **small)
    # the arXiv design's unmasked runs too, so that the report scores both designs
    params["network"].update(C=[2], unmasked_C=[2], **small)
    return params


def other_params():
    """Another data set: another sample of the corpus and another held-out block, renamed."""
    params = tiny_params()
    params["prepare_topics"].update(dataset=OTHER, dataset_label="Other mail", n_docs=24, seed=6)
    params["prepare_network"].update(dataset=OTHER, dataset_label="Other mail", heldout_top=1)
    return params


def output_digests(repo) -> dict[str, str]:
    """sha256 of every file the pipeline wrote, by path relative to ``repo``."""
    return {str(path.relative_to(repo)): hashlib.sha256(path.read_bytes()).hexdigest()
            for folder in OUTPUT_DIRS for path in sorted((repo / folder).rglob("*"))
            if path.is_file()}


def stage_messages(log) -> dict[str, set[str]]:
    """The stages DVC ran, restored from its run-cache, or found unchanged, from its log."""
    found = {}
    for kind, pattern in (("ran", r"Running stage '([^']+)'"),
                          ("restored", r"Stage '([^']+)' is cached - skipping run"),
                          ("unchanged", r"Stage '([^']+)' didn't change")):
        found[kind] = set(re.findall(pattern, log))
    return found


@pytest.fixture(scope="module")
def own_corpus_run(tmp_path_factory):
    repo = tmp_path_factory.mktemp("repo")
    for name in PIPELINE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, repo / name)
    (repo / CORPUS).mkdir(parents=True)
    write_text_lines(repo / CORPUS / "docs.txt")
    write_weighted_edges(repo / CORPUS / "edges.tsv")
    (repo / "params.yaml").write_text(yaml.safe_dump(tiny_params(), sort_keys=False))
    env = {**os.environ, "NUMBA_NUM_THREADS": "1", "DVC_NO_ANALYTICS": "1",
           # the stages call `python`: the interpreter running the tests, venv or not
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    # the copy, not an installed lpp, must run: the stages start in the copy's root
    env.pop("PYTHONPATH", None)
    # byte code written into lpp/ and study/ as a user's Python does: the repository's
    # .dvcignore must keep it out of the stages' inputs, or no stage could be restored
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    dvc = [sys.executable, "-m", "dvc"]
    subprocess.run(dvc + ["init", "--no-scm", "-q"], cwd=repo, env=env, check=True)
    shutil.copy2(ROOT / ".dvcignore", repo / ".dvcignore")

    def repro():
        run = subprocess.run(dvc + ["repro", "report_topics", "report_network"], cwd=repo,
                             env=env, capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
        return run.stdout + run.stderr

    log = repro()
    return repo, log, repro


@pytest.fixture(scope="module")
def switched_back(own_corpus_run):
    """The outputs of the user's data set, then those of another one and the log of the
    switch back: (digests before, digests after, log of the switch back)."""
    repo, _, repro = own_corpus_run
    before = output_digests(repo)
    mine = (repo / "params.yaml").read_text()
    (repo / "params.yaml").write_text(yaml.safe_dump(other_params(), sort_keys=False))
    repro()
    assert output_digests(repo) != before, "the other data set changed no output"
    (repo / "params.yaml").write_text(mine)
    log = repro()
    return before, output_digests(repo), log


@pytest.mark.slow
def test_a_user_corpus_runs_to_score_tables_and_figures(own_corpus_run):
    repo, log, _ = own_corpus_run
    topics = pd.read_csv(repo / f"results/eval/{DATASET}_topics.csv")
    assert set(topics.method) >= {ZEROS, ORACLE}  # the reference rows of every table
    topics = topics[~topics.method.isin([ZEROS, ORACLE])]
    assert sorted(topics.fit.unique()) == ["collapsed_cavi_eps1.0_rep0", "collapsed_eps1.0_rep0",
                                           "nonprivate"]
    # the non-private reference's chains (topics.nonprivate_chains), one row each
    chains = yaml.safe_load((repo / "params.yaml").read_text())["topics"]["nonprivate_chains"]
    assert sorted(topics.chain[topics.fit == "nonprivate"]) == list(range(chains))
    assert topics[["mae", "npmi", "coherence"]].notna().all().all()
    network = pd.read_csv(repo / f"results/eval/{DATASET}_network.csv")
    network = network[~network.method.isin([ZEROS, ORACLE])]
    assert sorted(network.fit.unique()) == [
        "collapsed_C2_eps1.0_rep0", "collapsed_C2_eps1.0_rep0_unmasked", "nonprivate_C2",
        "nonprivate_C2_unmasked"]
    unmasked = network.fit.str.endswith("_unmasked")
    assert network.heldout_used.tolist() == (~unmasked).tolist()
    assert network.loc[unmasked, "heldout_mae"].isna().all()
    assert network.loc[~unmasked, "heldout_mae"].notna().all()
    for figure in ("topics.png", "topic_words.png", "network.png"):
        assert (repo / "figures" / f"{DATASET}_{figure}").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "running over TCP" not in log


@pytest.mark.slow
def test_the_outputs_are_named_by_the_data_set(own_corpus_run):
    repo, _, _ = own_corpus_run
    made = {p.name for p in (repo / "figures").iterdir()} | {
        p.name for p in (repo / "results/eval").iterdir()}
    assert made == {f"{DATASET}_{name}" for name in (
        "topics.png", "topic_words.png", "network.png",
        "topics.csv", "topic_words.csv", "network.csv")}
    for report, case in (("report_topics", "topics"), ("report_network", "network")):
        nb = json.loads((repo / f"results/notebooks/{report}.ipynb").read_text())
        shown = [output for cell in nb["cells"] for output in cell.get("outputs", [])
                 if "text/markdown" in output.get("data", {})]
        assert "".join(shown[0]["data"]["text/markdown"]) == f"## {LABEL} (`{DATASET}`): {case}"


@pytest.mark.slow
def test_the_topics_as_words_are_aligned_to_the_nonprivate_fit(own_corpus_run):
    repo, _, _ = own_corpus_run
    words = pd.read_csv(repo / f"results/eval/{DATASET}_topic_words.csv")
    assert list(dict.fromkeys(words.fit)) == [
        "nonprivate", "collapsed_cavi_eps1.0_rep0", "collapsed_eps1.0_rep0"]
    vocabulary = set(" ".join(WORDS).split())
    for _, fit in words.groupby("fit"):
        assert sorted(fit.topic) == sorted(fit.fitted_topic) == [0, 1]  # one to one, K = 2
        assert all(set(w.split()) <= vocabulary and len(w.split()) == 10 for w in fit.words)
    reference = words[words.fit == "nonprivate"]
    assert (reference.distance == 0).all() and (reference.topic == reference.fitted_topic).all()
    assert words.distance.between(0, 1).all()


@pytest.mark.slow
def test_switching_back_restores_the_outputs_from_the_cache(switched_back):
    before, after, log = switched_back
    # the other data set's outputs stay beside them under their own names
    assert {path for path in after if OTHER in Path(path).name} >= {
        f"figures/{OTHER}_topics.png", f"results/eval/{OTHER}_network.csv"}
    stages = stage_messages(log)
    assert not stages["ran"], f"stages run again instead of restored: {sorted(stages['ran'])}"
    assert {path: after.get(path) for path in before} == before
    assert {"prepare_topics", "prepare_network", "report_topics",
            "report_network"} <= stages["restored"]


@pytest.mark.slow
def test_the_prepared_data_come_from_the_user_corpus(own_corpus_run):
    repo, _, _ = own_corpus_run
    topics = load_counts(repo / "data/prepared/topics")
    assert topics.meta["params"]["format"] == "text-lines"
    assert topics.meta["inputs"]["input"]["name"] == "docs.txt"
    assert topics.counts.shape[0] == 30 and set(topics.column_ids) <= set(" ".join(WORDS).split())
    network = load_counts(repo / "data/prepared/network")
    assert network.row_ids == ACTORS and network.meta["inputs"]["input"]["name"] == "edges.tsv"
    edges = pd.read_csv(repo / CORPUS / "edges.tsv", sep="\t")
    assert network.counts.sum() == edges["count"].sum()  # each row adds its weight, not 1
    assert not (repo / "data/raw/enron").exists()  # nothing of the shipped corpus was needed


@pytest.mark.slow
def test_the_claims_give_a_pattern_table_without_the_papers_verdicts(own_corpus_run):
    repo, _, _ = own_corpus_run
    run = subprocess.run([sys.executable, "-m", "study.claims", "--results", "results",
                          "--out", "results"], cwd=repo, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    claims = json.loads((repo / "results" / "claims.json").read_text())
    pattern = claims["pattern"]
    assert pattern and {p["dataset"] for p in pattern} == {DATASET}
    assert all("status" not in p and "paper" not in p for p in pattern)
    judged_cases = {c["id"].split(".")[1] for c in claims["claims"]}
    assert not judged_cases & {"fig4", "fig5"}   # no Enron verdict on the user's data
    text = (repo / "results" / "claims.md").read_text()
    assert f"`{DATASET}`" in text.split("## Patterns on other data")[1]


def _page_yaml_blocks(page="docs/own_corpus.md") -> list[dict]:
    text = (ROOT / page).read_text()
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def test_the_pages_settings_are_params_yaml_keys_and_agree():
    """Each YAML block of the page names only keys params.yaml has, in its sections, and the
    small settings it offers, put over params.yaml, pass the runner's consistency checks."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    blocks = _page_yaml_blocks()
    assert len(blocks) >= 2
    for block in blocks:
        for section, values in block.items():
            assert section in params, f"docs/own_corpus.md names a section {section!r}"
            unknown = set(values) - set(params[section])
            assert not unknown, f"docs/own_corpus.md: {section} has no {sorted(unknown)}"
    small = next(block for block in blocks if "diagnose" in block)
    merged = {**params, **{section: {**params[section], **values}
                           for section, values in small.items()}}
    check_settings(merged, source="docs/own_corpus.md")
