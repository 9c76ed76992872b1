"""The numbers that the documentation's sentences quote from result files, and where from.

Each :class:`~study.prose.Quote` gives a page's words with the checked values in braces, the
file, and a function of the loaded file that yields those values (see :mod:`study.prose`).
The helpers below read the score tables the way the pages quote them: a method's mean over
every chain and privatized copy at each ε/N (:func:`means`), the range of such means
(:func:`span`), or one fit's row (:func:`row`).
"""
from __future__ import annotations

from bench.tables import cpu_design_hours
from study.prose import Quote
from study.prose.cells import cell, masked
from study.score_tables import converged
from study.stages import SYNTHETIC_STAGES

__all__ = ["QUOTES"]

TOPICS = "results/eval/enron_topics.csv"
NETWORK = "results/eval/enron_network.csv"
ROWS_COLS = "results/eval/enron_network_rows_cols.csv"
PAPER_TOPICS = "results/paper/eval/enron_topics.csv"
PAPER_NETWORK = "results/paper/eval/enron_network.csv"
PAPER_NETWORK_ROWS_COLS = "results/paper/eval/enron_network_rows_cols.csv"
NETWORK_DATA = "data/prepared/network/summary.json"
NPMI_RECORD = "experiments/results/npmi_anomaly.json"
LEVELS = (3, 2, 1)
REFERENCE = (None,)


# ---------------------------------------------------------------- readers

def means(method, measure, levels=LEVELS, **where):
    """``method``'s mean ``measure`` at each of ``levels`` (None: the reference's cell)."""
    return lambda t: [cell(masked(t), method, measure, level, **where).mean for level in levels]


def sds(method, measure, levels=LEVELS, **where):
    """The sd over chains × copies at each of ``levels``."""
    return lambda t: [cell(masked(t), method, measure, level, **where).sd for level in levels]


def span(method, measure, levels=LEVELS, **where):
    """The smallest and the largest of ``method``'s means over ``levels`` (over the values
    of a reference's chains when ``levels`` is :data:`REFERENCE`)."""
    def read(t):
        if levels == REFERENCE:
            values = cell(masked(t), method, measure, None, **where).values
        else:
            values = means(method, measure, levels, **where)(t)
        return [min(values), max(values)]
    return read


def row(fit, measure):
    """One fit's ``measure`` (its first chain)."""
    return lambda t: [t.loc[t.fit == fit, measure].iloc[0]]


def zeros(measure):
    """The all-zeros prediction's ``measure``."""
    return row("zeros", measure)


def joined(*readers):
    """The values of several readers, in order."""
    return lambda data: [v for read in readers for v in read(data)]


def three_ways(measure, **where):
    """The means of ``measure`` as the pages compare them: ours and naive at each of
    :data:`LEVELS`, then the non-private reference's."""
    return joined(means("collapsed", measure, **where), means("naive", measure, **where),
                  means("nonprivate", measure, REFERENCE, **where))


def key(*path):
    """A value of a JSON record, by its keys."""
    def read(data):
        for part in path:
            data = data[part]
        return [data]
    return read


def percent(read):
    """A reader's fractions as percentages."""
    return lambda data: [100 * v for v in read(data)]


# ---------------------------------------------------------------- docs/results.md

RESULTS = "docs/results.md"

_RESULTS = (
    Quote(RESULTS, "the pipeline's {172} stages", "dvc.lock", lambda lock: [len(lock["stages"])]),
    Quote(RESULTS, "non-private level at every ε/N ({0.154}–{0.162} vs {0.159})", TOPICS,
          joined(span("collapsed", "mae"), means("nonprivate", "mae", REFERENCE))),
    Quote(RESULTS, "privacy grows ({0.20}, {0.28}, {0.54} at ε/N = 3, 2, 1)", TOPICS,
          means("naive", "mae")),
    Quote(RESULTS, "more so with more noise ({0.25}, {0.28}, {0.30} vs {0.23}; naive falls to "
          "{0.19})", TOPICS,
          joined(means("collapsed", "npmi"), means("nonprivate", "npmi", REFERENCE),
                 means("naive", "npmi", (1,)))),
    Quote(RESULTS, "coherence at ε/N = 1 ({−56.2} vs {−63.8}; at ε/N = 2 ours is {−60.0}, above "
          "the non-private chains' {−66.4} to {−62.4} too, at ε/N = 3 within them at {−64.2})",
          TOPICS,
          joined(means("collapsed", "coherence", (1,)),
                 means("nonprivate", "coherence", REFERENCE),
                 means("collapsed", "coherence", (2,)),
                 span("nonprivate", "coherence", REFERENCE),
                 means("collapsed", "coherence", (3,)))),
    Quote(RESULTS, "predicting 0 everywhere scores {0.139}, better than every fit (≥ {0.150}, the "
          "collapsed CAVI's)", TOPICS,
          joined(zeros("mae"), lambda t: [t[t.method != "zeros"].mae.min()])),
    Quote(RESULTS, "ours {−0.25}, {−0.27}, {−0.31} at ε/N = 3, 2, 1, naive {−0.27}, {−0.34}, "
          "{−0.58}, non-private {−0.245}", TOPICS,
          three_ways("loglik")),
    Quote(RESULTS, "the five non-private chains alone span NPMI {0.216}–{0.239}", TOPICS,
          span("nonprivate", "npmi", REFERENCE)),
    Quote(RESULTS, "({1}, {1} and {2} of 5 chains put ours below it at most levels", NETWORK,
          lambda t: [_chains_above_ours(t, c) for c in (5, 10, 20)]),
    Quote(RESULTS, "which holds {62} % of the emails", NETWORK_DATA,
          percent(key("heldout", "by_rule", "block", "counts"))),
    Quote(RESULTS, "at C = 5 it survives (ours {4.55}, {4.33}, {4.42} at ε/N = 3, 2, 1, naive "
          "{4.74}, {4.79}, {5.31}, non-private {4.62})", NETWORK,
          three_ways("offdiag_mae", C=5)),
    Quote(RESULTS, "at C = 5 its MAE ({26.8}, {27.0}, {30.3} at ε/N = 3, 2, 1) is above naive "
          "({26.1}, {26.0}, {29.6})", NETWORK,
          joined(means("collapsed", "heldout_mae", C=5), means("naive", "heldout_mae", C=5))),
    Quote(RESULTS, "(the non-private reference's five chains: {25.8} ± {1.2})", NETWORK,
          joined(means("nonprivate", "heldout_mae", REFERENCE, C=5),
                 sds("nonprivate", "heldout_mae", REFERENCE, C=5))),
    Quote(RESULTS, "(our means {41}–{119} with sd up to {67} over the three copies, naive "
          "{26}–{58}; the non-private reference's five chains {45} ± {40} at C = 10 and {51} ± "
          "{36} at C = 20)", NETWORK,
          lambda t: [*_range_over_c(t, "collapsed"),
                     max(max(sds("collapsed", "heldout_mae", C=c)(t)) for c in (10, 20)),
                     *_range_over_c(t, "naive"),
                     *joined(means("nonprivate", "heldout_mae", REFERENCE, C=10),
                             sds("nonprivate", "heldout_mae", REFERENCE, C=10),
                             means("nonprivate", "heldout_mae", REFERENCE, C=20),
                             sds("nonprivate", "heldout_mae", REFERENCE, C=20))(t)]),
    Quote(RESULTS, "Predicting 0 everywhere beats every fit there ({23.3}), and on the observed "
          "entries ({1.57})", NETWORK, joined(zeros("heldout_mae"), zeros("mae"))),
    Quote(RESULTS, "(C = 5: ours {−74}, {−82}, {−110} at ε/N = 3, 2, 1, naive {−81}, {−72}, "
          "{−72}, non-private {−81})", NETWORK,
          three_ways("heldout_loglik", C=5)),
    Quote(RESULTS, "held-out MAE ours {6.82}, {6.72}, {6.58} at ε/N = 3, 2, 1, naive {7.28}, "
          "{7.37}, {7.06}, non-private {7.45} ± {1.39} (five chains, {6.79}–{9.93})", ROWS_COLS,
          joined(three_ways("heldout_mae"),
                 sds("nonprivate", "heldout_mae", REFERENCE),
                 span("nonprivate", "heldout_mae", REFERENCE))),
    Quote(RESULTS, "while predicting zero everywhere ({6.52}) is still lower, and the held-out "
          "log-likelihood ranks ours last ({−25.4}, {−28.7}, {−30.1} against naive {−23.2}, "
          "{−22.8}, {−19.9}, non-private {−23.1})", ROWS_COLS,
          joined(zeros("heldout_mae"), three_ways("heldout_loglik"))),
    Quote(RESULTS, "rises with noise ({0.250} → {0.298} from ε/N = 3 to 1, non-private {0.231})",
          TOPICS, joined(means("collapsed", "npmi", (3, 1)),
                         means("nonprivate", "npmi", REFERENCE))),
    Quote(RESULTS, "shrinks the rise from {0.048} to {0.007} ({0.2910} → {0.2980})", TOPICS,
          lambda t: [_rise(t, "npmi"), _rise(t, "npmi_zero"),
                     *means("collapsed", "npmi_zero", (3, 1))(t)]),
    Quote(RESULTS, "{4.1} % of top-word pairs never co-occur at ε/N = 3, {0.02} % at 1", TOPICS,
          lambda t: [100 * (a - b) for a, b in zip(means("collapsed", "npmi_zero", (3, 1))(t),
                                                   means("collapsed", "npmi", (3, 1))(t))]),
    Quote(RESULTS, "instead of 1,000 move any score by at most {0.04}", NPMI_RECORD,
          lambda r: [_largest_move(r["table"], ("10k", "all"))]),
    Quote(RESULTS, "changes no group by more than {0.007}", NPMI_RECORD,
          lambda r: [max(abs(g["mean-phi -1"][0] - g["fitted -1"][0])
                         for g in r["table"].values())]),
    Quote(RESULTS, "Three seeds score {0.215}–{0.254} (−1) and {0.261}–{0.287} (0)", NPMI_RECORD,
          lambda r: [*_seed_range(r, "fitted -1"), *_seed_range(r, "fitted 0")]),
    Quote(RESULTS, "they span {0.216}–{0.239} (−1) and {0.275}–{0.288} (0); ours at ε/N = 3 "
          "({0.250}, {0.291}) lies above the best of them under −1 and inside their span under "
          "Lau's convention, at ε/N = 2 and 1 {0.008} and {0.010} above the best under Lau's "
          "convention", TOPICS,
          lambda t: [*span("nonprivate", "npmi", REFERENCE)(t),
                     *span("nonprivate", "npmi_zero", REFERENCE)(t),
                     *means("collapsed", "npmi", (3,))(t),
                     *means("collapsed", "npmi_zero", (3,))(t),
                     *[m - max(cell(t, "nonprivate", "npmi_zero").values)
                       for m in means("collapsed", "npmi_zero", (2, 1))(t)]]),
    Quote(RESULTS, "`alpha0 ∈ {{0.2}, {0.5}, {0.8}}`", "results/synthetic/topics.json",
          lambda r: [h["alpha0"] for h in r["hellinger"]]),
)


