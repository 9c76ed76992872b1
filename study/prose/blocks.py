"""The documentation's generated blocks: each table rendered from the committed result files.

Every renderer takes the repository root and returns the block's Markdown; :data:`BLOCKS`
names the page(s) each goes into. ``python -m study.prose --write`` puts them there. The tables
of ``bench/README.md`` are :mod:`bench.tables`' (:data:`bench.tables.README_TABLES`, which
``python -m bench.tables`` prints too); :func:`bench_block` places each.
"""
from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd

from bench.tables import README_TABLES, cost_model_table, gpu_table, load_range, markdown_table
from experiments.scale_moves import RATE_QUANTILES
from study.claims import METHOD_LABELS
from study.prose import Block, load_source
from study.prose.cells import cells
from study.provenance import stage_commits
from study.recovery_map import markdown_table as recovery_table
from study.recovery_map import recovery_regions, regions_text
from study.score_tables import is_unmasked
from study.vi_benchmark import paper_table

__all__ = ["BLOCKS"]

#: how the pages write a method of the score tables
_METHOD = {**METHOD_LABELS, "collapsed_cavi": "collapsed CAVI"}


# ---------------------------------------------------------------- formatting

def _fixed(value: float, digits: int) -> str:
    """``value`` to ``digits`` decimals with a true minus sign."""
    return f"{value:.{digits}f}".replace("-", "\u2212")


def _mean_sd(cell, digits: int, sd_from: float) -> str:
    """A cell's mean, and ``± sd`` where the sd (over chains × copies) is ``sd_from`` or more."""
    text = _fixed(cell.mean, digits)
    if np.isfinite(cell.sd) and cell.sd >= sd_from:
        text += f" ± {cell.sd:.{digits}f}"
    return text


def distinct(values, least: int = 4, most: int = 7) -> list[str]:
    """``values`` in e-notation with the fewest significant digits (``least`` to ``most``)
    at which no two of them print alike (``-1.63229e8 / -1.63230e8``)."""
    for digits in range(least, most + 1):
        printed = [_sci(v, digits) for v in values]
        if len(set(printed)) == len(printed):
            break
    return printed


def _sci(value: float, digits: int) -> str:
    """``value`` in e-notation with ``digits`` significant digits and a true minus sign."""
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    return f"{mantissa}e{int(exponent)}".replace("-", "\u2212")


def short(value: float) -> str:
    """Three significant digits, never in e-notation (``1028``, ``36.0``, ``0.0615``)."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.{2 if abs(value) < 10 else 1}f}"


def _levels(cell_map) -> str:
    """The privacy levels of a method's cells, as a table header writes them."""
    return " / ".join(f"{level:g}" for level in cell_map)


# ---------------------------------------------------------------- the score tables

def network_table(table: pd.DataFrame, measure: str, *, unmasked: bool = False,
                  digits: int = 2, sd_from: float = 0.1) -> str:
    """One row per C: ``measure``'s means of ours and naive at each ε/N and of the
    non-private reference (its ± sd always, the private cells' where ``sd_from`` or more)."""
    rows_of_design = table[is_unmasked(table) == unmasked]
    rows, levels, chains = [], "", None
    for c in sorted(rows_of_design.C.dropna().unique()):
        found = {m: cells(rows_of_design, m, measure, C=c)
                 for m in ("collapsed", "naive", "nonprivate")}
        levels = _levels(found["collapsed"])
        reference = found["nonprivate"][None]
        chains = len(reference.values)
        rows.append((f"{c:g}",
                     *(" / ".join(_mean_sd(x, digits, sd_from) for x in found[m].values())
                       for m in ("collapsed", "naive")),
                     _mean_sd(reference, digits, 0.0)))
    return markdown_table(("C", f"ours, ε/N = {levels}", f"naive, ε/N = {levels}",
                           f"non-private ({chains} chains)"), rows)


#: the topic table's measures: column, label, decimals
TOPIC_MEASURES = (("mae", "MAE", 4), ("loglik", "predictive log-likelihood per entry", 3),
                  ("npmi", "NPMI (−1)", 3), ("npmi_zero", "NPMI (0, Lau et al.)", 3),
                  ("coherence", "coherence", 1))


def topic_table(table: pd.DataFrame) -> str:
    """One row per measure: ours, naive and the collapsed CAVI at each ε/N and the
    non-private reference (± sd where it shows at the decimals printed)."""
    rows, levels = [], ""
    for measure, label, digits in TOPIC_MEASURES:
        unit = 10.0 ** -digits
        parts = []
        for method in ("collapsed", "naive", "collapsed_cavi"):
            found = cells(table, method, measure)
            levels = _levels(found)
            parts.append(", ".join(_mean_sd(x, digits, unit) for x in found.values()))
        reference = cells(table, "nonprivate", measure)[None]
        rows.append((label, parts[0], parts[1], _mean_sd(reference, digits, unit), parts[2]))
    return markdown_table(("measure", f"ours, ε/N = {levels}", f"naive, ε/N = {levels}",
                           "non-private", f"collapsed CAVI, ε/N = {levels}"), rows)


def _reference_line(table: pd.DataFrame, measure: str, digits: int) -> str:
    """The all-zeros prediction's ``measure``, as the tables print it."""
    zeros = table.loc[table.method == "zeros", measure]
    return _fixed(float(zeros.iloc[0]), digits)


def network_block(source: str, measures):
    """A renderer of :func:`network_table` for each ``(measure, unmasked, digits, title)``
    (a design without rows is left out)."""
    def render(root: Path) -> str:
        table = load_source(source, root)
        parts = []
        for measure, unmasked, digits, title in measures:
            if not is_unmasked(table).eq(unmasked).any():
                continue
            zeros = _reference_line(table, "offdiag_mae" if unmasked else measure, digits)
            parts.append(f"{title} (predicting 0 everywhere: {zeros})\n\n"
                         + network_table(table, measure, unmasked=unmasked, digits=digits,
                                         sd_from=10.0 ** (1 - digits)))
        return "\n\n".join(parts)
    return render


def topics_block(source: str):
    """A renderer of :func:`topic_table` of ``source``, with the all-zeros line."""
    def render(root: Path) -> str:
        table = load_source(source, root)
        return (f"Predicting 0 everywhere: MAE {_reference_line(table, 'mae', 4)}, "
                "log-likelihood −∞\n\n" + topic_table(table))
    return render


