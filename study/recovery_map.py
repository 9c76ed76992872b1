"""The topic-recovery map: who recovers the synthetic topics, over document size x noise level.

Each cell of the map is a document length (expected tokens per document,
``lpp.simulate.make_topics(doc_length=...)``) and a mean noise level ``alpha0`` (each
document's ``alpha_d ~ Beta(c alpha0, c (1 - alpha0))``, as in the synthetic topics figure).
For each seed the corpus is drawn once per document length (keyed by ``(seed, length)``), so
along ``alpha0`` only the privacy changes; it is privatized per cell (keyed by
``(seed, length, alpha0)``), and each chain is seeded by ``(seed, length, alpha0, chain)``:
chains are independent, and a cell's runs do not depend on which other cells the map holds.
The three methods of a chain share its seed.

Every run is scored by :func:`lpp.evaluation.topic_recovery_scores`. A method *recovers* the
topics of a cell when, in more than half of the cell's seeds x chains, the support score of
its aligned posterior mean is at least halfway from uniform topics' score
(``words_per_topic / V``) to the true topics' own (:func:`recovery_threshold`).
"""
from __future__ import annotations

import numpy as np

from lpp.evaluation import topic_recovery_scores, topic_support
from lpp.inference import RunOptions, TopicModel, fit_nonprivate, fit_private
from lpp.mechanism import privatize
from lpp.simulate import make_topics
from study.figures import method_label

#: the methods of the map: ours, the naive method, and the non-private fit of the true counts
METHODS = ("collapsed", "naive", "nonprivate")
#: the scores of every run (``lpp.evaluation.topic_recovery_scores``)
SCORES = ("mean_support", "draw_support", "mean_hellinger", "draw_hellinger")
#: own words per topic of ``make_topics``' default corpus
WORDS_PER_TOPIC = 5


def _key(value: float) -> int:
    # settings enter the seed as whole thousandths: 0.8 and 0.80000001 are the same cell
    return int(round(float(value) * 1000))


def _chain_seed(seed: int, doc_length: float, alpha0: float, chain: int) -> int:
    entropy = [int(seed), _key(doc_length), _key(alpha0), 1 + int(chain)]
    return int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0] >> np.uint64(1))


def recovery_threshold(true_phi, words_per_topic: int = WORDS_PER_TOPIC) -> dict:
    """Uniform topics' support score, the truth's, and halfway between them (the criterion)."""
    n_topics, n_words = np.shape(true_phi)
    uniform = topic_support(np.ones((n_topics, n_words)), true_phi,
                            words_per_topic=words_per_topic)
    truth = topic_support(true_phi, true_phi, words_per_topic=words_per_topic)
    return {"uniform": uniform, "truth": truth, "threshold": (uniform + truth) / 2}


def run_cell(seed: int, doc_length: float, alpha0: float, *, concentration: float,
             n_chains: int, n_iter: int, burn_in: int, thin: int, on_fit=None) -> list[dict]:
    """Fit every method and chain on one seed's corpus at one cell; one row per fit.

    ``on_fit`` (optional) is called after each fit (a progress bar's ``update``).
    """
    corpus = make_topics(rng=np.random.default_rng([seed, _key(doc_length)]),
                         doc_length=doc_length)
    rng = np.random.default_rng([seed, _key(doc_length), _key(alpha0)])
    alpha_d = rng.beta(concentration * alpha0, concentration * (1 - alpha0),
                       size=(corpus.y.shape[0], 1))
    y_tilde = privatize(corpus.y, alpha_d, rng=rng)
    n_topics = corpus.phi.shape[0]
    rows = []
    for chain in range(n_chains):
        chain_seed = _chain_seed(seed, doc_length, alpha0, chain)
        for method in METHODS:
            if method == "nonprivate":
                fit = fit_nonprivate(corpus.y, TopicModel(n_topics), rng=chain_seed,
                                     run=RunOptions(n_iter=n_iter, burn_in=burn_in, thin=thin,
                                                    progress=False))
            else:
                fit = fit_private(y_tilde, alpha_d, TopicModel(n_topics), method=method,
                                  rng=chain_seed,
                                  run=RunOptions(n_iter=n_iter, burn_in=burn_in, thin=thin,
                                                 progress=False))
            scores = topic_recovery_scores(fit, corpus.phi, words_per_topic=WORDS_PER_TOPIC)
            rows.append({"seed": int(seed), "doc_length": float(doc_length),
                         "alpha0": float(alpha0), "chain": chain, "chain_seed": chain_seed,
                         "method": method, "tokens": int(corpus.y.sum()), **scores})
            if on_fit is not None:
                on_fit()
    return rows


