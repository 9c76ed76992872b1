"""The non-private topic chain beside tomotopy's LDA on the Enron corpus the project ships.

``python -m bench.lda [--quick] [--sweeps S] [--warm W]``: the document-word counts of the
pipeline's ``prepare_topics`` stage (``data/prepared/topics``, loaded when it is there, else
built in-process from ``data/raw/enron`` by :func:`data_prep.corpus.prepare_topics` with the
settings of ``params.yaml``), at K = 20 and K = 50, on ONE thread:

* **seconds per sweep** of ``GibbsSampler.nonprivate(y, TopicModel(K), rng=1).sweep()``
  (the known-counts engine: explicit ``theta`` (D x K) and ``phi`` (K x V), every count split
  over the topics, then the Gamma updates) and of tomotopy's collapsed Gibbs LDA
  (``LDAModel(k=K)``, ``train(1, workers=1)`` per sweep; its default priors ``alpha`` 0.1,
  ``eta`` 0.01, held fixed: ``optim_interval=0``), on documents made of the same counts; and
  of the same chain with the topics' directions summed out
  (``TopicModel(K, collapse_phi=True)``, :mod:`lpp.inference.engines.collapsed_phi`: a Gibbs
  scan of every token's topic, ``phi`` drawn only where read, so not in the timed sweeps). The
  three alternate sweep by sweep in one process (numba's compilation and ``W`` sweeps of each
  before the clock), so all see the same load; the medians of the timed sweeps, their ratios,
  and tokens per second;
* **topic quality** after the same ``S`` sweeps: the mean NPMI over topics of each method's
  top-10 words per topic (:func:`lpp.metrics.npmi`, both conventions of the pipeline's topic
  scores: a pair that never co-occurs scores -1, or 0), with the corpus itself as the
  reference. lpp's topics are its last draw of ``phi`` (for ``collapse_phi``, the draw from
  its conditional at the last sweep), tomotopy's its last topic-word distribution.

``--corpus reuters`` runs the same on a generated corpus of the Reuters corpus's shape (long
documents: 395 x 4,258, about 84,000 tokens in 59,000 non-zero entries;
:func:`bench.estimators.reuters_like`, the words that no document uses left out, the others
named ``w0``, ``w1``, ...) and writes
``bench/results/lda_reuters.json``. There the topics' Gamma draws weigh: the chain draws every
``phi[k, v]`` each sweep, K x V = 85,000 Gamma variates at K = 20 whether or not the word has
tokens in the topic, against 59,000 entries to allocate, where tomotopy's collapsed sampler
has no ``phi`` to draw, nor has the ``collapse_phi`` chain. The column ``phi ms`` times those
draws alone, alternating with the
sweeps (:func:`lpp.inference.kernels.gamma_matrix_kernel` on K x V counts that put each
word's tokens in its most likely topic under the chain's current ``phi``, at the rates of
the chain's ``theta``), and ``rest/tomotopy`` is the sweep without them against tomotopy's.

Without tomotopy installed the script says so and leaves its columns empty. ``--quick``: the
first 400 messages of the raw corpus through the same preparation, K = 5, a few sweeps;
nothing written. Otherwise writes ``bench/results/lda.json`` (Enron) or
``bench/results/lda_reuters.json``.
"""
from __future__ import annotations

import gzip
import os
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import scipy.sparse as sp
import yaml

from bench import RESULTS, machine, write_results
from bench.estimators import REUTERS, reuters_like
from data_prep.corpus import prepare_topics
from lpp.formats.counts import load_counts
from lpp.formats.files import MissingFileError
from lpp.inference import GibbsSampler, TopicModel
from lpp.inference.kernels import gamma_matrix_kernel
from lpp.metrics import mean_over_topics, npmi, top_words
from lpp.metrics.coherence import ReferenceCorpus