def _chains_above_ours(table, c) -> int:
    """How many of the reference's chains have a held-out MAE above our mean at most levels."""
    ours = means("collapsed", "heldout_mae", C=c)(table)
    chains = cell(masked(table), "nonprivate", "heldout_mae", C=c).values
    return sum(sum(o < v for o in ours) > len(ours) / 2 for v in chains)


def _range_over_c(table, method):
    """The smallest and the largest held-out MAE mean of ``method`` at C = 10 and 20."""
    values = [m for c in (10, 20) for m in means(method, "heldout_mae", C=c)(table)]
    return [min(values), max(values)]


def _rise(table, measure) -> float:
    """How much our ``measure`` rises from ε/N = 3 to 1."""
    three, one = means("collapsed", measure, (3, 1))(table)
    return one - three


def _largest_move(groups, references) -> float:
    """The largest change of any group's NPMI from the fitted documents to ``references``."""
    return max(abs(g[f"{ref} {conv}"][0] - g[f"fitted {conv}"][0])
               for g in groups.values() for ref in references for conv in ("-1", "0"))


def _seed_range(record, column):
    """The smallest and the largest NPMI (``column``) over the non-private seeds."""
    values = [g[column][0] for name, g in record["table"].items()
              if name.startswith("nonprivate")]
    return [min(values), max(values)]


# ---------------------------------------------------------------- docs/npmi.md

NPMI = "docs/npmi.md"


def npmi(group, column, level=None):
    """A score of the NPMI record: ``group`` ("collapsed", "naive", "nonprivate", ...) at
    ``level`` (None: no level), ``column`` as the record names it ("fitted -1", "never")."""
    name = group if level is None else f"{group} eps/N={float(level)}"
    return lambda r: [r["table"][name][column][0]]


def npmi_gap(column, levels=LEVELS):
    """Ours minus the pipeline's non-private chain under ``column``, at each level."""
    return lambda r: [npmi("collapsed", column, e)(r)[0] - npmi("nonprivate", column)(r)[0]
                      for e in levels]


def npmi_rise(column):
    """How much our NPMI (``column``) rises from ε/N = 3 to 1."""
    return lambda r: npmi("collapsed", column, 1)(r)[0] - npmi("collapsed", column, 3)(r)[0]


def _extremes(read):
    """The smallest and the largest of a reader's values."""
    def read_extremes(data):
        values = list(read(data))
        return [min(values), max(values)]
    return read_extremes


_NONPRIVATE_SEEDS = ("nonprivate seed 2", "nonprivate", "nonprivate seed 3")

_NPMI = (
    Quote(NPMI, "our NPMI rises by {0.042} from ε/N = 3 to 1 ({0.255} → {0.297}). With Lau et "
          "al.'s 0 it rises by {0.008} ({0.289} → {0.297}), and by {0.007} at D = 10,000",
          NPMI_RECORD,
          lambda r: [npmi_rise("fitted -1")(r), *npmi("collapsed", "fitted -1", 3)(r),
                     *npmi("collapsed", "fitted -1", 1)(r), npmi_rise("fitted 0")(r),
                     *npmi("collapsed", "fitted 0", 3)(r), *npmi("collapsed", "fitted 0", 1)(r),
                     npmi_rise("10k 0")(r)]),
    Quote(NPMI, "at ε/N = 3 {3.5} % of our top-word pairs never co-occur in the 1,000 documents "
          "(as many as for the non-private fit), at ε/N = 1 almost none ({0.05} %)", NPMI_RECORD,
          percent(joined(npmi("collapsed", "never", 3), npmi("collapsed", "never", 1)))),
    Quote(NPMI, "grows with noise, {4.5} → {6.7} %", NPMI_RECORD,
          percent(joined(npmi("naive", "never", 3), npmi("naive", "never", 1)))),
    Quote(NPMI, "by {0.023}–{0.066} with −1 at D = 1,000, {0.024}–{0.032} with 0, {0.024}–{0.031} "
          "with 0 at D = 10,000 and {0.025}–{0.030} with 0 on all 24,894 emails", NPMI_RECORD,
          joined(*(_extremes(npmi_gap(c)) for c in ("fitted -1", "fitted 0", "10k 0", "all 0")))),
    Quote(NPMI, "at most {0.04} and mostly brings the two conventions together", NPMI_RECORD,
          lambda r: [_largest_move(r["table"], ("10k", "all"))]),
    Quote(NPMI, "changes no group by more than {0.007}", NPMI_RECORD,
          lambda r: [max(abs(g["mean-phi -1"][0] - g["fitted -1"][0])
                         for g in r["table"].values())]),
    Quote(NPMI, "| 2 | {47,346} | {0.215} | {0.261} | | 1 (the pipeline's) | {52,869} | {0.231} | "
          "{0.265} | | 3 | {55,303} | {0.254} | {0.287} |", NPMI_RECORD,
          lambda r: [v for name in _NONPRIVATE_SEEDS
                     for v in (r["mean_log_joint"][name], *npmi(name, "fitted -1")(r),
                               *npmi(name, "fitted 0")(r))]),
    Quote(NPMI, "The spread ({0.04}) is as large as our method's whole rise", NPMI_RECORD,
          lambda r: [max(v) - min(v) for v in
                     [[npmi(n, "fitted -1")(r)[0] for n in _NONPRIVATE_SEEDS]]]),
    Quote(NPMI, "the best seed scores like our method at ε/N = 3 ({0.254} vs {0.255} with −1, "
          "{0.287} vs {0.289} with 0)", NPMI_RECORD,
          joined(npmi("nonprivate seed 3", "fitted -1"), npmi("collapsed", "fitted -1", 3),
                 npmi("nonprivate seed 3", "fitted 0"), npmi("collapsed", "fitted 0", 3))),
    Quote(NPMI, "the best non-private seed is {0.011} below our ε/N = 1", NPMI_RECORD,
          lambda r: [npmi("collapsed", "fitted 0", 1)(r)[0]
                     - max(npmi(n, "fitted 0")(r)[0] for n in _NONPRIVATE_SEEDS)]),
    Quote(NPMI, "mean log10 DF: {−0.29} for ours", NPMI_RECORD,
          key("npmi_vs_log10_df", "collapsed", "pearson_r")),
    Quote(NPMI, "{0.00} pooled over three non-private seeds", NPMI_RECORD,
          key("npmi_vs_log10_df", "nonprivate", "pearson_r")),
    Quote(NPMI, "by about {0.01} with Lau's 0 ({0.296} and {0.297} vs {0.287}) and {0.02}–{0.04} "
          "with −1", NPMI_RECORD,
          lambda r: [npmi("collapsed", "fitted 0", 1)(r)[0]
                     - npmi("nonprivate seed 3", "fitted 0")(r)[0],
                     *npmi("collapsed", "fitted 0", 2)(r), *npmi("collapsed", "fitted 0", 1)(r),
                     *npmi("nonprivate seed 3", "fitted 0")(r),
                     *(npmi("collapsed", "fitted -1", e)(r)[0]
                       - npmi("nonprivate seed 3", "fitted -1")(r)[0] for e in (2, 1))]),
)


# ---------------------------------------------------------------- docs/convergence.md

CONVERGENCE = "docs/convergence.md"
#: the diagnosis's tables, one per diagnosed case (read as one table)
DIAGNOSE = "results/diagnostics"
PAPER_DIAGNOSE = "results/paper/diagnostics"
#: the records of profiles/long_chains.py, which runs outside the pipeline
LONG_CHAINS = "experiments/results/long_chains"
LONG = f"{LONG_CHAINS}/long_collapsed_eps1.0_rep0.json"
LONG_2000 = f"{LONG_CHAINS}/long_collapsed_eps1.0_rep0_2000.json"
TOPIC_FITS = f"{LONG_CHAINS}/topic_fits.csv"
LONG_NONPRIVATE = "experiments/results/long_nonprivate.json"


def diagnosed(case, quantity, column):
    """A column of a ``diagnose`` table's row: the case whose name contains ``case``."""
    def read(t):
        rows = t[t.case.str.contains(case, regex=False) & (t.quantity == quantity)]
        return [rows[column].iloc[0]]
    return read


def chain_means(case, quantity):
    """The chain means of a ``diagnose`` row, as numbers."""
    return lambda t: [float(v) for v in diagnosed(case, quantity, "chain_means")(t)[0].split(";")]


def verdict_count(verdict):
    """How many quantities of a ``diagnose`` table got ``verdict``."""
    return lambda t: [int((t.verdict == verdict).sum())]


def fits(column, names=None):
    """A column of ``topic_fits.csv``, for the fits named (all by default), in their order."""
    def read(t):
        rows = t if names is None else t.set_index("fit").loc[list(names)].reset_index()
        return list(rows[column])
    return read


def growth(record, quantity, relative=False):
    """Each chain's change from its first to its last saved value."""
    trace = record[quantity]
    return [(b - a) / a if relative else b - a
            for a, b in zip(trace["first_saved"], trace["last_saved"])]


def _followed(case, column):
    """A column of a ``diagnose`` table's followed rates (``mu[…]``) of the case named."""
    return lambda t: list(t.loc[t.case.str.contains(case, regex=False)
                                & t.quantity.str.startswith("mu["), column])


def _farthest_apart(case):
    """The followed rate of a case whose chains lie farthest apart: its chain means, largest
    first, then its name."""
    def read(t):
        rows = t[t.case.str.contains(case, regex=False) & t.quantity.str.startswith("mu[")]
        row = rows.loc[rows.separation.idxmax()]
        return [*sorted((float(v) for v in row.chain_means.split(";")), reverse=True),
                row.quantity]
    return read


_TOPIC = "topics collapsed"
_NONPRIVATE_TOPIC = "topics nonprivate"
_NETWORK_CASE = "network collapsed"