# ---------------------------------------------------------------- convergence diagnoses

_CASE = re.compile(r"(topics|network) (\w+)(?: C=(\d+))?(?: ε/N=([\d.]+))?")
_VERDICT_ORDER = ("modes", "drifting", "agree", "unclear")


def _case_label(case: str, chains: int) -> str:
    """A ``diagnose`` case as the tables name it (``topics, collapsed ε/N = 1``)."""
    found = _CASE.search(case)
    if not found:
        return case
    data, method, c, level = found.groups()
    method = "non-private" if method == "nonprivate" else method
    text = data + (f" C = {c}" if c else "") + f", {method}"
    text += f" ε/N = {float(level):g}" if level else f" ({chains} chains)"
    return text


def _verdict_counts(verdicts) -> str:
    """How many quantities got each verdict (``2 modes + 1 drifting``)."""
    verdicts = list(verdicts)
    return " + ".join(f"{verdicts.count(v)} {v}" for v in _VERDICT_ORDER if v in verdicts)


def diagnose_table(summary: pd.DataFrame) -> str:
    """One row per diagnosed case of the diagnosis's tables: chains, schedule, R-hat
    and verdict of the log joint, the total rate and the followed rates, smallest bulk ESS."""
    rows = []
    for case, group in summary.groupby("case", sort=False):
        by = group.set_index("quantity")
        rates = group[group.quantity.str.startswith("mu[")]
        first = group.iloc[0]
        rows.append((_case_label(case, int(first.chains)), int(first.chains),
                     f"{int(first.n_iter):,} ({int(first.burn_in):,}, {int(first.thin)})",
                     int(first.draws), f"{by.r_hat['log_joint']:.2f}",
                     f"{by.r_hat['total_rate']:.2f}",
                     f"{rates.r_hat.min():.2f}–{rates.r_hat.max():.2f}",
                     f"{group.ess_bulk.min():.1f}",
                     (f"{by.verdict['log_joint']}, {by.verdict['total_rate']}, "
                     f"{_verdict_counts(rates.verdict)}")))
    return markdown_table(
        ("case", "chains", "sweeps (burn-in, thin)", "draws per chain", "R-hat: log joint",
         "R-hat: total rate", f"R-hat: `mu`, {len(rates)} entries", "bulk ESS, smallest",
         "verdicts: log joint, total rate, followed rates"), rows)


def diagnose_block(source: str):
    """A renderer of :func:`diagnose_table` of ``source``."""
    def render(root: Path) -> str:
        return diagnose_table(load_source(source, root))
    return render


def _z(values, digits: int = 1) -> str:
    """Geweke z of each chain: both of two, the range of more."""
    values = list(values)
    if len(values) > 2:
        return f"{_fixed(min(values), digits)} … {_fixed(max(values), digits)}"
    return ", ".join(_fixed(v, digits) for v in values)


def _means(values) -> str:
    """Chain means, apart: both of two, the range of more."""
    printed = distinct(values)
    return f"{printed[0]} – {printed[-1]}" if len(printed) > 2 else " / ".join(printed)


#: the records of ``profiles/long_chains.py`` (``long_<fit>.json``, ``topic_fits.csv``)
LONG_CHAINS = "experiments/results/long_chains"


def topic_fits_table(root: Path) -> str:
    """One row per paper-scale topic fit (``topic_fits.csv``), with each fit's chain means
    and Geweke z from its record ``long_<fit>.json``."""
    listing = load_source(f"{LONG_CHAINS}/topic_fits.csv", root)
    rows = []
    for fit in sorted(listing.itertuples(), key=_fit_order):
        record = load_source(f"{LONG_CHAINS}/long_{fit.fit}.json", root)
        cells_of = []
        for quantity in ("log_joint", "total_rate"):
            stats, agree = record["quantities"][quantity], record["agreement"][quantity]
            ess = stats["ess_bulk"]
            cells_of += [f"{stats['r_hat']:.2f}, {ess:.{1 if ess < 10 else 0}f}",
                         _means(sorted(agree["chain_means"]) if len(agree["chain_means"]) > 2
                                else agree["chain_means"]),
                         _z(agree["drift_z"]), agree["verdict"]]
        rows.append((_fit_label(fit.fit, int(fit.chains)), *cells_of))
    return markdown_table(("fit", "log joint: R-hat, bulk ESS", "chain means", "z", "verdict",
                           "total rate: R-hat, bulk ESS", "chain means", "z", "verdict"), rows)


def _separation(value: float) -> str:
    """A separation in within-chain sd, to two decimals below 1."""
    return f"{value:.{2 if value < 1 else 1}f}"


def _fit_order(fit) -> tuple:
    """The reference first, then ours and naive, each from ε/N = 3 to 1."""
    found = re.match(r"(\w+?)_eps([\d.]+)_rep\d+", fit.fit)
    if not found:
        return (0, 0.0)
    return (1 if found.group(1) == "collapsed" else 2, -float(found.group(2)))


def _fit_label(fit: str, chains: int) -> str:
    """A paper-scale topic fit as the tables name it (``ours, ε/N = 3``)."""
    found = re.match(r"(\w+?)_eps([\d.]+)_rep\d+", fit)
    if not found:
        return f"non-private ({chains} chains)" if fit == "nonprivate" else fit
    method, level = found.groups()
    return f"{_METHOD.get(method, method)}, ε/N = {float(level):g}"


def long_chains_table(source: str):
    """The quantities of one ``profiles/long_chains.py`` record: R-hat, bulk ESS, each
    chain's first → last saved value (log joint, total rate) or mean (a rate), the verdict
    with each chain's Geweke z and the separation."""
    def render(root: Path) -> str:
        record = load_source(source, root)
        rows = []
        for name, stats in record["quantities"].items():
            agree = record["agreement"][name]
            if name in ("log_joint", "total_rate"):
                digits = 5 if name == "log_joint" else 4
                trace = record[name]
                chain_text = [f"{_sci(a, digits)} → {_sci(b, digits)}"
                              for a, b in zip(trace["first_saved"], trace["last_saved"])]
                label = name.replace("_", " ")
            else:
                chain_text = [f"mean {m:.0f}" for m in agree["chain_means"]]
                label = f"`{name}`"
            rows.append((label, f"{stats['r_hat']:.2f}", f"{stats['ess_bulk']:.1f}",
                         *chain_text,
                         (f"{agree['verdict']} ({_z(agree['drift_z'], 2)}; "
                         f"{_separation(agree['separation'])})")))
        saved = record["saved_iterations"]
        header = ("quantity", "R-hat", "bulk ESS",
                  *(f"chain {i}" for i in range(record["n_chains"])),
                  "verdict (Geweke z of each chain; separation)")
        return (f"Saved sweeps {saved[0]:,}–{saved[-1]:,} (first → last), "
                f"{record['seconds_per_sweep']:.2f} s per sweep\n\n"
                + markdown_table(header, rows))
    return render