ROOT = RESULTS.parent.parent
PREPARED = ROOT / "data" / "prepared" / "topics"
#: the settings of data_prep.corpus.prepare_topics that params.yaml's prepare_topics section sets
_SETTINGS = ("n_docs", "min_tokens", "vocab_size", "max_df", "min_token_length", "stop_words",
             "body_rule", "seed")
#: messages of the raw corpus that --quick prepares
_QUICK_MESSAGES = 400
N_TOP = 10


def _none(value):
    return None if value == "none" else value


def _prepare(params: dict, source=None, **overrides):
    """The pipeline's ``prepare_topics`` stage in-process (nothing written)."""
    settings = {name: params[name] for name in _SETTINGS}
    settings.update(overrides)
    return prepare_topics(ROOT / params["input"] if source is None else source,
                          fmt=params["format"], vocab=_none(params["vocab"]),
                          public_vocab=_none(params["public_vocab"]),
                          text_column=params["text_column"],
                          id_column=_none(params["id_column"]),
                          message_column=params["message_column"], **settings)


def load_corpus(quick=False):
    """``(counts (csr, D x V), words, label)``: the prepared Enron counts."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())["prepare_topics"]
    if quick:
        head = pd.read_csv(ROOT / params["input"], nrows=_QUICK_MESSAGES)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "head.csv.gz"
            with gzip.open(path, "wt", encoding="utf-8") as fh:
                head.to_csv(fh, index=False)
            result = _prepare(params, path, n_docs=None, vocab_size=300)
        return (result.counts.tocsr(), list(result.vocabulary),
                f"the first {_QUICK_MESSAGES} messages of {params['input']}")
    try:
        data = load_counts(PREPARED)
        return data.counts.tocsr(), list(data.column_ids), str(PREPARED.relative_to(ROOT))
    except MissingFileError:
        result = _prepare(params)
        return (result.counts.tocsr(), list(result.vocabulary),
                f"{params['input']}, prepared in-process")


def reuters_corpus():
    """``(counts (csr), words, label)``: the generated corpus of the Reuters corpus's shape."""
    dense = reuters_like()
    dense = dense[:, dense.sum(axis=0) > 0]  # a word no document uses has no coherence
    counts = sp.csr_matrix(dense)
    words = [f"w{j}" for j in range(counts.shape[1])]
    return counts, words, (f"a generated corpus of the Reuters corpus's shape "
                           f"({REUTERS[0]} x {REUTERS[1]}, bench.estimators.reuters_like)")


def phi_draws(chain, counts):
    """One K x V Gamma draw of the topics at the chain's current point (a callable): each
    word's tokens in its most likely topic, the rates those of the chain's ``theta``."""
    phi, theta = chain.state["phi"], chain.state["theta"]
    model = chain.model
    word_totals = np.asarray(counts.sum(axis=0)).ravel().astype(np.int64)
    topic_word = np.zeros(phi.shape, dtype=np.int64)
    topic_word[np.argmax(phi, axis=0), np.arange(phi.shape[1])] = word_totals
    rate = np.ascontiguousarray(np.broadcast_to(
        (model.b0 + theta.sum(axis=0))[:, None], phi.shape))
    calls = iter(range(1, 2**31))
    return lambda: gamma_matrix_kernel(topic_word, model.a0, rate, 7, next(calls))


def tomotopy_model(counts, words, k, seed=1):
    """tomotopy's LDA over documents made of ``counts`` (None when tomotopy is missing)."""
    try:
        import tomotopy  # noqa: PLC0415 (optional: the comparison is left out without it)
    except ImportError:
        return None
    model = tomotopy.LDAModel(k=k, seed=seed)
    model.optim_interval = 0  # the priors held fixed, as lpp's
    for d in range(counts.shape[0]):
        lo, hi = counts.indptr[d], counts.indptr[d + 1]
        doc = [words[v] for v, n in zip(counts.indices[lo:hi], counts.data[lo:hi])
               for _ in range(int(n))]
        model.add_doc(doc)
    model.train(0, workers=1)
    return model