_CONVERGENCE = (
    Quote(CONVERGENCE, "three seeds of the non-private fit give NPMI {0.215} / {0.231} / {0.254} "
          "(−1 convention; the pipeline's seed 1 is the middle one), ordered like their mean log "
          "joints ({47,346} / {52,869} / {55,303})", NPMI_RECORD,
          lambda r: [*(npmi(n, "fitted -1")(r)[0] for n in _NONPRIVATE_SEEDS),
                     *(r["mean_log_joint"][n] for n in _NONPRIVATE_SEEDS)]),
    Quote(CONVERGENCE, "and {10}–{25} saved draws per chain", DIAGNOSE,
          lambda t: [t.draws.min(), t.draws.max()]),
    Quote(CONVERGENCE, "{7} of the {24} quantities sit in different modes, {8} still drift, {2} "
          "agree", DIAGNOSE,
          lambda t: [*verdict_count("modes")(t), len(t), *verdict_count("drifting")(t),
                     *verdict_count("agree")(t)]),
    Quote(CONVERGENCE, "and {7} too short to tell", DIAGNOSE, verdict_count("unclear")),
    Quote(CONVERGENCE, "The followed rates of the non-private topic fit are in different modes "
          "({4} of {4}): single documents' rates differ between chains by up to {4.0} "
          "within-chain standard deviations (`{mu[corman-s/inbox/archives/76., http]}`: chain "
          "means {133}–{212}); so are {2} of our topic fit's {4} ({2.4}–{2.7} within-chain "
          "standard deviations apart), and {0} of the naive fit's {4} in this run", DIAGNOSE,
          lambda t: [*_followed_in_modes(_NONPRIVATE_TOPIC)(t),
                     *_widest_apart(_NONPRIVATE_TOPIC)(t),
                     *_followed_in_modes(_TOPIC)(t),
                     *_extremes(lambda t: list(t.loc[t.case.str.contains(_TOPIC)
                                                     & t.quantity.str.startswith("mu[")
                                                     & (t.verdict == "modes"),
                                                     "separation"]))(t),
                     *_followed_in_modes("topics naive")(t)]),
    Quote(CONVERGENCE, "Our network fit's two chains sit apart too: total rates of about "
          "{24,000} and {42,000}", DIAGNOSE,
          lambda t: sorted(chain_means(_NETWORK_CASE, "total_rate")(t)), rel_tol=0.02),
    Quote(CONVERGENCE, "and {4} of its {4} followed rates at {98}–{100} in one chain and "
          "{29}–{86} in the other", DIAGNOSE, lambda t: _network_followed(t)),
    Quote(CONVERGENCE, "total rates of about {25,000}, {34,000}, {40,000} and {60,000}",
          PAPER_DIAGNOSE, lambda t: sorted(chain_means(_NETWORK_CASE, "total_rate")(t)),
          rel_tol=0.02),
    Quote(CONVERGENCE, "copy drift on the log joint (R-hat {1.84}) and the total rate ({2.10}; "
          "chain means {3.32e6} to {3.35e6}), and one document's rate sits at {310} and {292} "
          "in two chains and at {1.6} in the third (`{mu[bass-e/inbox/64., m]}`). The six "
          "non-private chains agree on the total rate (R-hat {1.00}) and drift apart on the log "
          "joint ({1.64}) and on every followed rate ({2.16} to {3.26})", PAPER_DIAGNOSE,
          lambda t: [*diagnosed(_TOPIC, "log_joint", "r_hat")(t),
                     *diagnosed(_TOPIC, "total_rate", "r_hat")(t),
                     *_extremes(chain_means(_TOPIC, "total_rate"))(t),
                     *_farthest_apart(_TOPIC)(t),
                     *diagnosed(_NONPRIVATE_TOPIC, "total_rate", "r_hat")(t),
                     *diagnosed(_NONPRIVATE_TOPIC, "log_joint", "r_hat")(t),
                     *_extremes(_followed(_NONPRIVATE_TOPIC, "r_hat"))(t)]),
    Quote(CONVERGENCE, "every fit's worst R-hat is between {1.7} and {3.4} (`rhat` in "
          "`results/paper/eval/enron_network.csv`)", PAPER_NETWORK,
          lambda t: [t.rhat.min(), t.rhat.max()]),
    Quote(CONVERGENCE, "and between {1.4} and {2.9} under the paper's held-out reading",
          "results/paper/eval/enron_network_rows_cols.csv",
          lambda t: [t.rhat.min(), t.rhat.max()]),
    Quote(CONVERGENCE, "(the held-out MAE of ours at C = 5, ε/N = 3 is {51.9} ± {54.4} over its "
          "{15} chains)", PAPER_NETWORK,
          joined(means("collapsed", "heldout_mae", (3,), C=5),
                 sds("collapsed", "heldout_mae", (3,), C=5),
                 lambda t: [t.loc[(t.method == "collapsed") & (t.C == 5)
                                  & (t.epsilon_over_n == 3), "heldout_mae"].count()])),
    Quote(CONVERGENCE, "(the total rate by {0.8} % and {0.9} %, the log joint by {1.5e5} and "
          "{6.3e4})", LONG,
          lambda r: [*(100 * g for g in growth(r, "total_rate", relative=True)),
                     *growth(r, "log_joint")]),
    Quote(CONVERGENCE, "`mu[5875, 10]` is stationary in both (|z| < {0.2}) at means {444} and "
          "{344}, {6.8} within-chain standard deviations apart", LONG,
          lambda r: [0.2 if max(abs(z) for z in r["agreement"]["mu[5875,10]"]["drift_z"]) < 0.2
                     else "not below 0.2",
                     *r["agreement"]["mu[5875,10]"]["chain_means"],
                     r["agreement"]["mu[5875,10]"]["separation"]]),
    Quote(CONVERGENCE, "The total rate, {3.3e6}", LONG,
          lambda r: [max(r["total_rate"]["mean"])]),
    Quote(CONVERGENCE, "against {2.15e6} true tokens", "results/paper/data/topics_summary.json",
          key("tokens")),
    Quote(CONVERGENCE, "each at its own level, {3.2} within-chain standard deviations apart",
          LONG_2000, key("agreement", "total_rate", "separation")),
    Quote(CONVERGENCE, "(the total rate's from {1.65}", LONG,
          key("quantities", "total_rate", "r_hat")),
    Quote(CONVERGENCE, "to {1.79}), as they did for the non-private ones", LONG_2000,
          key("quantities", "total_rate", "r_hat")),
    Quote(CONVERGENCE, "At about {0.9} s per sweep on this machine, the paper's 7,500 sweeps per "
          "chain take about {2} hours", LONG,
          lambda r: [r["seconds_per_sweep"], 7500 * r["seconds_per_sweep"] / 3600], rel_tol=0.06),
    Quote(CONVERGENCE, "non-private {0.10}, ours {0.38} / {0.49} / {0.94} and naive {0.25} / "
          "{0.53} / {2.27} at ε/N = 3 / 2 / 1", TOPIC_FITS,
          fits("seconds_per_sweep", ["nonprivate", *(f"{m}_eps{e:.1f}_rep0" for m in
                                                     ("collapsed", "naive") for e in LEVELS)])),
    Quote(CONVERGENCE, "the total rate agrees across chains within 1,000 sweeps (R-hat "
          "{0.99}–{1.01}, bulk ESS {88}–{248}), while the log joint does not (R-hat {1.4}–{2.0}",
          TOPIC_FITS,
          lambda t: [*_extremes(fits("total_rate_r_hat", _COUNTS_ONLY))(t),
                     *_extremes(fits("total_rate_ess_bulk", _COUNTS_ONLY))(t),
                     *_extremes(fits("log_joint_r_hat", _COUNTS_ONLY))(t)]),
    Quote(CONVERGENCE, "seed 1), recording every 10th sweep the total rate and the log joint "
          "(`experiments/results/long_nonprivate.json`; {54} minutes on the shared 2-core "
          "machine)", LONG_NONPRIVATE, lambda r: [r["seconds"] / 60]),
    Quote(CONVERGENCE, "R-hat rises from {1.19} to about {1.7} and stays there", LONG_NONPRIVATE,
          lambda r: [r["windows"][0]["log_joint"]["r_hat"],
                     r["windows"][-1]["log_joint"]["r_hat"]]),
    Quote(CONVERGENCE, "(chain 0 by {21,000} between the first and the last window, chain 1 by "
          "{6,000}) while the gap between them, about {24,000}", LONG_NONPRIVATE,
          lambda r: _long_nonprivate_creep(r["windows"]), rel_tol=0.05),
)

#: the paper-scale topic fits whose counts are fixed: the reference and the naive method
_COUNTS_ONLY = ("nonprivate", *(f"naive_eps{e:.1f}_rep0" for e in LEVELS))


def _followed_in_modes(case):
    """How many of the followed rates (``mu[...]``) of the ``diagnose`` case whose name
    contains ``case`` sit in different modes, and how many it follows."""
    def read(t):
        rows = t[t.case.str.contains(case, regex=False) & t.quantity.str.startswith("mu[")]
        return [int((rows.verdict == "modes").sum()), len(rows)]
    return read


def _widest_apart(case):
    """The followed rate (``mu[...]``) of the ``diagnose`` case whose name contains ``case``
    whose chains lie furthest apart: that separation, the rate's name, and the smallest and
    largest of its chain means."""
    def read(t):
        rows = t[t.case.str.contains(case, regex=False) & t.quantity.str.startswith("mu[")]
        row = rows.loc[rows.separation.idxmax()]
        means = chain_means(case, row.quantity)(t)
        return [row.separation, row.quantity, min(means), max(means)]
    return read


def _network_followed(table):
    """Our network fit's followed rates whose chains do not agree: how many of how many, the
    smallest and largest chain mean of the higher chain, then of the lower."""
    rows = table[table.case.str.contains(_NETWORK_CASE) & table.quantity.str.startswith("mu[")]
    apart = rows[rows.verdict != "agree"]
    pairs = [sorted(float(v) for v in means.split(";")) for means in apart.chain_means]
    return [len(apart), len(rows), min(p[-1] for p in pairs), max(p[-1] for p in pairs),
            min(p[0] for p in pairs), max(p[0] for p in pairs)]


def _long_nonprivate_creep(windows):
    """Each chain's log-joint rise from the first to the last window, and the last gap."""
    consecutive = [w for w in windows if w["window"][1] - w["window"][0] <= 1000]
    first = consecutive[0]["log_joint"]["chain_means"]
    last = consecutive[-1]["log_joint"]["chain_means"]
    return [last[0] - first[0], last[1] - first[1], abs(last[0] - last[1])]


# ---------------------------------------------------------------- docs/variational.md

VARIATIONAL = "docs/variational.md"
VI_SYNTHETIC = "results/vi/synthetic.json"
VI_BENCH = "bench/results/vi.json"
VI_QUICK = "results/vi/benchmark.csv"


def vi_row(method, column):
    """A column of the appendix E table's rows of ``method``: its mean over the runs' seeds."""
    return lambda t: [t.loc[t.method == method, column].mean()]


def _paper_cavi_speed_and_iterations(t) -> list:
    """The private MCMC's seconds over the paper's CAVI's and the collapsed CAVI's (means over
    seeds), the paper's CAVI's fewest and most iterations among its converged runs, how many
    converged, how many runs, and the iterations of a run that stopped at the cap."""
    ratios = [vi_row("private MCMC", "seconds")(t)[0] / vi_row(m, "seconds")(t)[0]
              for m in ("paper CAVI", "collapsed CAVI")]
    runs = t[t.method == "paper CAVI"]
    done = converged(runs)
    return [*ratios, runs.iterations[done].min(), runs.iterations[done].max(), int(done.sum()),
            len(runs), runs.iterations[~done].max()]


def _chain_sweep_seconds(record) -> float:
    """Seconds per sweep of ``bench.vi``'s chain from the collapsed CAVI over its budget."""
    chain = record["mcmc"]["vi"]
    last = chain_at("vi", record["mcmc"]["budget_seconds"])(record)
    return (last["seconds"] - chain["start_seconds"]) / last["iteration"]