def convergence_experiment_table(root: Path) -> str:
    """``experiments.convergence``'s record: per case the schedule, R-hat of the log joint,
    the total rate and the followed rates, and the log joint's bulk ESS."""
    record = load_source("experiments/results/convergence.json", root)
    rows = []
    for name, case in record.items():
        if name == "machine":
            continue
        settings, stats = case["settings"], case["diagnostics"]
        rates = [v["r_hat"] for k, v in stats.items() if k.startswith("mu[")]
        data = settings["model"].replace("communities", "network")
        label = data
        if data == "network":
            label += f" C = {settings['n_components']}"
        label += (", non-private" if settings["method"] == "nonprivate"
                  else f", {settings['method']} ε/N = {_level_of(settings['source'])}")
        rows.append((label, f"{settings['n_iter']:,} ({settings['burn_in']:,})",
                     f"{stats['log_joint']['r_hat']:.2f}", f"{stats['total_rate']['r_hat']:.2f}",
                     f"{min(rates):.2f}–{max(rates):.2f}",
                     (f"{stats['log_joint']['ess_bulk']:.1f} of "
                     f"{case['chains'] * case['draws_per_chain']}")))
    return markdown_table(("case (quick profile)", "sweeps (burn-in)", "R-hat: log joint",
                           "R-hat: total rate", f"R-hat: `mu`, {len(rates)} entries",
                           "bulk ESS: log joint (of chains × draws)"), rows)


def long_nonprivate_table(root: Path) -> str:
    """``experiments.long_nonprivate``'s windows: R-hat, bulk ESS, chain means and verdict of
    the log joint and of the total rate."""
    record = load_source("experiments/results/long_nonprivate.json", root)
    rows = []
    for window in record["windows"]:
        joint, total = window["log_joint"], window["total_rate"]
        verdict = joint["verdict"] + (f" ({joint['separation']:.1f} sd apart)"
                                      if joint["verdict"] == "modes" else "")
        start, stop = window["window"]
        rows.append((f"{start:,}–{stop:,}", f"{joint['r_hat']:.2f}, {joint['ess_bulk']:.0f}",
                     " / ".join(f"{m:,.0f}" for m in joint["chain_means"]), verdict,
                     f"{total['r_hat']:.2f}, {total['ess_bulk']:.0f}", total["verdict"]))
    return markdown_table(("sweeps", "log joint: R-hat, bulk ESS", "chain means", "verdict",
                           "total rate: R-hat, bulk ESS", "verdict"), rows)


#: the NPMI record's columns: key, header, what it holds
NPMI_COLUMNS = (("fitted -1", "D=1,000, −1"), ("fitted 0", "D=1,000, 0"),
                ("10k -1", "D=10,000, −1"), ("10k 0", "D=10,000, 0"),
                ("all -1", "D=24,894, −1"), ("all 0", "D=24,894, 0"),
                ("mean-phi -1", "posterior-mean φ, −1"))


def recovery_map_block(root: Path) -> str:
    """The recovery map's cells where each method recovers the topics, and its table of the
    aligned posterior mean's support score (``results/synthetic/recovery_map.json``)."""
    record = load_source("results/synthetic/recovery_map.json", root)
    summary = record["summary"]
    return regions_text(recovery_regions(summary)) + "\n\n" + recovery_table(summary)


def npmi_anomaly_table(root: Path) -> str:
    """``experiments.npmi_anomaly``'s scores: per method and level, NPMI against each
    reference corpus under both conventions (± sd over the copies), the share of top-word
    pairs that never co-occur and the top words' mean log10 document frequency."""
    record = load_source("experiments/results/npmi_anomaly.json", root)
    sizes = record["reference_documents"]
    rows = []
    for name in sorted((n for n in record["table"] if "seed" not in n), key=_npmi_order):
        group = record["table"][name]
        scores = [f"{m:.3f}" + (f" ± {sd:.3f}" if group["n_fits"] > 1 else "")
                  for m, sd in (group[k] for k, _ in NPMI_COLUMNS[:-1])]
        never = 100 * group["never"][0]
        rows.append((_npmi_label(name, group["n_fits"]), *scores,
                     f"{group['mean-phi -1'][0]:.3f}",
                     f"{never:.{1 if never >= 0.1 else 2}f} %", f"{group['log10 DF'][0]:.2f}"))
    header = [h.replace("1,000", f"{sizes['fitted']:,}").replace("10,000", f"{sizes['10k']:,}")
              .replace("24,894", f"{sizes['all']:,}") for _, h in NPMI_COLUMNS]
    return markdown_table(("method, ε/N", *header, "never", "log10 DF"), rows)


def _npmi_order(name: str) -> tuple:
    """The reference first, then ours and naive, each from ε/N = 3 to 1."""
    found = re.match(r"(\w+) eps/N=([\d.]+)", name)
    if not found:
        return (0, 0.0)
    return (1 if found.group(1) == "collapsed" else 2, -float(found.group(2)))


def _npmi_label(name: str, fits: int) -> str:
    """An NPMI record group as the table names it (``ours (collapsed), 3``)."""
    found = re.match(r"(\w+) eps/N=([\d.]+)", name)
    if not found:
        return f"non-private ({fits} chain{'s' if fits > 1 else ''})"
    method = "ours (collapsed)" if found.group(1) == "collapsed" else found.group(1)
    return f"{method}, {float(found.group(2)):g}"


SCALE_MOVES = "experiments/results/scale_moves.json"


def _second_half(record) -> str:
    """The sweeps of a run's second half (``sweeps 201–400``)."""
    sweeps = record["settings"]["sweeps"]
    return f"sweeps {sweeps // 2 + 1}–{sweeps}"