def tomotopy_topics(model, words):
    """tomotopy's topic-word distributions as a K x V array in the corpus's column order."""
    column = {w: j for j, w in enumerate(words)}
    used = [column[w] for w in model.used_vocabs]
    phi = np.zeros((model.k, len(words)))
    for t in range(model.k):
        phi[t, used] = model.get_topic_word_dist(t)
    return phi


def npmi_scores(phi, reference) -> dict:
    top = top_words(phi, N_TOP)
    return {"npmi": float(mean_over_topics(npmi(top, reference))),
            "npmi_zero": float(mean_over_topics(npmi(top, reference, no_cooccurrence=0.0)))}


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run_k(counts, words, k, n_sweeps, n_warm, reference) -> dict:
    """One K: both chains from their starts, ``n_sweeps`` sweeps each alternating, the sweeps
    after the first ``n_warm`` timed, then NPMI."""
    dense = counts.toarray()
    chain = GibbsSampler.nonprivate(dense, TopicModel(k), rng=1)
    collapsed = GibbsSampler.nonprivate(dense, TopicModel(k, collapse_phi=True), rng=1)
    model = tomotopy_model(counts, words, k)
    lpp_times, tomo_times, phi_times, collapsed_times = [], [], [], []
    for i in range(n_sweeps):
        t_lpp = _timed(chain.sweep)
        t_phi = _timed(phi_draws(chain, counts))
        t_collapsed = _timed(collapsed.sweep)
        t_tomo = _timed(lambda: model.train(1, workers=1)) if model is not None else None
        if i >= n_warm:
            lpp_times.append(t_lpp)
            phi_times.append(t_phi)
            collapsed_times.append(t_collapsed)
            tomo_times.append(t_tomo)
    tokens = int(counts.sum())
    collapsed_seconds = float(np.median(collapsed_times))
    row = {"K": k, "sweeps": n_sweeps, "timed": len(lpp_times), "engine": chain.engine,
           "lpp": {"seconds": float(np.median(lpp_times)), "all": lpp_times,
                   "phi_draw_seconds": float(np.median(phi_times)),
                   "tokens_per_second": tokens / float(np.median(lpp_times)),
                   **npmi_scores(chain.state["phi"], reference)},
           # its topics: the draw of phi from its conditional at the last sweep
           "collapsed_phi": {"engine": collapsed.engine, "seconds": collapsed_seconds,
                             "all": collapsed_times,
                             "tokens_per_second": tokens / collapsed_seconds,
                             **npmi_scores(collapsed.state["phi"], reference)}}
    if model is not None:
        seconds = float(np.median(tomo_times))
        row["tomotopy"] = {"seconds": seconds, "all": tomo_times,
                           "tokens_per_second": tokens / seconds,
                           **npmi_scores(tomotopy_topics(model, words), reference)}
        row["lpp_over_tomotopy"] = row["lpp"]["seconds"] / seconds
        row["rest_over_tomotopy"] = (row["lpp"]["seconds"]
                                     - row["lpp"]["phi_draw_seconds"]) / seconds
        row["collapsed_phi_over_tomotopy"] = collapsed_seconds / seconds
    return row


def _version(name):
    try:
        return __import__(name).__version__
    except ImportError:
        return None