def chain_at(start, budget):
    """``bench.vi``'s chain from ``start`` after ``budget`` seconds: its last curve point."""
    def read(record):
        curve = record["mcmc"][start]["curve"]
        return [p for p in curve if p["seconds"] <= budget][-1]
    return read


_VARIATIONAL = (
    Quote(VARIATIONAL, "MAE to the true rates (`results/vi/synthetic.json`): collapsed CAVI "
          "{0.419}, the paper's CAVI {0.448}, naive CAVI {0.664}", VI_SYNTHETIC,
          joined(*(key("scores", m, "mae") for m in ("collapsed", "bessel", "naive")))),
    Quote(VARIATIONAL, "the paper's CAVI stops at a slightly higher exact bound ({-823.9} against "
          "{-826.2}", VI_SYNTHETIC,
          joined(key("scores", "bessel", "collapsed_bound"),
                 key("scores", "collapsed", "collapsed_bound"))),
    Quote(VARIATIONAL, "the collapsed CAVI stopped after {26} iterations", VI_SYNTHETIC,
          key("scores", "collapsed", "iterations")),
    Quote(VARIATIONAL, "a lower MAE ({0.383}, target 0.45) than the paper's CAVI, which reproduces "
          "the paper's MAE ({0.516} against {0.52}). Our implementation of the paper's CAVI takes "
          "{0.17} s per iteration against the paper's {2.8} s", VI_BENCH,
          joined(key("collapsed", "mae"), key("paper", "mae"), key("paper_numbers", "vi_mae"),
                 key("paper", "median_iteration_seconds"),
                 key("paper_numbers", "vi_seconds_per_iteration"))),
    Quote(VARIATIONAL, "{0.10} s per iteration on these dense data (target 0.15; {0.040} s on "
          "text-like data, target 0.05) and {11.9} s in all (target 15)", VI_BENCH,
          joined(key("collapsed", "median_iteration_seconds"),
                 key("engines", "text", "sparse_iteration_s"), key("collapsed", "seconds"))),
    Quote(VARIATIONAL, "`docs/vi.md`) at {0.38}, and the same CAVI started at the truth stays at "
          "{0.30}", VI_BENCH, joined(key("collapsed", "mae"), key("truth", "mae"))),
    Quote(VARIATIONAL, "MAE {0.381}, where the chain from the default start is at {0.78}; the "
          "cheaper EM start of the sampler (`init=\"em\"`) does as well ({0.383})", VI_BENCH,
          lambda r: [chain_at(s, 30.0)(r)["mae_from_start"] for s in ("vi", "data", "em")]),
    Quote(VARIATIONAL, "({0.3325}, the mean of two long chains; bar {0.349}) at 30 s, but after "
          "{108} s (the EM start: {88} s)", VI_BENCH,
          lambda r: [r["mcmc"]["converged_mcmc_mae"], 1.05 * r["mcmc"]["converged_mcmc_mae"],
                     r["mcmc"]["vi"]["seconds_to_within_5pct_mae_from_start"],
                     r["mcmc"]["em"]["seconds_to_within_5pct_mae_from_start"]]),
    Quote(VARIATIONAL, "the rates need about {27} sweeps of {0.15} s per effective sample, so 30 s "
          "buys about {7}", VI_BENCH,
          lambda r: [r["mcmc"]["vi"]["sweeps_per_effective_sample"], _chain_sweep_seconds(r),
                     30 / (r["mcmc"]["vi"]["sweeps_per_effective_sample"]
                           * _chain_sweep_seconds(r))],
          rel_tol=0.06),
    Quote(VARIATIONAL, "CAVI, averaging all its {40} sweeps, reaches an MAE of {0.217}, between "
          "the CAVI's ({0.224}) and the {200}-sweep chain's ({0.211})",
          VI_QUICK, joined(vi_row("VI-started MCMC", "iterations"),
                           vi_row("VI-started MCMC", "mae"), vi_row("collapsed CAVI", "mae"),
                           vi_row("private MCMC", "iterations"), vi_row("private MCMC", "mae"))),
    Quote(VARIATIONAL, "At epsilon/N = 1, replicate 0: MAE collapsed CAVI {0.151} against the "
          "quick-profile Gibbs chains' {0.161} (collapsed, 300 sweeps) and {0.538} (naive); NPMI "
          "{0.242} against {0.302}, and a lower predictive log-likelihood ({−0.349} against "
          "{−0.303})", TOPICS,
          joined(row("collapsed_cavi_eps1.0_rep0", "mae"), row("collapsed_eps1.0_rep0", "mae"),
                 row("naive_eps1.0_rep0", "mae"), row("collapsed_cavi_eps1.0_rep0", "npmi"),
                 row("collapsed_eps1.0_rep0", "npmi"), row("collapsed_cavi_eps1.0_rep0", "loglik"),
                 row("collapsed_eps1.0_rep0", "loglik"))),
)


# ---------------------------------------------------------------- docs/paper_scale.md

PAPER_SCALE = "docs/paper_scale.md"
STAGE_SECONDS = "results/paper/stage_seconds.json"
PAPER_SYNTHETIC_TOPICS = "results/paper/synthetic/topics.json"