def scale_moves_table(root: Path) -> str:
    """``experiments.scale_moves``: each variant's acceptance, total rate after 25, 100 and 200
    sweeps, and the mean and ESS of its second half."""
    record = load_source(SCALE_MOVES, root)
    rows = []
    for v in record["variants"]:
        trace = v["total_rate"]
        label = "no move" if v["variant"] == "none" else f"{v['variant']}, factor {v['step']:g}"
        rows.append((label, "" if v["acceptance"] is None else f"{v['acceptance']:.2f}",
                     " / ".join(f"{round(trace[n - 1], -1):,.0f}" for n in (25, 100, 200)),
                     f"{v['mean_second_half']:,.0f}", f"{v['ess_second_half']:.1f}"))
    half = _second_half(record)
    return markdown_table(("variant", "acceptance", "total rate after 25 / 100 / 200 sweeps",
                           f"mean, {half}", f"ESS, {half}"), rows)


def rates_by_true_rate_table(root: Path) -> str:
    """``experiments.scale_moves``: the chain without moves' posterior-mean rates by bins of
    the generating rate (its quantiles ``RATE_QUANTILES``)."""
    record = load_source(SCALE_MOVES, root)
    rows = []
    for (low, high), values in zip(itertools.pairwise(RATE_QUANTILES),
                                   record["rates_by_true_rate"]):
        label = ("below the median" if low == 0 else f"top {100 * (1 - low):.0f} %" if high == 1
                 else f"{100 * low:.0f}–{100 * high:.0f} %")
        rows.append((label, *(f"{x:.3f}" for x in values[2:])))
    return markdown_table(("generating rate (bin)", "its mean", "posterior mean",
                           "on `y_tilde > 0`", "on `y_tilde <= 0`"), rows)


def _level_of(source: str) -> str:
    """The ε/N of a private data folder's name (``eps1.0_rep0`` → ``1``)."""
    found = re.search(r"eps([\d.]+)_", source)
    return f"{float(found.group(1)):g}" if found else "?"


# ---------------------------------------------------------------- variational inference

def vi_benchmark_table(source: str):
    """The appendix E stage's table (``vi/benchmark.csv``) with the paper's numbers beside."""
    def render(root: Path) -> str:
        table = paper_table(load_source(source, root))
        best = table.mae.idxmin()
        rows = []
        for i, row in table.iterrows():
            mae = f"{row.mae:.3f}" + (f" ± {row.mae_sd:.3f}" if row.runs > 1 else "")
            paper = ("" if np.isnan(row.paper_mae) else
                     f"MAE {row.paper_mae:g}, {row.paper_seconds_per_iteration:g} s/it, "
                     f"{'~' if row.method == 'paper CAVI' else ''}"
                     f"{row.paper_iterations:g} it"
                     + (f", {row.paper_speed_up:g}×" if row.paper_speed_up != 1 else ""))
            rows.append((row.method, f"**{mae}**" if i == best else mae,
                         f"{row.seconds_per_iteration:.2g}", f"{row.iterations:.0f}",
                         short(row.seconds), short(row.speed_up), paper))
        return markdown_table(("method", "MAE", "s/iteration", "iterations", "seconds",
                               "× private MCMC's speed", "Schofield et al. (1000², K = 50)"),
                              rows)
    return render


def vi_bench_table(root: Path) -> str:
    """``bench.vi``'s runs (``bench/results/vi.json``): each CAVI, and the Gibbs chain
    started at the collapsed CAVI after 30 s and at the end of its budget."""
    vi = load_source("bench/results/vi.json", root)
    paper = vi["paper_numbers"]

    def bound(run):
        return _sci(run["collapsed_bound"], 5)

    rows = []
    for key, label in (("collapsed", "collapsed CAVI"), ("paper", "the paper's CAVI (ours)"),
                       ("naive", "naive CAVI"), ("truth", "collapsed CAVI from the true factors")):
        run = vi[key]
        start = "0" if run["start_seconds"] < 0.05 else f"{run['start_seconds']:.1f}"
        mae = f"{run['mae']:.3f}"
        rows.append((label, f"{run['median_iteration_seconds']:.2f}", run["iterations"],
                     f"{run['seconds']:.1f} ({start})",
                     f"**{mae}**" if key == "collapsed" else mae, bound(run),
                     f"{paper['vi_seconds_per_iteration']:g} s/it, ~{paper['vi_iterations']} "
                     f"it, MAE {paper['vi_mae']:g}" if key == "paper" else ""))
    chain = vi["mcmc"]["vi"]
    for budget in (30.0, vi["mcmc"]["budget_seconds"]):
        point = [p for p in chain["curve"] if p["seconds"] <= budget][-1]
        spent = point["seconds"] - chain["start_seconds"]
        rows.append((f"MCMC from the collapsed CAVI, {budget:g} s in all",
                     f"{spent / point['iteration']:.2f}", point["iteration"],
                     f"{chain['start_seconds']:.1f} + {spent:.0f}",
                     f"{point['mae_from_start']:.3f}", "",
                     f"MCMC {paper['mcmc_seconds_per_iteration']:g} s/it, MAE "
                     f"{paper['mcmc_mae']:g}" if budget != 30.0 else ""))
    first = vi["collapsed"]
    title = (f"{first['D']:,} × {first['D']:,}, K = {first['K']}, ε/N = "
             f"{first['epsilon_over_n']:g}, {first['threads']} numba threads on "
             f"{vi['machine']['cpu_count']} cores ({vi['machine'].get('cpu_model', 'CPU')}), "
             f"load averages {load_range(vi)} during the runs; MCMC MAE: the running mean of "
             "every sweep")
    return title + "\n\n" + markdown_table(
        ("method", "s/iteration", "iterations", "seconds (of which start)", "MAE",
         "exact bound", "Schofield et al."), rows)


def vi_engines_table(root: Path) -> str:
    """``bench.vi engines``: one iteration and one start sweep with each engine forced."""
    engines = load_source("bench/results/vi.json", root)["engines"]
    rows = [(label, f"{100 * e['positive_fraction']:.0f}%",
             f"{e['sparse_iteration_s']:.3f} / {e['dense_iteration_s']:.3f}",
             f"{e['sparse_start_sweep_s']:.3f} / {e['dense_start_sweep_s']:.3f}")
            for key, label in (("vi", "the VI paper's dense data"), ("text", "text-like data"))
            for e in (engines[key],)]
    return markdown_table(("data", "positive entries", "iteration: sparse / dense (s)",
                           "start sweep: sparse / dense (s)"), rows)