def main(argv=()) -> dict:
    argv = list(argv)
    quick = "--quick" in argv
    n_sweeps = int(argv[argv.index("--sweeps") + 1]) if "--sweeps" in argv else (
        6 if quick else 200)
    n_warm = int(argv[argv.index("--warm") + 1]) if "--warm" in argv else (
        2 if quick else 50)
    ks = (5,) if quick else (20, 50)
    corpus = argv[argv.index("--corpus") + 1] if "--corpus" in argv else "enron"
    if corpus not in ("enron", "reuters"):
        raise SystemExit(f"--corpus must be enron or reuters, got {corpus!r}")
    counts, words, label = reuters_corpus() if corpus == "reuters" else load_corpus(quick)
    reference = ReferenceCorpus(counts)
    tomotopy_version = _version("tomotopy")
    threads_before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        load_before = [round(x, 2) for x in os.getloadavg()]
        # numba's compilation (or cache load) and tomotopy's start, outside every timing
        run_k(counts, words, ks[0], 2, 0, reference)
        rows = [run_k(counts, words, k, n_sweeps, n_warm, reference) for k in ks]
    finally:
        numba.set_num_threads(threads_before)
    result = {"machine": machine(), "corpus": label, "documents": counts.shape[0],
              "words": counts.shape[1], "tokens": int(counts.sum()), "non_zero": counts.nnz,
              "threads": 1, "tomotopy": tomotopy_version, "load_before": load_before,
              "load_after": [round(x, 2) for x in os.getloadavg()], "rows": rows}
    print(f"non-private lpp vs tomotopy LDA on {label}: {counts.shape[0]} documents x "
          f"{counts.shape[1]} words, {result['tokens']:,} tokens in {counts.nnz:,} non-zero "
          f"entries; one thread; median of {n_sweeps - n_warm} alternating sweeps after "
          f"{n_warm}; NPMI of the top {N_TOP} words after {n_sweeps} sweeps "
          f"(load {load_before} before, {result['load_after']} after)")
    if tomotopy_version is None:
        print("  tomotopy is not installed (pip install tomotopy): its columns are left empty")
    else:
        print(f"  tomotopy {tomotopy_version}: LDAModel(k=K, optim_interval=0), "
              "train(1, workers=1) per sweep")
    print(f"  {'K':>3} {'lpp ms':>8} {'phi ms':>7} {'collapsed ms':>13} {'tomotopy ms':>12} "
          f"{'lpp/tomotopy':>13} {'rest/tomotopy':>14} {'collapsed/tomotopy':>19} "
          f"{'lpp Mtok/s':>11} {'tomotopy Mtok/s':>16} {'NPMI lpp':>9} {'NPMI collapsed':>15} "
          f"{'NPMI tomotopy':>14} {'NPMI(0) lpp':>12} {'NPMI(0) collapsed':>18} "
          f"{'NPMI(0) tomotopy':>17}")
    for row in rows:
        lpp_row, tomo, col = row["lpp"], row.get("tomotopy"), row["collapsed_phi"]

        def cell(value, width, fmt):
            return f"{'-':>{width}}" if value is None else f"{value:{width}{fmt}}"

        print(f"  {row['K']:>3} {lpp_row['seconds'] * 1e3:8.2f} "
              f"{lpp_row['phi_draw_seconds'] * 1e3:7.2f} {col['seconds'] * 1e3:13.2f} "
              f"{cell(tomo and tomo['seconds'] * 1e3, 12, '.2f')} "
              f"{cell(row.get('lpp_over_tomotopy'), 13, '.2f')} "
              f"{cell(row.get('rest_over_tomotopy'), 14, '.2f')} "
              f"{cell(row.get('collapsed_phi_over_tomotopy'), 19, '.2f')} "
              f"{lpp_row['tokens_per_second'] / 1e6:11.1f} "
              f"{cell(tomo and tomo['tokens_per_second'] / 1e6, 16, '.1f')} "
              f"{lpp_row['npmi']:9.3f} {col['npmi']:15.3f} "
              f"{cell(tomo and tomo['npmi'], 14, '.3f')} "
              f"{lpp_row['npmi_zero']:12.3f} {col['npmi_zero']:18.3f} "
              f"{cell(tomo and tomo['npmi_zero'], 17, '.3f')}")
    if not quick:
        name = "lda_reuters" if corpus == "reuters" else "lda"
        print(f"wrote {write_results(name, result)}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