def _central_hmm_minutes(record):
    """The paper run's ``central_hmm`` stage in whole minutes and seconds."""
    seconds = next(v for k, v in record["stages"].items() if k.startswith("central_hmm"))
    return [seconds // 60, seconds % 60]


def _chain_index(t):
    """How many cells of a network score table have the chain's index explain the spread of
    log held-out MAE within copies at p <= 0.05, and the largest share
    (:func:`study.evidence.chain_index_cells`)."""
    from study.evidence import chain_index_cells
    cells = chain_index_cells(t)
    return [int((cells.p <= 0.05).sum()), len(cells), cells.share.max()]


def _worse_at_the_highest_noise(r):
    """At α0 = 0.8: how many seeds put ours farther from the true topics than the naive
    method, of how many, by how much (smallest first), and how much closer ours is in the
    others."""
    gaps = sorted(p["collapsed"] - p["naive"] for p in r["per_seed"] if p["alpha0"] == 0.8)
    worse = [g for g in gaps if g > 0]
    return [len(worse), len(gaps), *worse, *(-g for g in gaps if g <= 0)]


_PAPER_SCALE = (
    Quote(PAPER_SCALE, "at C = 5 predicting zero everywhere ({3.76}) beats the non-private fit of "
          "every entry", PAPER_NETWORK, zeros("offdiag_mae")),
    Quote(PAPER_SCALE, "ours swings between chains and copies (at C = 5, ε/N = 3, sd {54})",
          PAPER_NETWORK, lambda t: [t.loc[(t.method == "collapsed") & (t.C == 5)
                                          & (t.epsilon_over_n == 3), "heldout_mae"].std()],
          rel_tol=0.01),
    Quote(PAPER_SCALE, "the chain's index explains the within-copy spread of log held-out MAE "
          "at p ≤ 0.05 in {3} of the {18} cells of the block design (the largest share {0.60})",
          PAPER_NETWORK, _chain_index),
    Quote(PAPER_SCALE, "and in {2} of {18} of `rows_cols`", PAPER_NETWORK_ROWS_COLS,
          lambda t: _chain_index(t)[:2]),
    Quote(PAPER_SCALE, "the worst R-hat of a fit is {1.7}–{3.4} (`rhat`)", PAPER_NETWORK,
          lambda t: [t.rhat.min(), t.rhat.max()]),
    Quote(PAPER_SCALE, "agree on the total rate (R-hat {1.00}–{1.02}) but settle in different "
          "modes of the log joint (R-hat {1.69}–{1.75} from sweep 1,000 on", LONG_NONPRIVATE,
          lambda r: [*_extremes(lambda r: [w["total_rate"]["r_hat"] for w in r["windows"]])(r),
                     *_extremes(lambda r: [w["log_joint"]["r_hat"] for w in r["windows"]
                                           if w["window"][0] >= 1000])(r)]),
    Quote(PAPER_SCALE, "at two levels {3.2} standard deviations apart (R-hat {1.79}", LONG_2000,
          joined(key("agreement", "total_rate", "separation"),
                 key("quantities", "total_rate", "r_hat"))),
    Quote(PAPER_SCALE, "its MAE is {12} % and {49} % above the non-private one at ε/N = 2 and 1",
          PAPER_TOPICS,
          lambda t: [100 * (m / means("nonprivate", "mae", REFERENCE)(t)[0] - 1)
                     for m in means("collapsed", "mae", (2, 1))(t)]),
    Quote(PAPER_SCALE, "ours / naive at ε = 2.5, 1, 0.75: {0.155} / {0.214}, {0.184} / {0.449}, "
          "{0.232} / {0.709}; non-private {0.153}", "results/paper/synthetic/communities.json",
          lambda r: [*(row[m] for row in _first_seed(r) for m in ("collapsed", "naive")),
                     _first_seed(r)[0]["non-private"]]),
    Quote(PAPER_SCALE, "Fig. 1 (20 actors, {8,500} sweeps, seeds {1} to {5}, {2} chains per fit)",
          "results/paper/params.yaml", lambda p: [p["synthetic_communities"]["n_iter"],
                                       p["synthetic_communities"]["seeds"][0],
                                       p["synthetic_communities"]["seeds"][-1],
                                       p["synthetic_communities"]["n_chains"]]),
    Quote(PAPER_SCALE, "in units of each network's N, ours {0.229} / {0.294} / {0.326} and naive "
          "{0.286} / {0.534} / {0.740} (non-private {0.210}); ours is below the naive method in "
          "{15} of {15} seed-level pairs", "results/paper/synthetic/communities.json",
          lambda r: [*(level[m] for m in ("collapsed", "naive") for level in r["mae_over_n"]),
                     r["mae_over_n"][0]["non-private"],
                     *_communities_over_seeds(r)[-2:]]),
    Quote(PAPER_SCALE, "naive at α0 = 0.2, 0.5, 0.8: {0.161} / {0.164}, {0.195} / {0.202}, "
          "{0.545} / {0.463}", PAPER_SYNTHETIC_TOPICS,
          lambda r: [h[m] for h in r["hellinger"] for m in ("collapsed", "naive")]),
    Quote(PAPER_SCALE, "At α0 = 0.8 ours is worse than the naive method in {2} of the {3} seeds, "
          "by {0.10} and {0.16} (in the third ours is {0.003} closer)", PAPER_SYNTHETIC_TOPICS,
          _worse_at_the_highest_noise),
    Quote(PAPER_SCALE, "the paper's CAVI is {17} times as fast as the private MCMC (the paper: "
          "20×), and the collapsed CAVI {49} times and more accurate; the paper's CAVI converged "
          "in {182} to {196} iterations in {4} of the {5} seeds and stopped at the "
          "authors' cap of {200} in the fifth", "results/paper/vi/benchmark.csv",
          _paper_cavi_speed_and_iterations, rel_tol=0.02),
    Quote(PAPER_SCALE, "{10} min {50} s of one core for `central_hmm`", STAGE_SECONDS,
          _central_hmm_minutes),
    Quote(PAPER_SCALE, "Laplace overtakes OPS at N = {8} in Fig. 2 (the paper: about 10); the "
          "measured AREs are {2.03}, {1.02}, {2.00}, {1.02} and {3.78} (theory {2}, {1}, {2}, {1}, "
          "{3.77})", "results/paper/central/beta_bernoulli.json",
          lambda r: [r["figure2"]["check"]["crossing_n"],
                     *(e["measured"] for e in r["are"]["estimators"].values()),
                     *(e["theory"] for e in r["are"]["estimators"].values())]),
    Quote(PAPER_SCALE, "finds the generator's regimes ({5} and {4}) without privacy and {6} and "
          "{4} with Laplace at ε = 5", "results/paper/central/occupancy.json",
          lambda r: [*(r["datasets"][d]["true_regimes"] for d in _STAND_INS),
                     *(r["datasets"][d]["laplace"]["n_used"] for d in _STAND_INS)]),
    Quote(PAPER_SCALE, "finds the generator's regimes ({5} and {4}) without privacy",
          "results/paper/central/occupancy.json",
          lambda r: [r["datasets"][d]["nonprivate"]["n_used"] for d in _STAND_INS]),
)

_STAND_INS = ("synthetic_afghanistan", "synthetic_iraq")


# ---------------------------------------------------------------- docs/figures.md

FIGURES = "docs/figures.md"
TOPIC_WORDS = "results/eval/enron_topic_words.csv"


def mean_distance(method, levels=LEVELS):
    """The topics' mean Hellinger distance to the non-private fit's, over topics and copies."""
    return lambda t: [t.loc[(t.method == method) & (t.epsilon_over_n == level), "distance"].mean()
                      for level in levels]


def _hellinger_with_sd(r):
    """Our mean ± sd at each α0, then the naive method's."""
    return [v for h in r["hellinger"] for v in (h["collapsed"], h["collapsed_sd"])] + \
        [v for h in r["hellinger"] for v in (h["naive"], h["naive_sd"])]


def _lower_on_average(r):
    """The α0 levels where our mean distance is below the naive method's, and the number of
    seed-level pairs where ours is lower, of all pairs."""
    lower = [h["alpha0"] for h in r["hellinger"] if h["collapsed"] < h["naive"]]
    pairs = [p["collapsed"] < p["naive"] for p in r["per_seed"]]
    return [*lower, sum(pairs), len(pairs)]


def _first_seed(r):
    """The first seed's rows of ``synthetic/communities.json``, one per ε: each method's MAE
    to the true rates under its name (a file of one network, ``levels``: that network's)."""
    if "per_seed" in r:
        return [row for row in r["per_seed"] if row["seed"] == r["seeds"][0]]
    return [{"epsilon": level["epsilon"], "non-private": r["non-private"]["mae_to_rates"],
             **{m: level[m]["mae_to_rates"] for m in ("collapsed", "naive")}}
            for level in r["levels"]]


def _communities_over_seeds(r):
    """The seeds; the smallest and largest N of their networks; ours, the naive method's and
    the non-private mean ± sd of the MAE to the true rates in units of N at each ε (the
    non-private once); the seed-level pairs where ours is below the naive method, of all."""
    levels = r["mae_over_n"]
    pairs = [row["collapsed"] < row["naive"] for row in r["per_seed"]]
    sizes = [row["N"] for row in r["per_seed"]]
    return [*r["seeds"], min(sizes), max(sizes),
            *(v for m in ("collapsed", "naive") for level in levels
              for v in (level[m], level[f"{m}_sd"])),
            levels[0]["non-private"], levels[0]["non-private_sd"], sum(pairs), len(pairs)]


_FIGURES = (
    Quote(FIGURES, "Mean distance over topics and copies: ours {0.41} / {0.44} / {0.52} at ε/N = "
          "3 / 2 / 1, naive {0.43} / {0.46} / {0.55}, collapsed CAVI {0.40} / {0.44} / {0.56}",
          TOPIC_WORDS, joined(mean_distance("collapsed"), mean_distance("naive"),
                              mean_distance("collapsed_cavi"))),
    Quote(FIGURES, "in the first seed, MAE to the true rates {0.15} / {0.18} / {0.23} (ours) vs "
          "{0.21} / {0.44} / {0.71} (naive), non-private {0.15}",
          "results/synthetic/communities.json",
          lambda r: [*(row[m] for m in ("collapsed", "naive") for row in _first_seed(r)),
                     _first_seed(r)[0]["non-private"]]),
    Quote(FIGURES, "Over seeds {1}, {2}, {3}, whose networks range from N = {0.39} to {7.13}, "
          "the MAE in units of N (mean ± sd): ours {0.24} ± {0.19} / {0.32} ± {0.22} / {0.35} ± "
          "{0.18}, naive {0.30} ± {0.14} / {0.56} ± {0.13} / {0.73} ± {0.10}, non-private {0.23} "
          "± {0.20}; ours is below the naive method in {9} of {9} seed-level pairs",
          "results/synthetic/communities.json", _communities_over_seeds),
    Quote(FIGURES, "over seeds {3}, {4}, {5} at α0 = {0.2} / {0.5} / {0.8}: ours {0.150} ± "
          "{0.014} / {0.197} ± {0.012} / {0.529} ± {0.151}, naive {0.162} ± {0.004} / {0.201} ± "
          "{0.005} / {0.458} ± {0.037} (mean ± sd). Ours is lower on average at α0 = {0.2} and {0.5} and in {6} of {9} "
          "seed-level pairs", "results/synthetic/topics.json",
          lambda r: [*r["seeds"], *(h["alpha0"] for h in r["hellinger"]),
                     *_hellinger_with_sd(r), *_lower_on_average(r)]),
    Quote(FIGURES, "the chains have not mixed in 300 sweeps (R-hat up to {1.70}", DIAGNOSE,
          lambda t: [t.loc[t.case.str.contains(_TOPIC), "r_hat"].max()]),
    Quote(FIGURES, "total rates of about {24,000} and {42,000}", DIAGNOSE,
          lambda t: sorted(chain_means(_NETWORK_CASE, "total_rate")(t)), rel_tol=0.02),
    Quote(FIGURES, "and {4} of the {4} followed rates at {98}–{100} in one chain and {29}–{86} "
          "in the other (R-hat up to {2.20})", DIAGNOSE,
          lambda t: [*_network_followed(t),
                     t.loc[t.case.str.contains(_NETWORK_CASE), "r_hat"].max()]),
    Quote(FIGURES, "centred at our draw's {0.5}", "results/central/beta_bernoulli.json",
          lambda r: [r["figure1"]["n_pos"] / r["figure1"]["n"]]),
    Quote(FIGURES, "(Laplace leads from N = {5} here", "results/central/beta_bernoulli.json",
          key("figure2", "check", "crossing_n")),
    Quote(FIGURES, "the two agree to below {1e-13}", "results/synthetic/two_geometric.json",
          key("identity", "max_abs_gap_below")),
    Quote(FIGURES, "Schofield et al.'s CAVI's rates and error, MAE {0.448} (the paper reports "
          "0.507 "
          "on its own draw); (f)–(g) add the exact collapsed CAVI (MAE {0.419}). Naive CAVI: "
          "{0.664}", VI_SYNTHETIC,
          joined(*(key("scores", m, "mae") for m in ("bessel", "collapsed", "naive")))),
)


# ---------------------------------------------------------------- docs/central.md

CENTRAL = "docs/central.md"
BETA_BERNOULLI = "results/central/beta_bernoulli.json"
HELDOUT = "results/central/heldout_loglik.csv"
CENTRAL_RUNTIME = "bench/results/central_runtime.json"


def hmm_loglik(dataset, route, epsilon=None, statistic="mean", split=None):
    """The HMM's held-out log-likelihood per record of ``route`` at ``epsilon`` on
    ``dataset``: the mean (or sd) over the hold-outs, or one hold-out's."""
    def read(t):
        rows = t[(t.dataset == dataset) & (t.model == "hmm") & (t.route == route)]
        rows = rows[rows.epsilon.isna()] if epsilon is None else rows[rows.epsilon == epsilon]
        if split is not None:
            return [rows.loc[rows.split == split, "loglik_per_record"].iloc[0]]
        values = rows.loglik_per_record
        return [values.mean() if statistic == "mean" else values.std()]
    return read


def are(estimator, field="measured"):
    """An estimator's measured (or ``theory``, ``se``) asymptotic relative efficiency."""
    return key("are", "estimators", estimator, field)


def runtime_ratio(route):
    """The HMM fit's time with ``route`` over the non-private one, on each data set."""
    return lambda r: [d["relative"][route] for d in r["results"].values()]


_IRAQ = "synthetic_iraq"

_CENTRAL = (
    Quote(CENTRAL, "(`T = 2 log 4 = {2.77}`; the paper prints 2.7)", BETA_BERNOULLI,
          key("figure1", "temperature")),
    Quote(CENTRAL, "Our data draw has `n+ = {10}`", BETA_BERNOULLI, key("figure1", "n_pos")),
    Quote(CENTRAL, "(Laplace stays ahead from `N = {5}` in this run", BETA_BERNOULLI,
          key("figure2", "check", "crossing_n")),
    Quote(CENTRAL, "at `N = {10,000}` the errors are {0.0033} (non-private sample), {0.0039} "
          "(Laplace) and {0.0189} (OPS)", BETA_BERNOULLI,
          lambda r: [r["figure2"]["curve"]["n"][-1],
                     *(r["figure2"]["curve"][m]["mean"][-1]
                       for m in ("posterior", "laplace", "ops"))]),
    Quote(CENTRAL, "`log((1 - a0)/a0) = {1.386}` for OPS at `a0 = 0.2`; ARE 1 (privatised "
          "posterior mean), 2 (one Laplace sample), `1 + T = {3.77}` (OPS)",
          "results/central/table1.csv",
          lambda t: [t.sensitivity.iloc[-1], t.are.iloc[-1]]),
    Quote(CENTRAL, "measures {2.06} ± {0.05} (one Laplace sample), {1.02} ± {0.02} (privatised "
          "mean) and {3.82} ± {0.08} (OPS)", BETA_BERNOULLI,
          joined(are("laplace_sample"), are("laplace_sample", "se"), are("laplace_mean"),
                 are("laplace_mean", "se"), are("ops"), are("ops", "se"))),
    Quote(CENTRAL, "the Enron emails as per-sender monthly events (`data_prep/events.py`, {43} "
          "senders, {387} steps, median {11} emails per step)", "data/prepared/events/summary.json",
          joined(key("senders"), key("steps"), key("median_records_per_step"))),
    Quote(CENTRAL, "Laplace leads on the Afghanistan-shaped data, within the hold-outs' spread "
          "({−6.68} vs {−6.72}), OPS (`M = 10`) on Enron ({−5.95} vs {−6.27}) and, within the "
          "spread, on the Iraq-shaped data ({−5.85} vs {−5.89})", HELDOUT,
          joined(hmm_loglik("synthetic_afghanistan", "laplace", 0.1),
                 hmm_loglik("synthetic_afghanistan", "ops_M10", 0.1),
                 hmm_loglik("enron", "ops_M10", 0.1), hmm_loglik("enron", "laplace", 0.1),
                 hmm_loglik(_IRAQ, "ops_M10", 0.1), hmm_loglik(_IRAQ, "laplace", 0.1))),
    Quote(CENTRAL, "Laplace falls to {−5.96} ± {0.16}, below OPS and the non-private model "
          "({−5.75}) and below its own {−5.75} at `ε = 3`: two of the three hold-outs drop "
          "({−6.12} and {−5.97} against {−5.81} and {−5.64} at `ε = 3`)", HELDOUT,
          joined(hmm_loglik(_IRAQ, "laplace", 10.0), hmm_loglik(_IRAQ, "laplace", 10.0, "sd"),
                 hmm_loglik(_IRAQ, "nonprivate"), hmm_loglik(_IRAQ, "laplace", 3.0),
                 hmm_loglik(_IRAQ, "laplace", 10.0, split=1),
                 hmm_loglik(_IRAQ, "laplace", 10.0, split=2),
                 hmm_loglik(_IRAQ, "laplace", 3.0, split=1),
                 hmm_loglik(_IRAQ, "laplace", 3.0, split=2))),
    Quote(CENTRAL, "in a poorer mode for all its saved sweeps ({−6.118})", HELDOUT,
          hmm_loglik(_IRAQ, "laplace", 10.0, split=1)),
    Quote(CENTRAL, "the generator's regimes ({5} of {5} on the Afghanistan-shaped data, {4} of {4} "
          "on the Iraq-shaped) and the Laplace one as many or more ({6}, where steps hold few "
          "records and the noise makes them look different; {4}); on Enron both use {8}",
          "results/central/occupancy.json",
          lambda r: [*(v for d in _STAND_INS for v in (r["datasets"][d]["nonprivate"]["n_used"],
                                                       r["datasets"][d]["true_regimes"])),
                     *(r["datasets"][d]["laplace"]["n_used"] for d in _STAND_INS),
                     *{r["datasets"]["enron"][route]["n_used"]
                       for route in ("nonprivate", "laplace")}]),
    Quote(CENTRAL, "takes about {0.4} s on one core of a 2-core machine; Laplace adds nothing "
          "({0.99}× the non-private time), OPS {1.6}–{1.9}×", CENTRAL_RUNTIME,
          lambda r: [sum(d["seconds"]["nonprivate"] for d in r["results"].values())
                     / len(r["results"]), min(runtime_ratio("laplace")(r)),
                     *_extremes(runtime_ratio("ops"))(r)]),
    Quote(CENTRAL, "took {10} min {50} s on one core of a 2-core machine shared with other work",
          STAGE_SECONDS,
          _central_hmm_minutes),
)


# ---------------------------------------------------------------- docs/scale_out.md

SCALE_OUT = "docs/scale_out.md"
DISTRIBUTED = "bench/results/distributed.json"
ACCURACY = "bench/results/accuracy.json"


def distributed_row(d, workers):
    """The measured run of ``workers`` workers at ``d`` × ``d``."""
    return lambda r: next(x for x in r["rows"] if x["D"] == d and x["workers"] == workers)


def model_check(d, workers, field):
    """A field of the distributed cost model's check of the run at ``d``, ``workers``."""
    return lambda r: [next(c for c in r["cost_model"]["checks"]
                           if c["D"] == d and c["workers"] == workers)[field]]


def curve_mae_at(run, seconds):
    """``bench.accuracy``'s chain ``run``: its MAE at the last point within ``seconds``."""
    return lambda r: [[p for p in r["curve"][run]["curve"] if p["seconds"] <= seconds][-1]["mae"]]


_SCALE_OUT = (
    Quote(SCALE_OUT, "(on the VI benchmark: MAE {0.366} after 60 s against {0.480} from a prior "
          "draw", ACCURACY, joined(curve_mae_at("collapsed_em", 60.0),
                                   curve_mae_at("collapsed", 60.0))),
    Quote(SCALE_OUT, "converged {0.3325}, the mean of two long chains", VI_BENCH,
          key("mcmc", "converged_mcmc_mae")),
    Quote(SCALE_OUT, "averaging every sweep, it is met after {88} s", VI_BENCH,
          key("mcmc", "em", "seconds_to_within_5pct_mae_from_start")),
    Quote(SCALE_OUT, "a sweep of the distributed chain takes {0.99} times the in-process one's "
          "and each worker peaks at {22}% of the in-process memory", DISTRIBUTED,
          lambda r: [1 + distributed_row(10000, 2)(r)["overhead"],
                     100 * distributed_row(10000, 2)(r)["worker_vs_in_process_peak"]]),
    Quote(SCALE_OUT, "One worker costs {7}% more per sweep than the one-thread in-process sweep "
          "at 10,000²", DISTRIBUTED,
          lambda r: [100 * distributed_row(10000, 1)(r)["overhead"]]),
    Quote(SCALE_OUT, "of a sweep's two rounds of tasks ({0.05}–{0.15} s)", DISTRIBUTED,
          lambda r: [min(x["latency_seconds"] for x in r["rows"]),
                     max(x["latency_seconds"] for x in r["rows"])]),
    Quote(SCALE_OUT, "slow each other's block passes by {1.1}–{1.6}×", DISTRIBUTED,
          lambda r: sorted(c["colocated_slowdown"] for c in r["cost_model"]["checks"]
                           if "colocated_slowdown" in c)),
    Quote(SCALE_OUT, "a bare Dask worker ({124} MiB)", DISTRIBUTED,
          lambda r: [distributed_row(10000, 2)(r)["memory_breakdown"]["bare_worker_bytes"]
                     / 2**20]),
    Quote(SCALE_OUT, "(at 10,000² with 2 workers: {161} + {133} MiB), and the engine's V-sized "
          "scratch tables once per process ({7.9} MiB at V = 10,000", DISTRIBUTED,
          lambda r: [distributed_row(10000, 2)(r)["memory_breakdown"][k] / 2**20
                     for k in ("block_bytes", "draw_bytes", "shared_table_bytes")]),
    Quote(SCALE_OUT, "it predicts them within {−2}% and {+2}% (time) and {+11}% and {−3}% "
          "(memory); the 2-worker runs' memory within {+12}% and {−2}%", DISTRIBUTED,
          lambda r: [100 * v for v in (
              *model_check(3000, 1, "time_error")(r), *model_check(10000, 1, "time_error")(r),
              *model_check(3000, 1, "memory_error")(r), *model_check(10000, 1, "memory_error")(r),
              *model_check(3000, 2, "memory_error")(r),
              *model_check(10000, 2, "memory_error")(r))]),
    Quote(SCALE_OUT, "it predicts {10}% and {30}% too little time, and with the slowdown of their "
          "block passes measured in the same run (×{1.14} and ×{1.63}) {−3}% and {+6}%",
          DISTRIBUTED,
          lambda r: [-100 * model_check(3000, 2, "time_error")(r)[0],
                     -100 * model_check(10000, 2, "time_error")(r)[0],
                     *model_check(3000, 2, "colocated_slowdown")(r),
                     *model_check(10000, 2, "colocated_slowdown")(r),
                     100 * model_check(3000, 2, "colocated_time_error")(r)[0],
                     100 * model_check(10000, 2, "colocated_time_error")(r)[0]]),
    Quote(SCALE_OUT, "the latency ({0.15} s) and the client's O((D + V) K) Gamma updates (about "
          "{2} s per sweep at 10⁶ documents)", DISTRIBUTED,
          lambda r: [r["cost_model"]["latency"],
                     r["cost_model"]["b"] * (10**6 + 10**4) * r["K"]]),
)


# ---------------------------------------------------------------- the pipeline's pages

PIPELINE = "docs/pipeline.md"
OWN_CORPUS = "docs/own_corpus.md"
SWEEP = "bench/results/sweep.json"
EVENTS_DATA = "data/prepared/events/summary.json"


def large_sweep(method, levels=LEVELS):
    """``bench.sweep large``'s seconds per sweep of ``method`` at each level."""
    return lambda r: [next(lv for lv in r["large"]["levels"] if lv["epsilon_over_n"] == e)
                      [method]["seconds"] for e in levels]


def _synthetic_minutes(record):
    """The paper run's wall minutes of the stages ``profiles/run.py --synthetic`` runs."""
    return [sum(v for k, v in record["stages"].items() if k.split(" ")[0] in SYNTHETIC_STAGES)
            / 60]


_PIPELINE = (
    Quote(PIPELINE, "the whole pipeline of {172} stages", "dvc.lock",
          lambda lock: [len(lock["stages"])]),
    Quote(PIPELINE, "(about {1} s per sweep at ε/N = 1, {0.4}–{0.7} s at 3 and 2", SWEEP,
          joined(large_sweep("collapsed", (1,)), large_sweep("collapsed", (3, 2)))),
    Quote(PIPELINE, "— {86} hours of 2 cores by the cost model of `python -m bench.tables`", SWEEP,
          lambda r: [cpu_design_hours(r)]),
    Quote(PIPELINE, "at the paper's settings ({224} min on 2 shared cores)", STAGE_SECONDS,
          _synthetic_minutes),
    Quote(PIPELINE, "the shipped Enron data ({64,256} CMU emails", EVENTS_DATA,
          key("messages_read")),
    Quote(OWN_CORPUS, "which keeps {157} of the 184 actors", NETWORK_DATA, key("actors")),
    Quote(OWN_CORPUS, "samples 1,000 of the {64,256} shipped Enron emails", EVENTS_DATA,
          key("messages_read")),
)


# ---------------------------------------------------------------- the other pages

EVALUATION = "docs/evaluation.md"
LIBRARY = "docs/library.md"
VI_PAGE = "docs/vi.md"
DESIGN = "docs/design.md"


def heldout(rule, field):
    """The prepared network's share (``entries``, ``counts``) or count of actors held out
    whole (``actors_fully_heldout``) under the mask ``rule``."""
    return key("heldout", "by_rule", rule, field)


def _mechanism_ratios(record):
    """How many times faster the default sampler is than the exact one, per level."""
    return [r["fast_over_exact"] for r in record["rows"]]


_OTHER_PAGES = (
    Quote("docs/gpu.md", "`python -m bench.gpu` on a machine with an NVIDIA H100 and {16} CPU "
          "cores", "bench/results/gpu.json", lambda r: [r["rows"][0]["cpu_threads"]]),
    Quote(EVALUATION, "a top recipient's column ({54}% of the entries, {93}% of the emails; {33} "
          "actors keep no observed entry", NETWORK_DATA,
          joined(percent(heldout("rows_cols", "entries")), percent(heldout("rows_cols", "counts")),
                 heldout("rows_cols", "actors_fully_heldout"))),
    Quote(EVALUATION, "top senders × top recipients ({10}% of the entries, {62}% of the emails)",
          NETWORK_DATA, percent(joined(heldout("block", "entries"), heldout("block", "counts")))),
    Quote(RESULTS, "this holds out {54}–{67} % of the entries and leaves {33}–{67} actors with no "
          "observed entry at all", NETWORK_DATA,
          joined(percent(heldout("rows_cols", "entries")), percent(heldout("any", "entries")),
                 heldout("rows_cols", "actors_fully_heldout"),
                 heldout("any", "actors_fully_heldout"))),
    Quote(RESULTS, "the community model accepts the {33} actors with nothing observed",
          NETWORK_DATA, heldout("rows_cols", "actors_fully_heldout")),
    Quote(RESULTS, "top-50 recipient ({10} % of the entries, {62} % of the emails; every actor "
          "stays partly observed)", NETWORK_DATA,
          percent(joined(heldout("block", "entries"), heldout("block", "counts")))),
    Quote(RESULTS, "**Network actors.** {157} actors with self-loops and bcc duplicates dropped "
          "(160 with self-loops kept; the paper has {161})", NETWORK_DATA,
          joined(key("actors"), key("paper", "actors"))),
    Quote(LIBRARY, "about {100}–{220}× slower than the default floating-point sampler",
          "bench/results/mechanism.json", _extremes(_mechanism_ratios), rel_tol=0.02),
    Quote(LIBRARY, "{2.4}–{16} M draws/s per thread", "bench/results/bessel.json",
          _extremes(lambda r: [v / 1e6 for row in r["rows"]
                               for v in (row["fixed_per_s"], row["varying_per_s"])])),
    Quote(LIBRARY, "a 10,000 × 10,000 corpus scores 50 topics in about {0.1} s",
          "bench/results/metrics.json",
          lambda r: [r["median_seconds"]["npmi(raw counts)"]
                     + r["median_seconds"]["mimno_coherence(raw counts)"]]),
    Quote(VI_PAGE, "mean has MAE {0.38}, where the default start (`init=\"data\"`) is at {0.78}. "
          "The cheaper EM start (`init=\"em\"`, {4} s)", VI_BENCH,
          lambda r: [chain_at("vi", 30.0)(r)["mae_from_start"],
                     chain_at("data", 30.0)(r)["mae_from_start"],
                     r["mcmc"]["em"]["start_seconds"]]),
    Quote(VI_PAGE, "(0.3325, two long chains) at 30 s; they get there after {88}–{108} s", VI_BENCH,
          lambda r: sorted(r["mcmc"][s]["seconds_to_within_5pct_mae_from_start"]
                           for s in ("em", "vi"))),
    Quote(VI_PAGE, "a sweep takes {0.15} s on 2 cores, and the rates need about {27} sweeps per "
          "effective sample", VI_BENCH,
          lambda r: [_chain_sweep_seconds(r),
                     r["mcmc"]["vi"]["sweeps_per_effective_sample"]]),
    Quote(VI_PAGE, "({0.151} against {0.161}), its NPMI lower ({0.242} against {0.302}), "
          "its predictive log-likelihood lower ({-0.349} against {-0.303})", TOPICS,
          joined(row("collapsed_cavi_eps1.0_rep0", "mae"), row("collapsed_eps1.0_rep0", "mae"),
                 row("collapsed_cavi_eps1.0_rep0", "npmi"), row("collapsed_eps1.0_rep0", "npmi"),
                 row("collapsed_cavi_eps1.0_rep0", "loglik"),
                 row("collapsed_eps1.0_rep0", "loglik"))),
    Quote(VI_PAGE, "counts is below that of the quick profile's 300-sweep collapsed Gibbs chain on "
          "the same copy ({0.151}", TOPICS, row("collapsed_cavi_eps1.0_rep0", "mae")),
    Quote(VI_PAGE, "A fit at the default: {0.10} s per iteration (target 0.15; text-like data "
          "{0.040}, target 0.05), {11.9} s in all (target 15), MAE {0.383}", VI_BENCH,
          joined(key("collapsed", "median_iteration_seconds"),
                 key("engines", "text", "sparse_iteration_s"), key("collapsed", "seconds"),
                 key("collapsed", "mae"))),
    Quote(DESIGN, "at 10,000² only {1}–{5} % of the true counts (and {29} % of `max(y~, 0)` at "
          "`epsilon / N = 1`)", SWEEP,
          lambda r: [100 * r["large"]["sparse_nonprivate"]["true_nonzero_fraction"],
                     100 * r["large"]["levels"][0]["true_nonzero_fraction"],
                     100 * r["large"]["levels"][0]["positive_fraction"]]),
    Quote(DESIGN, "that saves {7} % of the pass at 3000 × 10,000 (`bench/results/pass1.json`)",
          "bench/results/pass1.json",
          lambda r: [100 * (1 - r["forms"]["columns folded"]["seconds"]
                            / r["forms"]["as is"]["seconds"])]),
    Quote(DESIGN, "it costs {1.5}× the floor", "bench/results/pass1.json",
          key("forms", "rates only", "over_floor")),
    Quote(DESIGN, "the allocation of the third of the entries with `y > 0` ({35} %)",
          "bench/results/pass1.json",
          lambda r: [100 * r["forms"]["as is"]["entries_with_y_positive"] / r["entries"]]),
)


_RESULTS_CONVERGENCE = (
    Quote(RESULTS, "(total rates of about {25,000} to {60,000} over four chains, R-hat {2.87}; log "
          "joint {1.52}, called *{modes}*)", PAPER_DIAGNOSE,
          lambda t: [*_extremes(chain_means(_NETWORK_CASE, "total_rate"))(t),
                     *diagnosed(_NETWORK_CASE, "total_rate", "r_hat")(t),
                     *diagnosed(_NETWORK_CASE, "log_joint", "r_hat")(t),
                     *diagnosed(_NETWORK_CASE, "log_joint", "verdict")(t)], rel_tol=0.02),
    Quote(RESULTS, "third chain, drifts on the log joint (R-hat {1.84}) and the total rate "
          "({2.10}), and the non-private fit's six chains agree on the total rate (R-hat {1.00}) "
          "but drift apart on the log joint ({1.64})", PAPER_DIAGNOSE,
          lambda t: [*diagnosed(_TOPIC, "log_joint", "r_hat")(t),
                     *diagnosed(_TOPIC, "total_rate", "r_hat")(t),
                     *diagnosed(_NONPRIVATE_TOPIC, "total_rate", "r_hat")(t),
                     *diagnosed(_NONPRIVATE_TOPIC, "log_joint", "r_hat")(t)]),
    Quote(RESULTS, "collapsed ε/N = 1: R-hat {1.47} on the log joint, {1.65} on the total rate, up "
          "to {2.13} on followed rates) both still creep upwards (the total rate's Geweke z "
          "{−3.4} and {−6.8})", LONG,
          lambda r: [r["quantities"]["log_joint"]["r_hat"], r["quantities"]["total_rate"]["r_hat"],
                     max(v["r_hat"] for k, v in r["quantities"].items() if k.startswith("mu[")),
                     *r["agreement"]["total_rate"]["drift_z"]]),
    Quote(RESULTS, "(`mu[5875, 10]`: stationary at means {444} and {344}, {6.8} within-chain "
          "standard deviations apart", LONG,
          lambda r: [*r["agreement"]["mu[5875,10]"]["chain_means"],
                     r["agreement"]["mu[5875,10]"]["separation"]]),
    Quote(RESULTS, "the total rate agrees across chains for the non-private and the naive fits "
          "(R-hat {0.99}–{1.01}) and for ours at ε/N = 2 ({1.10}), not for ours at ε/N = 3 and 1 "
          "({1.76}, {1.65}); the log joint agrees in none ({1.4}–{2.1}", TOPIC_FITS,
          lambda t: [*_extremes(fits("total_rate_r_hat", _COUNTS_ONLY))(t),
                     *fits("total_rate_r_hat", ["collapsed_eps2.0_rep0", "collapsed_eps3.0_rep0",
                                                "collapsed_eps1.0_rep0"])(t),
                     *_extremes(fits("log_joint_r_hat"))(t)]),
)


CONVERGENCE_RECORD = "experiments/results/convergence.json"
SCALE_MOVES = "experiments/results/scale_moves.json"


_EXPERIMENTS = (
    Quote(RESULTS, "R-hat {1.8} over seeds)", CONVERGENCE_RECORD,
          lambda r: [r["topics_nonprivate"]["diagnostics"]["log_joint"]["r_hat"]]),
    Quote(NPMI, "(split R-hat {1.8} of the log joint and of the followed rates, bulk ESS ≈ {3.6} "
          "of {60} draws", CONVERGENCE_RECORD,
          lambda r: [r["topics_nonprivate"]["diagnostics"]["log_joint"]["r_hat"],
                     r["topics_nonprivate"]["diagnostics"]["log_joint"]["ess_bulk"],
                     r["topics_nonprivate"]["chains"] * r["topics_nonprivate"]["draws_per_chain"]]),
    Quote(CONVERGENCE, "how soon the chain reaches its level (about {86,000})", SCALE_MOVES,
          lambda r: [r["variants"][0]["mean_second_half"]], rel_tol=0.01),
    Quote(CONVERGENCE, "its rates lie between {0.078} and {0.133} whatever the generating rate "
          "({0.011}–{0.57})", SCALE_MOVES,
          lambda r: [r["rates_by_true_rate"][0][3], r["rates_by_true_rate"][-1][3],
                     r["rates_by_true_rate"][0][2], r["rates_by_true_rate"][-1][2]]),
    Quote(CONVERGENCE, "profile's Enron topic data ({139,338} tokens in 10⁶ entries)",
          "data/prepared/topics/summary.json", key("tokens")),
)


# ---------------------------------------------------------------- bench/README.md

BENCH = "bench/README.md"
PASS1 = "bench/results/pass1.json"
RNG = "bench/results/rng.json"
THREADS = "bench/results/threads.json"


def scaling_seconds(data, n, k, eps, threads):
    """``bench.sweep scaling``'s median seconds per sweep of one cell."""
    return lambda r: [next(c["seconds"] for c in r["scaling"]["cells"]
                           if (c["data"], c["D"], c["K"], c["epsilon_over_n"], c["threads"])
                           == (data, n, k, eps, threads))]


def cheaper_at_three(data, sizes, ks=(20, 50)):
    """How many times cheaper a 2-thread sweep is at ε/N = 3 than at 1, per size and K."""
    return lambda r: [scaling_seconds(data, n, k, 1.0, 2)(r)[0]
                      / scaling_seconds(data, n, k, 3.0, 2)(r)[0] for n in sizes for k in ks]


def true_nonzero(data, k):
    """The percentage of non-zero true counts of ``bench.sweep scaling``'s ``data`` at K = k."""
    return lambda r: [100 * next(c["true_nonzero_fraction"] for c in r["scaling"]["cells"]
                                 if c["data"] == data and c["K"] == k)]


def uniform_shares(record):
    """About how many uniforms a collapsed sweep draws (millions), and the percentage of them
    for the conditional of ``y``, the split of pass 1, pass 2, and the topic totals with the
    Gamma updates together."""
    drawn = record["uniforms_about"]
    total = sum(drawn.values())

    def share(*prefixes):
        return 100 * sum(v for name, v in drawn.items() if name.startswith(prefixes)) / total

    return [total / 1e6, share("conditional of y"), share("split of pass 1"),
            share("columns of pass 2"), share("topic totals", "Gamma updates")]


def _numpy_part_collapsed(record):
    """``bench.sweep numpy``'s seconds per sweep of the default (sparse) collapsed engine."""
    return [next(row["seconds"] for row in record["numpy"]["rows"]
                 if row["sampler"] == "lpp collapsed, sparse engine")]


def mcmc_mae(start, seconds):
    """``bench.vi mcmc``: the running mean's MAE (every sweep so far) of the chain from
    ``start`` at its last point within ``seconds``."""
    return lambda r: [chain_at(start, seconds)(r)["mae_from_start"]]


def _effective_sample(record):
    """Seconds per sweep and per effective sample of the chain from the collapsed CAVI, and
    the effective samples 30 s buy."""
    sweep = _chain_sweep_seconds(record)
    per_sample = record["mcmc"]["vi"]["sweeps_per_effective_sample"] * sweep
    return [sweep, per_sample, 30 / per_sample]


def _inference_naive(record):
    """``bench.inference``'s naive sweep at 1000², K = 50: seconds on 2 and 1 threads, those
    thread counts and the machine's cores."""
    rows = {r["threads"]: r["seconds_per_iteration"] for r in record["rows"]
            if r["method"] == "naive" and r["docs"] == 1000}
    return [rows[2], rows[1], 2, 1, record["machine"]["cpu_count"]]


_BENCH = (
    Quote(BENCH, "ours at {1.13} s at ε/N = 1 on two threads", SWEEP,
          lambda r: [r["large"]["levels"][0]["collapsed"]["seconds"]]),
    Quote(BENCH, "the chain alone in\nits process, at {0.93} s", SWEEP,
          key("large", "private_fit", "unsaved_sweep_median")),
    Quote(BENCH, "Dense true counts: {74}% of the entries are non-zero", SWEEP,
          percent(key("numpy", "true_nonzero_fraction"))),
    Quote(BENCH, "{4.7}% of the true counts are non-zero (K = 50, 10,000²), as in document–word "
          "matrices. After noise, {29}% of the entries are positive at epsilon/N = 1 and {9}% at "
          "epsilon/N = 3", SWEEP,
          lambda r: [100 * r["large"]["levels"][0]["true_nonzero_fraction"],
                     *(100 * r["large"]["levels"][i]["positive_fraction"] for i in (0, 2))]),
    Quote(BENCH, "{1.1}% of the true counts non-zero, as in the Enron paper matrix", SWEEP,
          percent(key("large", "sparse_nonprivate", "true_nonzero_fraction"))),
    Quote(BENCH, "The VI data miss the first target because {74} % of their true counts are "
          "non-zero", SWEEP, percent(key("numpy", "true_nonzero_fraction"))),
    Quote(BENCH, "ours only those of the entries drawn with `y > 0` ({35} % of them in "
          "`pass1.json`)", PASS1,
          lambda r: [100 * r["forms"]["as is"]["entries_with_y_positive"] / r["entries"]]),
    Quote(BENCH, "The authors report {0.8} s per sweep single-threaded for this problem", VI_BENCH,
          key("paper_numbers", "mcmc_seconds_per_iteration")),
    Quote(BENCH, "ours is {0.22} s with one thread and {0.11}–{0.14} s with two", SWEEP,
          joined(scaling_seconds("vi", 1000, 50, 1.0, 1),
                 _extremes(joined(scaling_seconds("vi", 1000, 50, 1.0, 2),
                                  _numpy_part_collapsed)))),
    Quote(BENCH, "On text-like data a sweep at ε/N = 3 is {1.7}–{3.2}× cheaper than at ε/N = 1; on "
          "the VI data {0.83}–{1.16}×: most of their true counts are non-zero ({42} % at K = 20, "
          "{74} % at K = 50)", SWEEP,
          joined(_extremes(cheaper_at_three("text", (1000, 3000, 10000))),
                 _extremes(cheaper_at_three("vi", (1000,))),
                 true_nonzero("vi", 20), true_nonzero("vi", 50))),
    Quote(BENCH, "With every `phi` row in cache the pass saves {7} %", PASS1,
          lambda r: [100 * (1 - r["forms"]["columns folded"]["seconds"]
                            / r["forms"]["as is"]["seconds"])]),
    Quote(BENCH, "(as is, less rates only): {12.3} ns per positive entry, {35} % of the pass",
          PASS1,
          lambda r: [r["forms"]["as is"]["ns_per_entry"] - r["forms"]["rates only"]["ns_per_entry"],
                     100 * (1 - r["forms"]["rates only"]["seconds"]
                            / r["forms"]["as is"]["seconds"])]),
    Quote(BENCH, "(`bench/results/rng.json`; {2} numba threads on a {2}-core machine for the "
          "sweep, one for the generators; the file records neither the CPU model nor the "
          "load): the engines draw from a xoshiro256+ stream per row (`lpp.randomness`); a "
          "uniform from it costs {0.82} ns, from numba's MT19937 (the engines' generator "
          "before) {7.48} ns, and a row's reseed {0.004} µs against {1.04} µs. A collapsed "
          "sweep at 3000², ε/N = 1 ({0.089} s) draws about {4.3} M uniforms, {61} % of them "
          "for the conditional of `y` (one per positive entry), {15} % for the split of pass "
          "1, {6} % for pass 2 and {18} % for the topic totals and the Gamma updates. Against "
          "MT19937 and its reseeds, the engines' generator saves about {0.017} s of the sweep "
          "({16} % of what it would take)", RNG,
          lambda r: [r["threads"], r["machine"]["cpu_count"], r["ns_per_uniform"]["xoshiro256+"],
                     r["ns_per_uniform"]["mt19937"], r["us_per_reseed"]["xoshiro256+"],
                     r["us_per_reseed"]["mt19937"], r["sweep_seconds"], *uniform_shares(r),
                     r["saving_against_mt19937_seconds"],
                     100 * r["saving_against_mt19937_seconds"]
                     / (r["sweep_seconds"] + r["saving_against_mt19937_seconds"])]),
    Quote(BENCH, "So the long chains' {0.332}–{0.333} is this sampler's converged value, not a "
          "chain that failed to mix, and it is below the paper's own {0.36} for private MCMC",
          ACCURACY,
          joined(_extremes(lambda r: [c["mae_all"] for c in r["long"]["collapsed"]["chains"]]),
                 key("long", "paper_numbers", "mcmc_mae"))),
    Quote(BENCH, "after 60 s its estimate is {10} % above the converged MAE", ACCURACY,
          lambda r: [100 * (curve_mae_at("collapsed_em", 60.0)(r)[0]
                            / r["long"]["collapsed"]["mae_all_mean"] - 1)]),
    Quote(BENCH, "(the CAVI's {11.9} s included)", VI_BENCH, key("mcmc", "vi_seconds")),
    Quote(BENCH, "The EM and the CAVI starts are at {0.383} and {0.381} after 30 s and at {0.349} "
          "and {0.352} after 90 s, against {0.781} from the default start. The CAVI's mean itself "
          "has MAE {0.383}, but the chain's draws spread around the posterior within a few sweeps "
          "whichever point they start from, and the CAVI costs {8} s more than the EM start",
          VI_BENCH,
          joined(mcmc_mae("em", 30.0), mcmc_mae("vi", 30.0), mcmc_mae("em", 90.0),
                 mcmc_mae("vi", 90.0), mcmc_mae("data", 30.0), key("collapsed", "mae"),
                 lambda r: [r["mcmc"]["vi"]["start_seconds"] - r["mcmc"]["em"]["start_seconds"]])),
    Quote(BENCH, "At {0.15} s per sweep that is {4} s per effective sample from the CAVI start, so "
          "30 s of sampling buys about {7}", VI_BENCH, _effective_sample),
    Quote(BENCH, "At most {1} % of a sweep runs on one thread", THREADS,
          lambda r: [max(100 * row["serial_share"] for row in r["bound"]["serial"].values())]),
    Quote(BENCH, "are within {3} % of each other at every thread count: the code bounds ours at "
          "about {14}× on {16} threads", THREADS,
          lambda r: [max(100 * (row["slowest_over_mean"] - 1) for row in r["bound"]["rows"]),
                     *next([row["speedup_bound"], row["threads"]] for row in r["bound"]["rows"]
                           if row["threads"] == 16)]),
    Quote(BENCH, "takes {0.17}–{0.22} s per sweep at 1000², K = 50 "
          "(`bench/results/inference.json`, method `naive`, {2} and {1} numba threads on a "
          "{2}-core machine",
          "bench/results/inference.json", _inference_naive),
)


# ---------------------------------------------------------------- docs/estimators.md

ESTIMATORS = "docs/estimators.md"
SCORE_BENCH = "bench/results/score.json"
CHOOSE_K_RECORD = "experiments/results/choose_k.json"


def _choose_k_row(case, k):
    """``experiments.choose_k``'s summary row of candidate ``k`` in ``case``."""
    return lambda r: next(row for row in r["cases"][case]["summary"] if row["k"] == k)


_ESTIMATORS = (
    Quote(ESTIMATORS, "score took {0.80} and {1.64} transforms in its two rounds (a transform "
          "{378} and {268} s, on 2 shared cores at a load average of {6.5} to {7.4}); of the "
          "second score, {387} s were its two chains and {52} s the predictive densities",
          SCORE_BENCH,
          lambda r: [*r["ratios"], *r["transform_seconds"], r["load_before"], r["load_after"],
                     r["last_score_chains_seconds"], r["last_score_predictive_seconds"]]),
    Quote(ESTIMATORS, "The non-private proxy even prefers K = 8, by {5.1} standard errors",
          CHOOSE_K_RECORD, lambda r: [_choose_k_row("nonprivate", 8)(r)["z"]]),
    Quote(ESTIMATORS, "(up to {16} nats a fold at 300 sweeps)", CHOOSE_K_RECORD,
          lambda r: [max(row["mc_spread"] for case in r["cases"].values()
                         for row in case["summary"])]),
)


QUOTES = (_RESULTS + _RESULTS_CONVERGENCE + _NPMI + _CONVERGENCE + _VARIATIONAL + _PAPER_SCALE
          + _FIGURES + _CENTRAL + _SCALE_OUT + _PIPELINE + _OTHER_PAGES + _EXPERIMENTS
          + _BENCH + _ESTIMATORS)