# ---------------------------------------------------------------- speed per sweep

def speed_table(root: Path) -> str:
    """``bench.sweep``'s headline numbers (``bench/results/sweep.json``): the dense synthetic
    problem against the NumPy reference, text-like data at 1,000², and the paper's size."""
    sweep = load_source("bench/results/sweep.json", root)
    by_sampler = {r["sampler"]: r for r in sweep["numpy"]["rows"]}
    cells = {(c["data"], c["D"], c["K"], c["epsilon_over_n"], c["threads"]): c["seconds"]
             for c in sweep["scaling"]["cells"]}
    dense = sweep["numpy"]
    threads = dense["threads"]
    collapsed = [by_sampler["lpp collapsed, sparse engine"]["seconds"],
                 cells[("vi", dense["D"], dense["K"], dense["epsilon_over_n"], threads)]]
    fit, level = sweep["large"]["private_fit"], sweep["large"]["levels"][0]
    rows = [
        ((f"{dense['D']:,} × {dense['V']:,}, K = {dense['K']}, ε/N = "
         f"{dense['epsilon_over_n']:g}, the VI paper's dense synthetic data"),
         (f"NumPy reference {by_sampler['numpy reference (bessel)']['seconds']:.2f} s; our "
         f"`bessel` {by_sampler['lpp bessel (dense)']['seconds']:.2f} s; `collapsed` "
         f"{min(collapsed):.2f}–{max(collapsed):.2f} s "
         f"({by_sampler['lpp collapsed, sparse engine']['speedup_vs_numpy']:.1f}× in the "
         "side-by-side run)")),
        ("same size, text-like sparse data",
         f"{cells[('text', dense['D'], dense['K'], dense['epsilon_over_n'], threads)]:.3f} s"),
        ((f"{fit['D']:,} × {fit['V']:,}, K = {fit['K']}, ε/N = {fit['epsilon_over_n']:g}, "
         "text-like"),
         (f"ours {fit['unsaved_sweep_median']:.2f} s ({fit['early_sweep_median']:.1f} s in the "
         f"chain's first sweeps), {fit['peak_rss_bytes'] / 2**30:.1f} GiB peak; naive "
         f"{level['naive']['seconds']:.2f} s; non-private {level['nonprivate']['seconds']:.2f} s")),
    ]
    machine = sweep["machine"]
    title = (f"Median seconds per sweep, {threads} numba threads on {machine['cpu_count']} cores "
             f"({machine.get('cpu_model', 'CPU')}); load averages {load_range(sweep)} during the "
             "runs")
    return title + "\n\n" + markdown_table(("problem", "time per sweep"), rows)


# ---------------------------------------------------------------- the distributed chain

def distributed_tables(root: Path) -> str:
    """``bench.distributed --large``: measured sweeps against the in-process chain, and the
    cost model's prediction for a million documents."""
    record = load_source("bench/results/distributed.json", root)
    rows = [(r["D"], r["workers"], f"{r['in_process_s']:.2f}", f"{r['seconds']:.2f}",
             f"{100 * r['overhead']:+.0f}%".replace("-", "−"), f"{r['bytes_per_sweep'] / 1e6:.1f}",
             f"{r['peak_bytes_per_worker'] / 2**30:.2f}",
             f"{100 * r['worker_vs_in_process_peak']:.0f}%")
            for r in record["rows"]]
    machine = record["machine"]
    title = (f"K = {record['K']}, ε/N = {record['epsilon_over_n']:g}, "
             f"{machine['cpu_count']} cores, load averages "
             f"{' / '.join(f'{x:.1f}' for x in record['load'])} (1, 5, 15 minutes) at the start")
    measured = markdown_table(("D = V", "workers", "in-process s/sweep", "distributed s/sweep",
                               "overhead", "MB moved/sweep", "peak GiB per worker",
                               "of the in-process peak"), rows)
    predicted = markdown_table(
        ("workers", "s/sweep", "GiB per worker"),
        [(t["workers"], short(t["sweep_s"]), f"{t['worker_gib']:.1f}")
         for t in record["cost_model"]["target"]])
    return (title + "\n\n" + measured + "\n\nThe cost model's prediction for 10⁶ documents × "
            "10⁴ words, one worker per machine:\n\n" + predicted)


# ---------------------------------------------------------------- the paper-scale run

PAPER_RUN = ("results/paper/params.yaml", "results/paper/stage_seconds.json")

#: the studies of the paper profile, each with the stages (names before ``@``) it runs
_RUN_STUDIES = (
    ("preparing and privatizing the data", ("prepare_topics", "prepare_network",
                                            "prepare_network_rows_cols", "privatize")),
    ("topics, MCMC", ("infer_private_topics", "infer_nonprivate_topics")),
    ("topics, variational", ("infer_vi_topics",)),
    ("topics, scoring", ("score_nonprivate_topics", "score_private_topics", "score_vi_topics",
                         "report_topics")),
    ("network, three designs", ("infer_private_network", "infer_nonprivate_network",
                                "infer_private_network_rows_cols",
                                "infer_nonprivate_network_rows_cols",
                                "infer_private_network_unmasked",
                                "infer_nonprivate_network_unmasked")),
    ("network, scoring", ("report_network", "report_network_rows_cols")),
    ("convergence diagnosis", ("diagnose_topics", "diagnose_nonprivate_topics",
                               "diagnose_network", "infer_private_chains_topics",
                               "infer_nonprivate_chains_topics", "infer_private_chains_network")),
    ("synthetic figures and the VI paper", ("synthetic_communities", "synthetic_topics",
                                            "recovery_map", "appendix_two_geometric",
                                            "vi_synthetic", "vi_benchmark")),
    ("Foulds et al.", ("prepare_events", "central_beta_bernoulli", "central_hmm",
                       "central_runtime")),
    ("claims", ("claims",)),
)


def _stage_base(stage: str) -> str:
    return re.split(r"[@ (]", stage, maxsplit=1)[0]


def _copies(n: int) -> str:
    return f"{n} privatized {'copy' if n == 1 else 'copies'}"


