"""Speed of lpp.metrics at the paper's scale: ``python -m bench.metrics``.

A 10,000 x 10,000 sparse corpus (~2.5M non-zeros) scored with 50 topics x 10 words,
plus the other metrics at matching sizes (``--quick``: 1,000 x 1,000, nothing written). Prints a table (median of repeats) and writes
``bench/results/metrics.json`` (atomically).
"""
from __future__ import annotations

import sys
import time

import numpy as np
import scipy.sparse as sp

from bench import machine, write_results
from lpp.metrics import (
    ReferenceCorpus,
    align_topics,
    mae,
    mimno_coherence,
    npmi,
    top_words,
)

REPEATS = 5


def random_corpus(n_docs: int, n_words: int, nnz_per_doc: int, rng) -> sp.csr_array:
    """Sparse counts with Zipf-like word popularity (a few words in many documents)."""
    popularity = 1.0 / np.arange(1, n_words + 1) ** 0.5
    popularity /= popularity.sum()
    rows = np.repeat(np.arange(n_docs), nnz_per_doc)
    cols = rng.choice(n_words, size=rows.size, p=popularity)
    data = rng.geometric(0.6, size=rows.size)
    return sp.csr_array((data, (rows, cols)), shape=(n_docs, n_words))


def median_seconds(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(quick: bool = False) -> None:
    rng = np.random.default_rng(2019)
    n = 1_000 if quick else 10_000
    counts = random_corpus(n, n, 260, rng)
    phi = rng.gamma(0.1, 1.0, size=(50, n))
    topics = top_words(phi, 10)
    corpus = ReferenceCorpus(counts)
    # the most frequent words as top words: dense co-occurrence (BLAS-path territory)
    common = np.argsort(-corpus.document_frequency, kind="stable")[:500].reshape(50, 10)
    phi_true = rng.gamma(0.1, 1.0, size=(50, n))
    phi_hat = phi_true[rng.permutation(50)] * rng.gamma(20, 1 / 20, size=phi_true.shape)
    mu_hat = rng.gamma(1.0, 1.0, size=(n // 5, n))
    y_sparse = counts[:n // 5]
    held_out = rng.random(mu_hat.shape) < 0.05

    cases = [
        ("ReferenceCorpus(counts) [validate + binary CSC]", lambda: ReferenceCorpus(counts)),
        ("npmi(raw counts)", lambda: npmi(topics, counts)),
        ("mimno_coherence(raw counts)", lambda: mimno_coherence(topics, counts)),
        ("npmi + mimno (prebuilt ReferenceCorpus)",
         lambda: (npmi(topics, corpus), mimno_coherence(topics, corpus))),
        ("npmi + mimno, 500 most common words (prebuilt)",
         lambda: (npmi(common, corpus), mimno_coherence(common, corpus))),
        ("top_words(phi 50 x 10k, n=10)", lambda: top_words(phi, 10)),
        ("align_topics(50 x 10k, hellinger)", lambda: align_topics(phi_hat, phi_true)),
        ("mae(mu 2k x 10k, sparse y)", lambda: mae(mu_hat, y_sparse)),
        ("mae(mu 2k x 10k, sparse y, dense mask)", lambda: mae(mu_hat, y_sparse, held_out)),
    ]
    npmi(topics, corpus)  # warm-up (imports, caches)
    rows = [(name, median_seconds(fn)) for name, fn in cases]

    width = max(len(name) for name, _ in rows)
    print(f"corpus: {counts.shape[0]} x {counts.shape[1]}, nnz={counts.nnz}; median of {REPEATS}")
    print(f"{'case':<{width}}  seconds")
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:8.4f}")

    if quick:  # a smoke test: the committed results stay
        return
    target = write_results(
        "metrics",
        {
            "benchmark": "metrics",
            "corpus_shape": list(counts.shape),
            "corpus_nnz": int(counts.nnz),
            "topics": list(topics.shape),
            "repeats": REPEATS,
            "machine": machine(),
            "median_seconds": {name: seconds for name, seconds in rows},
        },
    )
    print(f"wrote {target}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