def summarise(runs: list[dict], threshold: float) -> list[dict]:
    """Per cell and method: mean and sd over seeds x chains of each score, and the runs whose
    aligned posterior mean reaches ``threshold`` (``recovered`` when more than half do)."""
    cells = sorted({(r["doc_length"], r["alpha0"]) for r in runs})
    summary = []
    for doc_length, alpha0 in cells:
        for method in METHODS:
            group = [r for r in runs if (r["doc_length"], r["alpha0"], r["method"])
                     == (doc_length, alpha0, method)]
            if not group:
                continue
            row = {"doc_length": doc_length, "alpha0": alpha0, "method": method,
                   "n_runs": len(group)}
            for score in SCORES:
                values = np.array([r[score] for r in group])
                row[score] = float(values.mean())
                row[f"{score}_sd"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
            row["n_above"] = int(sum(r["mean_support"] >= threshold for r in group))
            row["recovered"] = bool(2 * row["n_above"] > len(group))
            summary.append(row)
    return summary


def _methods_header(methods) -> tuple[str, str]:
    names = " | ".join(method_label(m) for m in methods)
    return f"| tokens/doc | α0 | {names} |", "|---:|---:|" + "---:|" * len(methods)


def markdown_table(summary: list[dict], score: str = "mean_support", *,
                   mark_recovered: bool = True) -> str:
    """A table of ``score`` per cell (rows) and method (columns): mean ± sd over seeds x
    chains, with the runs at or above the threshold and a ✓ where the method recovers."""
    methods = [m for m in METHODS if any(r["method"] == m for r in summary)]
    header, rule = _methods_header(methods)
    lines = [header, rule]
    for doc_length, alpha0 in sorted({(r["doc_length"], r["alpha0"]) for r in summary}):
        cells = []
        for method in methods:
            row = next(r for r in summary if (r["doc_length"], r["alpha0"], r["method"])
                       == (doc_length, alpha0, method))
            text = f"{row[score]:.3f} ± {row[f'{score}_sd']:.3f}"
            if mark_recovered:
                text += f" ({row['n_above']}/{row['n_runs']}{' ✓' if row['recovered'] else ''})"
            cells.append(text)
        lines.append(f"| {doc_length:g} | {alpha0:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def recovery_regions(summary: list[dict]) -> dict:
    """``{method: [(doc_length, alpha0), ...]}``: the cells where each method recovers;
    ``"no_private_method"``: the cells where neither ours nor the naive method does; and
    ``"nobody"``: the cells where no method does, the non-private fit included."""
    regions = {m: [(r["doc_length"], r["alpha0"]) for r in summary
                   if r["method"] == m and r["recovered"]] for m in METHODS}
    cells = sorted({(r["doc_length"], r["alpha0"]) for r in summary})
    private = [m for m in METHODS if m != "nonprivate"]
    regions["no_private_method"] = [c for c in cells
                                    if not any(c in regions[m] for m in private)]
    regions["nobody"] = [c for c in regions["no_private_method"]
                         if c not in regions["nonprivate"]]
    return regions


def regions_text(regions: dict) -> str:
    """The cells of :func:`recovery_regions` as Markdown bullets, one per method and one for
    the cells nobody recovers (lengths joined per ``alpha0``)."""
    def cells(found):
        if not found:
            return "none"
        by_alpha0 = {}
        for doc_length, alpha0 in found:
            by_alpha0.setdefault(float(alpha0), []).append(float(doc_length))
        return "; ".join(f"α0 = {a:g} at {', '.join(f'{L:g}' for L in sorted(ls))} tokens/doc"
                         for a, ls in sorted(by_alpha0.items()))
    lines = [f"- {method_label(m)} recovers the topics at {cells(regions[m])}." for m in METHODS]
    lines.append(f"- No private method recovers them at {cells(regions['no_private_method'])}.")
    lines.append(f"- Nobody recovers them at {cells(regions['nobody'])}.")
    return "\n".join(lines)