def _chains(section: dict) -> str:
    return (f"{section.get('n_chains', 1)} × {section['n_iter']:,} sweeps (burn-in "
            f"{section['burn_in']:,}, thin {section['thin']})")


def _run_settings(params: dict) -> dict[str, str]:
    """What each study of :data:`_RUN_STUDIES` ran, in words, from the run's settings."""
    privacy, topics, network = params["privacy"], params["topics"], params["network"]
    levels = " / ".join(f"{x:g}" for x in privacy["levels"])
    made = len(privacy.get("replicates", [0]))
    copies = len(topics.get("replicates", privacy.get("replicates", [0])))
    vi = params.get("vi_topics", {})
    synthetic = params.get("synthetic_communities", {})
    words = {
        "preparing and privatizing the data": (
            f"{_copies(made)} of each data set at ε/N = {levels}"),
        "topics, MCMC": (
            f"K = {topics['K']}; {_copies(copies)} per level, ours and naive: "
            f"{_chains(topics)} per fit; non-private: {topics.get('nonprivate_chains', 1)} "
            "chains"),
        "topics, variational": (
            f"{', '.join(_METHOD.get(m, m) for m in vi.get('methods', []))} on "
            f"{_copies(len(vi.get('replicates', [0])))} per level"),
        "network, three designs": (
            f"C = {', '.join(map(str, network['C']))}; "
            f"{_copies(len(network.get('replicates', privacy.get('replicates', [0]))))} per "
            f"level, ours and naive: {_chains(network)} per fit; non-private: "
            f"{network.get('nonprivate_chains', 1)} chains"),
    }
    if synthetic:
        # a run whose settings name one seed (``seed``) ran Fig. 1 on one network
        seeds = synthetic.get("seeds")
        fig1_seeds = f" × {len(seeds)} seeds" if seeds else ""
        fig1_chains = f" × {synthetic['n_chains']} chains" if "n_chains" in synthetic else ""
        words["synthetic figures and the VI paper"] = (
            f"Fig. 1: {synthetic['n_iter']:,} sweeps{fig1_seeds}{fig1_chains}; Fig. 3: "
            f"{params['synthetic_topics']['n_iter']:,} sweeps × "
            f"{len(params['synthetic_topics']['seeds'])} seeds{_recovery_map_words(params)}; "
            "the VI benchmark")
    hmm = params.get("central_hmm")
    if hmm:
        words["Foulds et al."] = (f"{hmm['n_splits']} held-out splits × "
                                  f"{len(hmm['epsilons'])} ε, {hmm['n_iter']} sweeps")
    return words


def _recovery_map_words(params: dict) -> str:
    """The recovery map's design in words (``''`` when the settings have none)."""
    grid = params.get("recovery_map")
    if not grid:
        return ""
    return (f"; the recovery map: {len(grid['doc_lengths'])} × {len(grid['alpha0_levels'])} "
            f"cells × {len(grid['seeds'])} seeds × {grid['n_chains']} chains, "
            f"{grid['n_iter']:,} sweeps")


def _short(revision: str) -> str:
    """A commit as the pages name it: 7 hex digits, ``+changes`` kept."""
    return f"`{revision[:7]}{revision[40:]}`"


def _stage_commits(record: dict) -> dict[str, str]:
    """The commit each recorded stage was made at (:func:`study.provenance.stage_commits`:
    ``revisions``, or the machine's for a record of one run), over the stages the record
    names (timed or given a commit)."""
    stages = {**dict.fromkeys(record.get("stages", {})), **dict.fromkeys(record.get(
        "revisions", {}))}
    return {stage: commit for stage, commit in stage_commits(record, stages).items() if commit}


def _main_commit(commits: dict[str, str], prefer: str | None = None) -> str | None:
    """The commit most of the stages were made at (``prefer`` on a tie, else the first
    named)."""
    counts = {}
    for commit in commits.values():
        counts[commit] = counts.get(commit, 0) + 1
    return max(counts, key=lambda c: (counts[c], c == prefer)) if counts else None


def _other_commits(commits: dict[str, str], main: str | None) -> str:
    """The stages (names before ``@``) made at other commits than ``main``, by commit:
    ``"synthetic_communities at `97f4aba`"``; '' when there are none."""
    others = {}
    for stage, commit in commits.items():
        if commit != main:
            others.setdefault(commit, {})[_stage_base(stage)] = None
    return "; ".join(f"{', '.join(bases)} at {_short(commit)}" for commit, bases in
                     others.items())


def _made_where(record: dict) -> str:
    """Where and at which commits the paper runs' stages ran, from their record."""
    machine = record.get("machine")
    if not machine:
        return "Made by runs whose machine and commit the record does not name"
    commits = _stage_commits(record)
    main = _main_commit(commits) or machine["revision"]
    others = _other_commits(commits, main)
    return (f"Made at commit {_short(main)}{f' ({others})' if others else ''} on "
            f"{machine['cpu_count']} cores ({machine['cpu_model']})")


def paper_run_summary(root: Path) -> str:
    """The paper profile's last run in one sentence for the README: its commit and machine,
    the case studies' copies, chains and sweeps, and the stages' wall hours."""
    words = _run_settings(load_source(PAPER_RUN[0], root))
    record = load_source(PAPER_RUN[1], root)
    hours = sum(record["stages"].values()) / 3600
    return (f"{_made_where(record)}, {hours:.0f} hours of stage wall time in all. Topics: "
            f"{words['topics, MCMC']}. Network: {words['network, three designs']}.")


def paper_run_table(root: Path) -> str:
    """The paper profile's last run: where and at which commit it ran, what each study ran
    and its stages' wall hours (``results/paper/stage_seconds.json``, ``params.yaml``)."""
    params = load_source(PAPER_RUN[0], root)
    record = load_source(PAPER_RUN[1], root)
    seconds = record["stages"]
    commits = _stage_commits(record)
    main = _main_commit(commits)
    words = _run_settings(params)
    rows, placed = [], set()
    for study, bases in _RUN_STUDIES:
        stages = [s for s in seconds if _stage_base(s) in bases]
        placed.update(stages)
        made = {s: c for s, c in commits.items() if _stage_base(s) in bases}
        if stages:
            study_main = _main_commit(made, prefer=main)
            others = _other_commits(made, study_main)
            at = (_short(study_main) if study_main else "—") + (f"; {others}" if others else "")
            rows.append((study, words.get(study, "—"), len(stages),
                         f"{sum(seconds[s] for s in stages) / 3600:.1f}", at))
    unplaced = sorted(set(seconds) - placed)
    if unplaced:
        raise ValueError(f"{PAPER_RUN[1]}: stages of no study of the run table: {unplaced} "
                         "(name them in study.prose.blocks._RUN_STUDIES)")
    total = sum(seconds.values()) / 3600
    title = (f"{_made_where(record)}; {total:.1f} hours of stage wall time in all "
             f"({len(seconds)} stages; stages that ran side by side each count their own time)")
    return title + "\n\n" + markdown_table(("study", "what ran", "stages", "stage hours",
                                            "commit"), rows)


