"""What a fitted ``PrivateTopicModel`` weighs and what its fit costs in memory, beside
scikit-learn's ``LatentDirichletAllocation``.

    python -m bench.estimators [--n-iter N] [--quick]

Two corpora drawn from an LDA-like model with fixed seeds (no download: the shapes are those
of the Reuters corpus that the ``lda`` package ships, and of a larger sparse corpus):

* **Reuters-shaped**: 395 documents x 4,258 words, about 84,000 tokens (long documents: 213
  tokens on average, lognormal lengths), 20 topics over Zipf-like word frequencies. A
  non-private fit at K = 20 with the estimator's defaults but ``n_iter`` (``N``, default 200
  sweeps instead of 1,000, so that the run takes seconds); the same keeping every draw from
  the first sweep on (``keep_samples=True, burn_in=0``: what a fit held before samples were
  kept only on request); and ``LatentDirichletAllocation(n_components=20)`` with its
  defaults. For each: ``len(pickle.dumps(est))`` and the fit's peak memory.
* **sparse**: 4,000 documents x 20,000 words, 400,000 non-zero counts (100 distinct words per
  document, 1 + Poisson(1) tokens each), given as a CSR matrix. A non-private fit of 3 sweeps
  at K = 20 beside ``LatentDirichletAllocation(n_components=20, max_iter=3)``: the fit's peak
  memory. lpp's fit runs on the CSR matrix as it is (the known-counts engine).
* **privatized**: the sparse corpus's kind at 1,000 and 2,000 documents x 5,000 words (100
  distinct words per document), privatized at epsilon/N = 1 (``alpha = exp(-1)``: dense int64
  counts, of which about 30% positive), fitted by ``method="collapsed"`` for 3 sweeps at
  K = 20: the fit's peak memory per entry of the data, and the growth from the smaller to the
  larger corpus per entry added (what privatized counts cost beyond a fixed part).

Each fit runs in a fresh interpreter that has imported both libraries, generated the data and
run a small fit of the same kind (numba's kernels loaded, scikit-learn's lazy imports done)
before the measurement starts. Peak memory two ways: the growth of the process's resident
set during the fit (``VmHWM`` after it, reset before it through ``/proc/self/clear_refs``,
minus ``VmRSS`` before it: every allocation, numba's and BLAS's included) and ``tracemalloc``'s
peak (the allocations Python and numpy make; not those made inside numba's compiled code).
Prints one table per corpus; writes ``bench/results/estimators.json``. ``--quick`` runs small
corpora (and a few sweeps) the same way and writes nothing.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp

from bench import RESULTS, machine, write_results
from bench.memory import process_memory
from lpp.mechanism import privatize

ROOT = RESULTS.parent.parent

#: (documents, words, tokens, topics) of the Reuters-shaped corpus; --quick's below
REUTERS = (395, 4258, 84_000, 20)
QUICK_REUTERS = (40, 300, 8_000, 5)
#: (documents, words, distinct words per document) of the sparse corpus; --quick's below
SPARSE = (4000, 20_000, 100)
QUICK_SPARSE = (200, 2000, 20)
#: the two privatized corpora (documents, words, distinct words per document); --quick's below
PRIVATE = ((1000, 5000, 100), (2000, 5000, 100))
QUICK_PRIVATE = ((100, 1000, 20), (200, 1000, 20))
#: the noise level of the privatized corpora: epsilon / N = 1
PRIVATE_ALPHA = float(np.exp(-1.0))
#: the pickle size the default fit of the Reuters-shaped corpus should stay under, and the
#: sparse fit's peak against scikit-learn's
PICKLE_TARGET_MB = 5.0
SPARSE_PEAK_RATIO_TARGET = 3.0
MB = 1_000_000  # bytes: decimal megabytes, as file sizes are usually given


# ----- the corpora -----------------------------------------------------------------------------

def _topics(rng, n_topics: int, n_words: int) -> np.ndarray:
    """Topics as Dirichlet draws around Zipf-like word frequencies (each topic favours its
    own words; every word keeps some mass)."""
    base = 1.0 / np.arange(1, n_words + 1) ** 1.05
    base /= base.sum()
    phi = np.stack([rng.dirichlet(0.05 + base[rng.permutation(n_words)] * n_words * 0.5)
                    for _ in range(n_topics)])
    return 0.98 * phi + 0.02 * base  # a background every topic shares


def reuters_like(shape=REUTERS, seed=0) -> np.ndarray:
    """A dense ``D x V`` int64 count matrix of the Reuters corpus's shape, from LDA's
    generative process (topic proportions ~ Dirichlet(0.1), lognormal document lengths)."""
    n_docs, n_words, n_tokens, n_topics = shape
    rng = np.random.default_rng(seed)
    phi = _topics(rng, n_topics, n_words)
    lengths = rng.lognormal(0.0, 0.7, n_docs)
    lengths = np.maximum(1, np.round(lengths * n_tokens / lengths.sum())).astype(np.int64)
    theta = rng.dirichlet(np.full(n_topics, 0.1), n_docs)
    counts = np.empty((n_docs, n_words), dtype=np.int64)
    for d in range(n_docs):
        p = theta[d] @ phi
        counts[d] = rng.multinomial(lengths[d], p / p.sum())
    return counts


def sparse_corpus(shape=SPARSE, seed=1):
    """A CSR int64 count matrix: each document ``per_doc`` distinct words drawn without
    replacement from its LDA mixture (Gumbel top-k), each with 1 + Poisson(1) tokens."""
    n_docs, n_words, per_doc = shape
    rng = np.random.default_rng(seed)
    phi = _topics(rng, 20, n_words)
    theta = rng.dirichlet(np.full(20, 0.1), n_docs)
    cols = np.empty((n_docs, per_doc), dtype=np.int64)
    block = 250  # rows at a time: the keys of a block are block x V floats
    for lo in range(0, n_docs, block):
        keys = np.log(theta[lo:lo + block] @ phi)
        keys += rng.gumbel(size=keys.shape)
        top = np.argpartition(-keys, per_doc - 1, axis=1)[:, :per_doc]
        cols[lo:lo + block] = np.sort(top, axis=1)
    values = 1 + rng.poisson(1.0, n_docs * per_doc)
    indptr = np.arange(0, n_docs * per_doc + 1, per_doc)
    return sp.csr_matrix((values.astype(np.int64), cols.ravel(), indptr),
                         shape=(n_docs, n_words))


# ----- one fit in a fresh interpreter ------------------------------------------------------------

# scikit-learn takes seconds to import, and lpp.estimators imports it: both are loaded by the
# functions that fit an estimator, not with this module, whose corpora bench.lda reads too

def _estimator(kind: str, settings: dict):
    if kind == "sklearn":
        from sklearn.decomposition import LatentDirichletAllocation  # noqa: PLC0415

        return LatentDirichletAllocation(**settings)
    from lpp.estimators import PrivateTopicModel  # noqa: PLC0415

    return PrivateTopicModel(**settings)


def _child(spec: dict) -> dict:
    """Fit one estimator as ``spec`` says, measured; run in a fresh interpreter."""
    # both libraries loaded in every child before it measures: the same base for both
    import lpp.estimators  # noqa: F401, PLC0415
    import sklearn.decomposition  # noqa: F401, PLC0415

    if spec["corpus"] == "reuters":
        data = reuters_like(tuple(spec["shape"]))
    elif spec["corpus"] == "private":
        data = privatize(sparse_corpus(tuple(spec["shape"])), PRIVATE_ALPHA, rng=2)
    else:
        data = sparse_corpus(tuple(spec["shape"]))
    # the same kind of fit, short and on a small slice, first: numba's kernels loaded (or
    # compiled), scikit-learn's lazy imports done, so that the measurement holds the fit
    # alone; short, so that the memory it frees (which the allocator may keep) is small
    short = ({"n_iter": 4, "burn_in": 0} if spec["kind"] == "lpp" else {"max_iter": 1})
    _estimator(spec["kind"], {**spec["settings"], **short}).fit(data[:20])
    gc.collect()
    measure_rss = os.path.exists("/proc/self/clear_refs")
    if measure_rss:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # resets the peak resident set (VmHWM) to the current one
    before = process_memory("VmRSS", "VmHWM") if measure_rss else {}
    est = _estimator(spec["kind"], spec["settings"])
    tracemalloc.start()
    start = time.perf_counter()
    est.fit(data)
    seconds = time.perf_counter() - start
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after = process_memory("VmRSS", "VmHWM") if measure_rss else {}
    held = len(pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL))
    return {"seconds": seconds, "pickle_bytes": held, "traced_peak_bytes": traced,
            "rss_peak_bytes": (after["VmHWM"] - before["VmRSS"]) if measure_rss else None,
            "rss_before_bytes": before.get("VmRSS")}


def measure(spec: dict) -> dict:
    """:func:`_child` of ``spec`` in a fresh interpreter (one numba thread per core, as
    configured)."""
    done = subprocess.run([sys.executable, "-m", "bench.estimators", "--child", json.dumps(spec)],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the measurement of {spec} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ----- the runs ----------------------------------------------------------------------------------

def _lpp(**settings) -> dict:
    # progress off: the children's output is read as JSON
    return {"method": "nonprivate", "random_state": 0, "progress": False, **settings}


def _has_keep_samples() -> bool:
    from lpp.estimators import PrivateTopicModel  # noqa: PLC0415

    return "keep_samples" in PrivateTopicModel().get_params()


def reuters_rows(shape, n_iter: int) -> list:
    k = shape[3]
    cases = [("lpp, defaults", "lpp", _lpp(n_components=k, n_iter=n_iter))]
    if _has_keep_samples():
        cases.append(("lpp, every draw kept (keep_samples=True, burn_in=0)", "lpp",
                      _lpp(n_components=k, n_iter=n_iter, keep_samples=True, burn_in=0)))
    cases.append((f"sklearn LDA(n_components={k})", "sklearn",
                  {"n_components": k, "random_state": 0}))
    return [{"fit": name, **measure({"corpus": "reuters", "shape": list(shape), "kind": kind,
                                     "settings": settings})}
            for name, kind, settings in cases]


def sparse_rows(shape, n_iter: int) -> list:
    cases = [(f"lpp, {n_iter} sweeps", "lpp", _lpp(n_components=20, n_iter=n_iter)),
             (f"sklearn LDA(n_components=20, max_iter={n_iter})", "sklearn",
              {"n_components": 20, "max_iter": n_iter, "random_state": 0})]
    return [{"fit": name, **measure({"corpus": "sparse", "shape": list(shape), "kind": kind,
                                     "settings": settings})}
            for name, kind, settings in cases]


def private_rows(shapes) -> list:
    settings = _lpp(n_components=20, n_iter=3, method="collapsed", alpha=PRIVATE_ALPHA)
    return [{"fit": f"lpp collapsed, {shape[0]:,} x {shape[1]:,}, 3 sweeps",
             "entries": shape[0] * shape[1],
             **measure({"corpus": "private", "shape": list(shape), "kind": "lpp",
                        "settings": settings})}
            for shape in shapes]


def _mb(value):
    return "-" if value is None else f"{value / MB:9.1f}"


def _table(title: str, rows: list) -> None:
    print(title)
    print(f"{'fit':<56} {'seconds':>8} {'pickle MB':>9} {'RSS peak MB':>11} "
          f"{'traced MB':>9}")
    for row in rows:
        print(f"{row['fit']:<56} {row['seconds']:8.2f} {_mb(row['pickle_bytes'])} "
              f"{_mb(row['rss_peak_bytes']):>11} {_mb(row['traced_peak_bytes'])}")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.estimators", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-iter", type=int, default=200,
                        help="sweeps of the Reuters-shaped fits (default 200)")
    parser.add_argument("--quick", action="store_true", help="small corpora; nothing written")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(json.loads(args.child))))
        return {}
    reuters_shape = QUICK_REUTERS if args.quick else REUTERS
    sparse_shape = QUICK_SPARSE if args.quick else SPARSE
    n_iter = 10 if args.quick else args.n_iter
    load_before = os.getloadavg()[0]
    reuters = reuters_rows(reuters_shape, n_iter)
    sparse = sparse_rows(sparse_shape, 3)
    private = private_rows(QUICK_PRIVATE if args.quick else PRIVATE)
    load_after = os.getloadavg()[0]
    counts = reuters_like(reuters_shape)
    _table(f"Reuters-shaped corpus: {counts.shape[0]:,} x {counts.shape[1]:,}, "
           f"{int(counts.sum()):,} tokens in {np.count_nonzero(counts):,} non-zero entries; "
           f"non-private, K = {reuters_shape[3]}, {n_iter} sweeps", reuters)
    print()
    _table(f"Sparse corpus: {sparse_shape[0]:,} x {sparse_shape[1]:,}, "
           f"{sparse_shape[0] * sparse_shape[2]:,} non-zero entries (CSR); non-private, K = 20",
           sparse)
    print()
    _table("Privatized corpora (epsilon/N = 1, dense int64); collapsed, K = 20", private)
    per_entry = [row["rss_peak_bytes"] / row["entries"] for row in private
                 if row["rss_peak_bytes"] is not None]
    small, large = private
    added = (None if small["rss_peak_bytes"] is None else
             (large["rss_peak_bytes"] - small["rss_peak_bytes"])
             / (large["entries"] - small["entries"]))
    traced_added = ((large["traced_peak_bytes"] - small["traced_peak_bytes"])
                    / (large["entries"] - small["entries"]))
    if per_entry:
        print("privatized fit's peak per entry: "
              + ", ".join(f"{b:.1f}" for b in per_entry) + " bytes; per entry added: "
              f"{added:.1f} bytes (RSS), {traced_added:.1f} bytes (traced)")
    default = reuters[0]
    lda = sparse[-1]["rss_peak_bytes"]
    ratio = (sparse[0]["rss_peak_bytes"] / lda) if lda else None
    print()
    print(f"pickle of the default fit: {default['pickle_bytes'] / MB:.2f} MB "
          f"(target <= {PICKLE_TARGET_MB:g} MB)")
    if ratio is not None:
        print(f"sparse fit's peak over scikit-learn's: {ratio:.1f}x "
              f"(target <= {SPARSE_PEAK_RATIO_TARGET:g}x)")
    print(f"load average {load_before:.1f} before, {load_after:.1f} after")
    result = {"machine": machine(), "n_iter": n_iter, "reuters_shape": list(reuters_shape),
              "reuters_tokens": int(counts.sum()), "reuters_nonzero": int(np.count_nonzero(counts)),
              "sparse_shape": list(sparse_shape), "reuters": reuters, "sparse": sparse,
              "private": private, "private_alpha": PRIVATE_ALPHA,
              "private_bytes_per_entry_added": added,
              "private_traced_bytes_per_entry_added": traced_added,
              "pickle_target_mb": PICKLE_TARGET_MB, "sparse_peak_ratio": ratio,
              "sparse_peak_ratio_target": SPARSE_PEAK_RATIO_TARGET,
              "load_before": load_before, "load_after": load_after}
    if not args.quick:
        print(f"wrote {write_results('estimators', result)}")
    return result


if __name__ == "__main__":
    main()