# ---------------------------------------------------------------- topics that merge

MERGED_TOPICS = "experiments/results/merged_topics.json"
#: the rows of docs/variational.md's table: label, the cases (seeds joined by " / "), and
#: whether the run ended at the stopping rule's last iteration or at the trace's last point
_MERGED_ROWS = (
    ("collapsed CAVI, default start, seeds 0 / 1 / 2", ["cavi seed=0", "cavi seed=1",
                                                       "cavi seed=2"]),
    ("the same, seed 0, run on to 500 iterations (tol 0)", "trace"),
    ("collapsed CAVI from the true topics", ["cavi-from-truth"]),
    ("collapsed CAVI from the Gibbs posterior mean, seeds 0 / 1 / 2",
     ["cavi-from-gibbs seed=0", "cavi-from-gibbs seed=1", "cavi-from-gibbs seed=2"]),
    ("collapsed CAVI, random start (`em_sweeps=0`)", ["cavi-random seed=0"]),
    ("collapsed CAVI, EM start on the true counts", ["cavi-true-start seed=0"]),
    ("collapsed CAVI, a0 = 0.3 / 1", ["cavi a0=0.3 seed=0", "cavi a0=1.0 seed=0"]),
    ("Gibbs (collapsed, `init=\"em\"`, 200 sweeps, mean of the last 100), seeds 0 / 1 / 2",
     ["gibbs seed=0", "gibbs seed=1", "gibbs seed=2"]),
    ("non-private CAVI of the true counts", ["nonprivate seed=0"]),
)


def _thousands(rate: float) -> str:
    return f"{rate / 1000:.1f}k"


def merged_topics_table(root: Path) -> str:
    """``experiments.merged_topics`` at epsilon/N = 1: per fit, the distinct and live topics,
    the Hellinger distance to the true topics, the total rate and the exact bound (the best
    bound in bold)."""
    record = load_source(MERGED_TOPICS, root)
    runs = {row["case"]: row for row in record["runs"]["1.0"]["rows"]}
    bounds = [r["bound"] for r in runs.values() if r.get("bound") is not None
              and not r["case"].startswith(("truth", "gibbs"))]
    best = max(bounds)

    def bound(value):
        if value is None:
            return ""
        text = f"{value / 1e6:.4f}e6".replace("-", "\u2212")
        return f"**{text}**" if value == best else text

    rows = []
    for label, cases in _MERGED_ROWS:
        if cases == "trace":
            last = runs["cavi seed=0"]["trace"][-1]
            rows.append((label, str(last[1]), str(last[2]), "", _thousands(last[3]),
                         bound(last[4])))
            continue
        fits = [runs[c] for c in cases]
        gibbs = cases[0].startswith("gibbs")
        rows.append((label, " / ".join(str(f["distinct"]) for f in fits),
                     " / ".join(str(f["live"]) for f in fits),
                     " / ".join(f"{f['hellinger']:.2f}" for f in fits),
                     " / ".join(_thousands(f["total_rate"]) for f in fits),
                     "" if gibbs or all(f.get("bound") is None for f in fits)
                     else " / ".join(bound(f.get("bound")) for f in fits)))
    return markdown_table(("fit (ε/N = 1, K = 20)", "distinct", "live", "Hellinger",
                           "total rate", "exact bound"), rows)


# ---------------------------------------------------------------- choosing K under privacy

CHOOSE_K = "experiments/results/choose_k.json"
#: the cases of docs/estimators.md's table, in its order, with how the table names them
_CHOOSE_K_CASES = (("eps=1", "ε/N = 1"), ("eps=3", "ε/N = 3"),
                   ("nonprivate", "non-private (true counts)"))


def choose_k_table(root: Path) -> str:
    """``experiments.choose_k``: per noise level and candidate K, the mean score per entry,
    the held-out total's paired difference to the true K with its standard error over the
    folds and their ratio, the folds it won, and the score's Monte Carlo spread."""
    record = load_source(CHOOSE_K, root)
    k_true = record["k_true"]
    rows = []
    for case, label in _CHOOSE_K_CASES:
        for r in record["cases"][case]["summary"]:
            same = r["k"] == k_true
            rows.append((label, str(r["k"]), _fixed(r["score"], 4),
                         "" if same else f"{_fixed(r['diff'], 0)} ± {r['se']:.0f}",
                         "" if same else _fixed(r["z"], 1),
                         str(r["best_folds"]), f"{r['mc_spread']:.0f}"))
    n_folds = record["invocation"]["folds"]
    header = ("data", "K", "score per entry", f"held-out total − K = {k_true} (nats)", "z",
              f"best of {n_folds} folds", "MC spread (nats)")
    return markdown_table(header, rows)


NETWORK_HELDOUT = "experiments/results/network_heldout.json"
#: the rows of the held-out table: the experiment's name of each prediction, and its label
_HELDOUT_ROWS = (
    ("zeros", "zero everywhere"),
    ("mean_private", "mean of the observed entries (of `y~` for the private copies)"),
    ("rank1_true", "rank-one Poisson, maximum likelihood on the true counts"),
    ("rank1_naive", "rank-one Poisson, maximum likelihood on `max(y~, 0)`"),
    ("rank1_private", "rank-one Poisson, the private collapsed sampler on `y~`"),
    ("collapsed", "ours (`collapsed`)"),
    ("naive", "naive"),
    ("nonprivate", "non-private (five chains)"),
)
_COMMUNITY_METHODS = ("collapsed", "naive", "nonprivate")


def network_heldout_table(root: Path) -> str:
    """``experiments.network_heldout``: each prediction's held-out MAE and link AUC on both
    masks, the community models at C = 5, means over chains x copies x epsilon/N."""
    record = load_source(NETWORK_HELDOUT, root)

    def mean(design, name, measure):
        values = [r[measure] for r in record["designs"][design]["scores"]
                  if r["method"] == name and (name not in _COMMUNITY_METHODS or r["C"] == 5)]
        return sum(values) / len(values)

    def auc(value):
        return "0.5" if value == 0.5 else f"{value:.3f}"

    rows = [(label, f"{mean('network', name, 'mae'):.1f}", auc(mean("network", name, "auc")),
             f"{mean('network_rows_cols', name, 'mae'):.2f}",
             auc(mean("network_rows_cols", name, "auc")))
            for name, label in _HELDOUT_ROWS]
    header = ("prediction (C = 5; mean over chains × copies × ε/N)", "`block` MAE",
              "`block` link AUC", "`rows_cols` MAE", "`rows_cols` link AUC")
    return markdown_table(header, rows)


# ---------------------------------------------------------------- the benchmarks' page

BENCH_README = "bench/README.md"


def bench_block(table) -> Block:
    """The block of ``bench/README.md`` that one of :data:`bench.tables.README_TABLES` fills,
    from its result files."""
    sources = tuple(f"bench/results/{record}.json" for record in table.records)

    def render(root: Path) -> str:
        return table.make(*(load_source(source, root) for source in sources))
    return Block(table.name, (BENCH_README,), sources, render)


# ---------------------------------------------------------------- the blocks

BLOCKS = (
    Block("cost-model", ("README.md",), ("bench/results/sweep.json", "bench/results/gpu.json"),
          lambda root: cost_model_table(load_source("bench/results/sweep.json", root),
                                        load_source("bench/results/gpu.json", root))),
    Block("gpu-table", ("docs/gpu.md",), ("bench/results/gpu.json",),
          lambda root: gpu_table(load_source("bench/results/gpu.json", root))),
    Block("network-quick", ("docs/results.md",), ("results/eval/enron_network.csv",),
          network_block("results/eval/enron_network.csv",
                        (("mae", False, 2, ("Reconstruction MAE over the observed "
                                           "off-diagonal entries")),))),
    Block("convergence-experiment", ("docs/convergence.md",),
          ("experiments/results/convergence.json",), convergence_experiment_table),
    Block("long-nonprivate", ("docs/convergence.md",),
          ("experiments/results/long_nonprivate.json",), long_nonprivate_table),
    Block("scale-moves", ("docs/convergence.md",), (SCALE_MOVES,), scale_moves_table),
    Block("rates-by-true-rate", ("docs/convergence.md",), (SCALE_MOVES,),
          rates_by_true_rate_table),
    Block("recovery-map", ("docs/figures.md",), ("results/synthetic/recovery_map.json",),
          recovery_map_block),
    Block("npmi-anomaly", ("docs/npmi.md",), ("experiments/results/npmi_anomaly.json",),
          npmi_anomaly_table),
    Block("diagnose-quick", ("docs/results.md", "docs/convergence.md"),
          ("results/diagnostics",), diagnose_block("results/diagnostics")),
    Block("diagnose-paper", ("docs/convergence.md",),
          ("results/paper/diagnostics",), diagnose_block("results/paper/diagnostics")),
    Block("long-chains", ("docs/convergence.md",),
          (f"{LONG_CHAINS}/long_collapsed_eps1.0_rep0.json",),
          long_chains_table(f"{LONG_CHAINS}/long_collapsed_eps1.0_rep0.json")),
    Block("long-chains-2000", ("docs/convergence.md",),
          (f"{LONG_CHAINS}/long_collapsed_eps1.0_rep0_2000.json",),
          long_chains_table(f"{LONG_CHAINS}/long_collapsed_eps1.0_rep0_2000.json")),
    Block("topic-fits", ("docs/convergence.md",),
          (f"{LONG_CHAINS}/topic_fits.csv", f"{LONG_CHAINS}/long_*.json"), topic_fits_table),
    Block("vi-bench", ("docs/variational.md",), ("bench/results/vi.json",), vi_bench_table),
    Block("merged-topics", ("docs/variational.md",), (MERGED_TOPICS,), merged_topics_table),
    Block("choose-k", ("docs/estimators.md",), (CHOOSE_K,), choose_k_table),
    Block("network-heldout", ("docs/evaluation.md",), (NETWORK_HELDOUT,),
          network_heldout_table),
    Block("vi-engines", ("docs/vi.md",), ("bench/results/vi.json",), vi_engines_table),
    Block("vi-benchmark-quick", ("docs/variational.md",), ("results/vi/benchmark.csv",),
          vi_benchmark_table("results/vi/benchmark.csv")),
    Block("vi-benchmark-paper", ("docs/paper_scale.md",), ("results/paper/vi/benchmark.csv",),
          vi_benchmark_table("results/paper/vi/benchmark.csv")),
    Block("network-paper", ("docs/paper_scale.md",), ("results/paper/eval/enron_network.csv",),
          network_block("results/paper/eval/enron_network.csv", (
              ("mae", False, 2, "Reconstruction MAE over the observed off-diagonal entries"),
              ("heldout_mae", False, 1, "Held-out MAE (top senders × top recipients)"),
              ("mae", True, 2, ("The arXiv design: separate runs fitting every entry, MAE over "
                               "every off-diagonal entry"))))),
    Block("network-rows-cols-paper", ("docs/paper_scale.md",),
          ("results/paper/eval/enron_network_rows_cols.csv",),
          network_block("results/paper/eval/enron_network_rows_cols.csv", (
              ("heldout_mae", False, 2, "Held-out MAE under the paper's reading"),))),
    Block("topics-paper", ("docs/paper_scale.md",), ("results/paper/eval/enron_topics.csv",),
          topics_block("results/paper/eval/enron_topics.csv")),
    Block("paper-run", ("docs/paper_scale.md",), PAPER_RUN, paper_run_table),
    Block("paper-run-summary", ("README.md",), PAPER_RUN, paper_run_summary),
    Block("speed", ("docs/scale_out.md",), ("bench/results/sweep.json",), speed_table),
    Block("distributed", ("docs/scale_out.md",), ("bench/results/distributed.json",),
          distributed_tables),
    *(bench_block(table) for table in README_TABLES),
)
