"""Markdown tables of the committed benchmark results.

``python -m bench.tables`` prints them from ``bench/results/*.json``; nothing is measured and
nothing is written. The pages show them as generated blocks: :data:`README_TABLES` names each
table of ``bench/README.md``, the result files it reads and the function that makes it, and
:mod:`study.prose` renders them into the page (``python -m study.prose --write``) and fails
its checks when the page's copy differs from the results. ``docs/gpu.md`` and ``README.md``
show :func:`gpu_table` and :func:`cost_model_table` the same way.

Every table of times states the machine and the load that its file records
(:func:`conditions`): a time means little without them on a shared machine.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import NamedTuple

from bench import RESULTS


def _load(name):
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def markdown_table(header, rows):
    """A Markdown table of ``header`` and ``rows`` (each cell as ``str`` gives it)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------- machine and load

def machine_text(record, threads=None) -> str:
    """The machine a result file records, with the numba threads of the run:
    ``2 numba threads on 2 cores (AMD EPYC)``. ``threads`` (a number or words) overrides the
    machine record's thread count."""
    machine = record["machine"]
    threads = machine["numba_threads"] if threads is None else threads
    plural = "" if threads == 1 else "s"
    return (f"{threads} numba thread{plural} on {machine['cpu_count']} cores "
            f"({machine.get('cpu_model', 'CPU model not recorded')})")


def conditions(record, part=None, threads=None) -> str:
    """:func:`machine_text` (of ``part``'s own machine record where it has one, else of the
    file's), and the 1-minute load averages recorded before and after the run of ``part`` (a
    part of ``record``, or the whole): ``...; load average 1.0 before, 1.6 after``, or that
    the file records none."""
    part = record if part is None else part
    if "load_before" in part and "load_after" in part:
        load = (f"load average {part['load_before'][0]:.1f} before, "
                f"{part['load_after'][0]:.1f} after")
    else:
        load = "no load average recorded"
    return f"{machine_text(part if 'machine' in part else record, threads)}; {load}"


def part_machine(record, part: str) -> dict:
    """The machine that part ``part`` of ``record`` ran on: its own record, or the file's."""
    return record[part].get("machine", record["machine"])


def load_range(record) -> str:
    """The 1-minute load averages recorded before and after each part of ``record``, as a
    range (``0.1–1.6``)."""
    loads = [part[key][0] for part in record.values() if isinstance(part, dict)
             for key in ("load_before", "load_after") if key in part]
    return f"{min(loads):.1f}–{max(loads):.1f}"


def _verdict(met: bool) -> str:
    return "met" if met else "**not** met"


#: how the tables name the benchmarks' data sets (``bench.sweep``'s generators)
DATA_NAMES = {"vi": "the VI data", "text": "text-like data",
              "sparse_text": "sparser text-like data"}


# ---------------------------------------------------------------- bench.sweep

def scaling_cells(sweep) -> dict:
    """``bench.sweep scaling``'s cells by ``(data, D, K, epsilon_over_n, threads)``."""
    return {(c["data"], c["D"], c["K"], c["epsilon_over_n"], c["threads"]): c
            for c in sweep["scaling"]["cells"]}


def cheaper_at_three(cells, data, n, k, threads=2):
    """How many times cheaper a sweep is at ε/N = 3 than at ε/N = 1 (None without both)."""
    one, three = cells.get((data, n, k, 1.0, threads)), cells.get((data, n, k, 3.0, threads))
    return one["seconds"] / three["seconds"] if one and three else None


def numpy_table(sweep):
    """``bench.sweep numpy``: the NumPy reference and our samplers in one process, slowest
    first."""
    part = sweep["numpy"]
    rows = [(r["sampler"], f"{r['seconds']:.3f}", f"{r['speedup_vs_numpy']:.1f}×")
            for r in sorted(part["rows"], key=lambda r: -r["seconds"])]
    title = (f"{part['D']:,} × {part['V']:,}, K = {part['K']}, ε/N = "
             f"{part['epsilon_over_n']:g}, {DATA_NAMES[part['data']]}, median seconds per "
             f"sweep; {conditions(sweep, part, part['threads'])}")
    return title + "\n\n" + markdown_table(("sampler", "s / sweep", "speed-up"), rows)


def scaling_table(sweep):
    """``bench.sweep scaling``: 1 and 2 threads at each size, and how much cheaper ε/N = 3 is."""
    cells = scaling_cells(sweep)
    rows, ratios = [], []
    for (data, n, k, eps, threads), cell in cells.items():
        if threads != 1:
            continue
        two = cells.get((data, n, k, eps, 2))
        rows.append((data, f"{n:,}", k, f"{eps:g}", f"{cell['positive_fraction']:.1%}",
                     f"{cell['seconds']:.3f}", f"{two['seconds']:.3f}" if two else "–",
                     f"{cell['seconds'] / two['seconds']:.2f}" if two else "–"))
        ratio = cheaper_at_three(cells, data, n, k)
        if eps == 1.0 and ratio is not None:
            ratios.append((data, f"{n:,}", k, f"{ratio:.2f}"))
    title = ("Median seconds per sweep of the sparse collapsed engine; "
             + conditions(sweep, sweep["scaling"], "1 and 2"))
    table = markdown_table(("data", "D = V", "K", "ε/N", "positive", "1 thread (s)",
                            "2 threads (s)", "1 / 2 threads"), rows)
    ratio = markdown_table(("data", "D = V", "K", "ε/N = 1 over ε/N = 3 (2 threads)"), ratios)
    return (title + "\n\n" + table + "\n\nHow many times cheaper a sweep is at ε/N = 3:\n\n"
            + ratio)


def private_fit_table(sweep):
    """``bench.sweep large``'s ``fit_private`` run: its sweeps' times and peak memory."""
    large = sweep["large"]
    fit = large["private_fit"]
    saved = fit["saved_sweep_seconds"]
    rows = [("s per sweep, median of the last ten unsaved sweeps",
             f"**{fit['unsaved_sweep_median']:.2f}**"),
            ("s per sweep, sweeps 2–6 (the chain's costlier start)",
             f"{fit['early_sweep_median']:.2f}"),
            ("first sweep", f"{fit['iter_seconds'][0]:.2f}"),
            ("saved sweeps (the sweep alone; what saving adds: *What a saved sweep costs*)",
             ", ".join(f"{s:.2f}" for s in saved)),
            ("peak resident memory (whole process, data generation included)",
             f"{fit['peak_rss_bytes'] / 2**30:.2f} GiB")]
    title = (f"`fit_private`, {fit['D']:,} × {fit['V']:,}, K = {fit['K']}, ε/N = "
             f"{fit['epsilon_over_n']:g}, text-like data ({fit['positive_fraction']:.1%} "
             f"positive), {len(fit['iter_seconds'])} sweeps, the last {len(saved)} saved; "
             f"{conditions(sweep, large, fit['threads'])}")
    return title + "\n\n" + markdown_table(("", "value"), rows)


def level_by_threads(level):
    """A ``bench.sweep large`` level's timings by thread count: ``{1: ..., threads: ...}``
    (only the machine's threads in files written before the one-thread rounds)."""
    parts = {1: level["one_thread"]} if "one_thread" in level else {}
    return parts | {level["threads"]: level}


def floor_table(sweep):
    """``bench.sweep large``: every method against the floor kernel at each level, and the
    non-private chain on a sparser matrix."""
    large = sweep["large"]
    rows = []
    for lv in large["levels"]:
        for threads, part in level_by_threads(lv).items():
            floor, ours, naive = (part["floor"]["seconds"], part["collapsed"]["seconds"],
                                  part["naive"]["seconds"])
            rows.append((f"{lv['epsilon_over_n']:g}", f"{threads}",
                         f"{lv['positive_fraction']:.1%}", f"{floor:.3f}", f"{ours:.3f}",
                         f"{ours / floor:.2f}", f"{naive:.3f}", f"{naive / ours:.2f}",
                         f"{part['nonprivate']['seconds']:.3f}" if "nonprivate" in part
                         else "–"))
    first, sparse = large["levels"][0], large["sparse_nonprivate"]
    title = (f"Median seconds per sweep, {first['D']:,} × {first['V']:,}, K = {first['K']}, "
             f"text-like data, each level in a fresh process, its methods and thread counts "
             f"timed in alternating rounds; {conditions(sweep, large, first['threads'])}")
    return (title + "\n\n"
            + markdown_table(("ε/N", "threads", "positive", "floor (s)", "ours (s)",
                              "ours / floor", "naive (s)", "naive / ours", "non-private (s)"),
                             rows)
            + f"\n\nNon-private on {DATA_NAMES[sparse['data']]}, "
              f"{sparse['true_nonzero_fraction']:.1%} of the true counts non-zero: "
              f"{sparse['nonprivate']['seconds']:.3f} s per sweep.")


# ---------------------------------------------------------------- the targets

def _mae_at(curve, seconds, key="mae"):
    """A wall-clock curve's ``key`` at its last point within ``seconds``."""
    return [p for p in curve if p["seconds"] <= seconds][-1][key]


#: the margin of the accuracy targets: within 5 % of the converged MAE (the ``5pct`` of the
#: records' ``seconds_to_within_5pct`` keys, which bench.accuracy and bench.vi compute)
MAE_MARGIN = 0.05
MARGIN = f"{100 * MAE_MARGIN:g} %"

#: the speed targets: seconds per sweep (GiB for memory), and the factors of the ratios
SMALL_SWEEP_S, NUMPY_SPEED_UP, CHEAPER_AT_THREE = 0.04, 10, 3
LARGE_SWEEP_S, LARGE_GIB, NONPRIVATE_S, SPARSE_NONPRIVATE_S = 2, 8, 0.4, 0.15
OURS_S, OVER_FLOOR = 1.0, 2
#: ours at 2 threads against 1 (a quiet 2-core machine); lpp's non-private sweep / tomotopy's
TWO_THREADS_SPEED_UP, OVER_TOMOTOPY = 1.8, 1.0


def targets_table(sweep, accuracy, vi, threads, lda, lda_reuters):
    """The speed and accuracy targets, each with its measured result and whether it is met."""
    cells = scaling_cells(sweep)
    large = sweep["large"]
    fit, levels = large["private_fit"], {lv["epsilon_over_n"]: lv for lv in large["levels"]}
    rows = []

    text, dense = (cells[(data, 1000, 50, 1.0, 2)]["seconds"] for data in ("text", "vi"))
    rows.append((f"1000², K = 50, ε/N = 1: ≤ {SMALL_SWEEP_S:g} s per sweep on 2 threads",
                 f"{_verdict(text <= SMALL_SWEEP_S)} on text-like data ({text:.3f} s); "
                 + f"{_verdict(dense <= SMALL_SWEEP_S)} on the VI data ({dense:.3f} s)"))

    speed_up = next(r["speedup_vs_numpy"] for r in sweep["numpy"]["rows"]
                    if r["sampler"] == "lpp collapsed, sparse engine")
    rows.append((f"≥ {NUMPY_SPEED_UP:g}× the NumPy reference, side by side",
                 f"{_verdict(speed_up >= NUMPY_SPEED_UP)}: {speed_up:.1f}× (VI data)"))

    # bench.accuracy.converged_mae, read here without importing the benchmark and its numba
    converged = accuracy["long"]["collapsed"]["mae_all_mean"]
    bar, budget = (1 + MAE_MARGIN) * converged, accuracy["curve"]["budget_seconds"]
    at_budget = _mae_at(accuracy["curve"]["collapsed_em"]["curve"], budget)
    reached = vi["mcmc"]["em"]["seconds_to_within_5pct_mae_from_start"]
    rows.append((f"within {MARGIN} of the converged MAE in ≤ {budget:g} s",
                 f"{_verdict(at_budget <= bar)}: from `init=\"em\"` the running estimate is at "
                 + f"{at_budget:.3f} after {budget:g} s, the bar {bar:.3f} (the converged "
                 + f"{converged:.4f}); averaging every sweep, within {MARGIN} after "
                 + f"{reached:.0f} s (*Accuracy against wall time*)"))

    sizes = sorted({n for (data, n, *_rest) in cells if data == "text"})
    ratios = {n: [cheaper_at_three(cells, "text", n, k) for k in (20, 50)] for n in sizes}
    met = [f"{n:,}" for n in sizes if min(ratios[n]) >= CHEAPER_AT_THREE]
    missed = [f"{n:,}" for n in sizes if min(ratios[n]) < CHEAPER_AT_THREE]
    rows.append((f"ε/N = 3 at least {CHEAPER_AT_THREE:g}× cheaper than ε/N = 1 (text-like data)",
                 f"met at D = {' and '.join(met) or 'none'}; **not** at D = "
                 + f"{' and '.join(missed) or 'none'} (K = 20 / 50: "
                 + ", ".join(f"{a:.1f}× / {b:.1f}×" for a, b in ratios.values()) + ")"))

    seconds, gib = fit["unsaved_sweep_median"], fit["peak_rss_bytes"] / 2**30
    rows.append((f"10,000², K = 50, ε/N = 1: < {LARGE_SWEEP_S:g} s per sweep, < {LARGE_GIB:g} GiB",
                 f"{_verdict(seconds < LARGE_SWEEP_S and gib < LARGE_GIB)}: {seconds:.2f} s per "
                 + f"sweep, {gib:.2f} GiB"))

    nonprivate = levels[1.0]["nonprivate"]["seconds"]
    rows.append((f"10,000², non-private on the true counts ≤ {NONPRIVATE_S:g} s per sweep",
                 f"{_verdict(nonprivate <= NONPRIVATE_S)}: {nonprivate:.3f} s"))
    sparse = large["sparse_nonprivate"]
    seconds = sparse["nonprivate"]["seconds"]
    rows.append((f"non-private on a {sparse['true_nonzero_fraction']:.1%}-non-zero matrix ≤ "
                 + f"{SPARSE_NONPRIVATE_S:g} s per sweep",
                 f"{_verdict(seconds <= SPARSE_NONPRIVATE_S)}: {seconds:.3f} s"))

    def ratio(top, bottom):
        # {(epsilon/N, threads): top / bottom} over the levels and their thread counts
        return {(e, threads): part[top]["seconds"] / part[bottom]["seconds"]
                for e, lv in sorted(levels.items())
                for threads, part in level_by_threads(lv).items()}

    def at(cells):
        return "; ".join(f"{_verdict(r)} at ε/N = {e:g}, {threads} thread"
                         f"{'s' if threads > 1 else ''} ({value:.2f}×)"
                         for (e, threads), (r, value) in cells.items())

    naive_over_ours = ratio("naive", "collapsed")
    rows.append(("naive ≤ ours on the same data (10,000²)",
                 at({c: (r <= 1, r) for c, r in naive_over_ours.items()})))

    ours = levels[1.0]["collapsed"]["seconds"]
    rows.append((f"10,000², ε/N = 1: ours ≤ {OURS_S:g} s per sweep",
                 f"{_verdict(ours <= OURS_S)}: {ours:.2f} s"))
    rows.append((f"10,000²: ours ≤ {OVER_FLOOR:g}× the floor",
                 at({c: (r <= OVER_FLOOR, r)
                     for c, r in ratio("collapsed", "floor").items()})))

    scaling = threads["scaling"]
    speed_ups = {r["sweep"]: r["speedup"] for r in scaling["rows"] if r["threads"] == 2}
    if speed_ups:
        ours_two = speed_ups["collapsed"]
        rows.append((f"10,000², ε/N = 1: ours at 2 threads ≥ {TWO_THREADS_SPEED_UP:g}× its "
                     "1-thread speed",
                     f"{_verdict(ours_two >= TWO_THREADS_SPEED_UP)}: {ours_two:.2f}× (naive "
                     + f"{speed_ups['naive']:.2f}×, non-private {speed_ups['nonprivate']:.2f}×, "
                     + f"floor {speed_ups['floor']:.2f}×; `threads.json`, "
                     + f"{conditions(threads, scaling)})"))

    ratios = [(r["K"], r["lpp_over_tomotopy"]) for r in lda["rows"]]
    rows.append(("non-private LDA sweep ≤ tomotopy's, one thread (the Enron counts)",
                 f"{_verdict(max(r for _, r in ratios) <= OVER_TOMOTOPY)}: "
                 + ", ".join(f"{r:.2f}× at K = {k}" for k, r in ratios)
                 + f" (`lda.json`, {conditions(lda, threads=1)})"))
    ratios = [(r["K"], r["lpp_over_tomotopy"], r["rest_over_tomotopy"])
              for r in lda_reuters["rows"]]
    rows.append(("non-private LDA sweep ≤ tomotopy's, one thread (long documents: a corpus of "
                 "the Reuters corpus's shape)",
                 f"{_verdict(max(r for _, r, _ in ratios) <= OVER_TOMOTOPY)}: "
                 + ", ".join(f"{r:.2f}× at K = {k} ({rest:.2f}× without the topics' Gamma "
                             f"draws)" for k, r, rest in ratios)
                 + f" (`lda_reuters.json`, {conditions(lda_reuters, threads=1)})"))
    ratios = [(r["K"], r["collapsed_phi_over_tomotopy"]) for r in lda_reuters["rows"]
              if "collapsed_phi_over_tomotopy" in r]
    if ratios:
        rows.append(("the same with `TopicModel(K, collapse_phi=True)` (the topics' directions "
                     "summed out, opt-in)",
                     f"{_verdict(max(r for _, r in ratios) <= OVER_TOMOTOPY)}: "
                     + ", ".join(f"{r:.2f}× at K = {k}" for k, r in ratios)
                     + f" (`lda_reuters.json`, {conditions(lda_reuters, threads=1)})"))

    machines = sorted({machine_text({"machine": part_machine(sweep, name)})
                       for name in ("numpy", "scaling", "large") if name in sweep})
    title = (f"Times from `sweep.json`: {' and '.join(machines)}, load averages "
             f"{load_range(sweep)} during its parts, unless a row names its file. MAE from "
             "`accuracy.json` and `vi.json`.")
    return title + "\n\n" + markdown_table(("target", "result"), rows)


# ---------------------------------------------------------------- the sweep's parts

def saved_sweep_table(saved):
    """``bench.saved_sweep``: what each part of a saved sweep costs, and how the compiled
    log-joint passes compare with NumPy/SciPy."""
    rows = []
    for part, best in saved["seconds"].items():
        first = saved["calls"][part][0]
        # a new array of the data's size can cost seconds of page faults on its first call
        rows.append((part, f"{best:.3f}" + (f" ({first:.3f})" if first > 1.5 * best else "")))
    speed_up, difference = saved["log_density_speedup"], saved["relative_difference"]
    title = (f"{saved['D']:,} × {saved['V']:,}, K = {saved['K']}, ε/N = "
             f"{saved['epsilon_over_n']:g}, text-like data ({saved['positive_fraction']:.1%} "
             "positive); seconds, best of three calls, the first call in brackets where it took "
             f"over 1.5 times as long; {conditions(saved, threads=saved['threads'])}")
    terms = list(speed_up)
    note = (f"The compiled passes ({' and '.join(terms)}) are "
            f"{' and '.join(f'{speed_up[t]:.0f}×' for t in terms)} faster than NumPy/SciPy and "
            f"agree with it to {' and '.join(f'{difference[t]:.0e}' for t in terms)} (relative; "
            "the sums run in another order).")
    return title + "\n\n" + markdown_table(("part of a saved sweep", "s"), rows) + "\n\n" + note


#: how the pass-1 table names ``bench.pass1``'s forms
PASS1_FORMS = {"as is": "as is",
               "columns folded": "columns folded into 256 (every `phi` row in cache)",
               "rates only": "rates and excluded mass only (every entry unobserved)",
               "floor": "floor kernel's entry pass"}


def pass1_table(pass1):
    """``bench.pass1``: the engine's pass 1 in four forms on the same factors."""
    settings, forms = pass1["settings"], pass1["forms"]
    rows = [(PASS1_FORMS.get(name, name), f"{form['seconds']:.3f}",
             f"{form['ns_per_entry']:.1f}", f"{form['over_floor']:.2f}")
            for name, form in forms.items()]
    title = (f"{settings['rows']:,} × {settings['cols']:,}, K = {settings['k']}, ε/N = "
             f"{settings['eps']:g}, text-like data, the collapsed chain after {settings['warm']} "
             f"sweeps: {pass1['entries'] / 1e6:.2f} M positive entries, "
             f"{forms['as is']['entries_with_y_positive'] / 1e6:.2f} M of them drawn with "
             f"`y > 0`; median of {settings['repeat']} alternating calls; {conditions(pass1)}")
    return title + "\n\n" + markdown_table(("form", "s", "ns / entry", "/ floor"), rows)


# ---------------------------------------------------------------- accuracy against wall time

def protocol_table(accuracy):
    """``bench.accuracy long``: the paper's protocol with this package, beside the paper's."""
    long = accuracy["long"]
    rows = [(method, chain["seed"], f"{chain['burn_in']:,} + {chain['samples']} saved",
             f"{chain['median_iteration_seconds']:.2f}", f"{chain['mae']:.3f}",
             f"{chain['mae_all']:.3f}")
            for method in ("naive", "collapsed") for chain in long[method]["chains"]]
    paper = long["paper_numbers"]
    rows.append(("Schofield et al., appendix E (private MCMC)", "",
                 f"{paper['burn_in']:,} + {paper['collect']:,} iterations",
                 f"{paper['seconds_per_iteration']:g}, single-threaded", f"{paper['mcmc_mae']:g}",
                 ""))
    # bench.accuracy.converged_mae, read here without importing the benchmark and its numba
    converged = long["collapsed"]["mae_all_mean"]
    pooled = long["collapsed"]["mae_pooled"]
    margin = MAE_MARGIN * converged
    note = (f"The **converged MAE** that the wall-clock targets are held to is the mean of the "
            f"collapsed chains' 100-sample MAE, **{converged:.4f}** "
            f"(`bench.accuracy.converged_mae`), so {MARGIN} above it is "
            f"{converged + margin:.3f}. The MAE of the chains' pooled posterior mean is lower, "
            f"{pooled:.3f}: each chain's average still carries Monte Carlo error, here "
            f"{converged - pooled:.3f} in MAE, {100 * (converged - pooled) / margin:.0f} % of "
            f"the {MARGIN} margin.")
    title = f"The VI data; {conditions(accuracy, long)}"
    return (title + "\n\n"
            + markdown_table(("method", "seed", "iterations", "s / iteration (median)",
                              "MAE, 10 samples 100 apart (the paper's estimate)",
                              "MAE, 100 samples"), rows)
            + "\n\n" + note)


def truth_table(accuracy):
    """``bench.accuracy truth``: chains started at the true factors."""
    truth = accuracy["truth"]
    labels = {"collapsed": "private, `collapsed`",
              "nonprivate": "non-private, on true counts drawn from the same rates"}
    rows = [(label, f"{truth[name]['final_current_mae']:.3f}", f"{truth[name]['average_mae']:.3f}")
            for name, label in labels.items()]
    samples = truth["collapsed"]["samples_averaged"]
    title = f"The VI data; {conditions(accuracy, truth)}"
    return title + "\n\n" + markdown_table(
        (f"chain started at the truth ({truth['sweeps']} sweeps)", "MAE of the last sample",
         (f"MAE of the mean of {samples} samples (sweeps {truth['average_from']}–"
         f"{truth['sweeps']})")), rows)


def _start(init: str, seconds: float | None = None) -> str:
    """A chain's start as the tables write it (with its seconds, where given)."""
    if init == "data":
        return '`init="data"` (a prior draw and one sweep)'
    return f'`init="{init}"`' + (f" ({seconds:.1f} s)" if seconds is not None else "")


def curve_table(accuracy):
    """``bench.accuracy curve``: the running estimate's MAE at each quarter of the budget."""
    curve = accuracy["curve"]
    budget = curve["budget_seconds"]
    checkpoints = [budget * q / 4 for q in (1, 2, 3, 4)]
    rows = []
    for name, run in curve.items():
        if not isinstance(run, dict) or "curve" not in run:
            continue
        method = "collapsed" if name.startswith("collapsed") else "bessel"
        rows.append((_start(run["init"], run["init_seconds"]), f"{method} ({run['engine']})",
                     run["iterations"],
                     *(f"{_mae_at(run['curve'], t):.3f}" for t in checkpoints)))
    title = (f"The VI data; the running estimate averages the second half of the sweeps so far, "
             f"the start on the clock; {conditions(accuracy, curve, curve['threads'])}")
    return title + "\n\n" + markdown_table(
        ("start", "method (engine)", f"sweeps in {budget:g} s",
         *(f"MAE at {t:g} s" for t in checkpoints)), rows)


def starts_table(vi):
    """``bench.vi mcmc``: the collapsed chain from three starts, its running mean's MAE at
    each quarter of the budget, when it is within :data:`MAE_MARGIN` of the converged MAE, and
    its mixing."""
    mcmc = vi["mcmc"]
    budget = mcmc["budget_seconds"]
    checkpoints = [budget * q / 4 for q in (1, 2, 3, 4)]
    bar = (1 + MAE_MARGIN) * mcmc["converged_mcmc_mae"]

    def within(seconds):
        return f"{seconds:.0f} s" if seconds is not None else f"not in {budget:g} s"

    rows = []
    for init, label in (("data", _start("data")), ("em", _start("em")),
                        ("vi", "`init=fit.to_init()` (the collapsed CAVI's means)")):
        run = mcmc[init]
        low, high = run["sweeps_per_effective_sample_quartiles"]
        rows.append((label, f"{run['start_seconds']:.1f}",
                     run["iterations"],
                     *(f"{_mae_at(run['curve'], t, 'mae_from_start'):.3f} / "
                       f"{_mae_at(run['curve'], t):.3f}" for t in checkpoints),
                     (f"{within(run['seconds_to_within_5pct_mae_from_start'])} / "
                      f"{within(run['seconds_to_within_5pct_mae'])}"),
                     f"{run['sweeps_per_effective_sample']:.0f} ({low:.0f}–{high:.0f})"))
    title = (f"The VI data; MAE of the running mean over every sweep so far / over the second "
             f"half only, the start on the clock; {conditions(vi, mcmc, mcmc['threads'])}")
    return title + "\n\n" + markdown_table(
        ("start", "start, s", f"sweeps in {budget:g} s", *(f"{t:g} s" for t in checkpoints),
         f"within {MARGIN} (≤ {bar:.3f}) after", "sweeps per effective sample (quartiles)"),
        rows)


# ---------------------------------------------------------------- beside tomotopy, versions

def _lda_title(lda) -> str:
    """The corpus, tomotopy's version, the sweeps timed and the machine of a ``bench.lda`` run."""
    first = lda["rows"][0]
    return (f"{lda['documents']:,} documents × {lda['words']:,} words, {lda['tokens']:,} tokens "
            f"in {lda['non_zero']:,} non-zero entries; tomotopy {lda['tomotopy']}; "
            f"{first['sweeps']} sweeps of each, alternating, the medians of the last "
            f"{first['timed']}; {conditions(lda, threads=lda['threads'])}")


def lda_table(lda):
    """``bench.lda``: the non-private sweep beside tomotopy's on the Enron counts."""
    # the columns of the chain with the topics summed out where the run timed it
    summed = all("collapsed_phi" in row for row in lda["rows"])
    rows = []
    for row in lda["rows"]:
        ours, theirs = row["lpp"], row["tomotopy"]
        other = row["collapsed_phi"] if summed else None
        rows.append((row["K"], f"{1e3 * ours['seconds']:.2f}",
                     *([f"{1e3 * other['seconds']:.2f}"] if summed else []),
                     f"{1e3 * theirs['seconds']:.2f}", f"**{row['lpp_over_tomotopy']:.2f}**",
                     *([f"{row['collapsed_phi_over_tomotopy']:.2f}"] if summed else []),
                     f"{ours['tokens_per_second'] / 1e6:.1f}",
                     f"{theirs['tokens_per_second'] / 1e6:.1f}", f"{ours['npmi']:.3f}",
                     *([f"{other['npmi']:.3f}"] if summed else []), f"{theirs['npmi']:.3f}",
                     f"{ours['npmi_zero']:.3f}",
                     *([f"{other['npmi_zero']:.3f}"] if summed else []),
                     f"{theirs['npmi_zero']:.3f}"))
    return _lda_title(lda) + "\n\n" + markdown_table(
        ("K", "lpp ms / sweep", *(["lpp collapse_phi ms / sweep"] if summed else []),
         "tomotopy ms / sweep", "lpp / tomotopy",
         *(["collapse_phi / tomotopy"] if summed else []), "lpp M tokens/s",
         "tomotopy M tokens/s", "NPMI lpp", *(["NPMI collapse_phi"] if summed else []),
         "NPMI tomotopy", "NPMI (never = 0) lpp",
         *(["NPMI (never = 0) collapse_phi"] if summed else []), "NPMI (never = 0) tomotopy"),
        rows)


def lda_reuters_table(lda):
    """``bench.lda --corpus reuters``: the same on long documents, with the share of the
    topics' Gamma draws, and the chain with the topics' directions summed out
    (``collapse_phi=True``)."""
    rows = []
    for row in lda["rows"]:
        ours, theirs, summed = row["lpp"], row["tomotopy"], row["collapsed_phi"]
        rows.append((row["K"], f"{1e3 * ours['seconds']:.2f}",
                     f"{1e3 * ours['phi_draw_seconds']:.2f}", f"{1e3 * summed['seconds']:.2f}",
                     f"{1e3 * theirs['seconds']:.2f}",
                     f"**{row['lpp_over_tomotopy']:.2f}**", f"{row['rest_over_tomotopy']:.2f}",
                     f"**{row['collapsed_phi_over_tomotopy']:.2f}**",
                     f"{ours['npmi']:.3f}", f"{summed['npmi']:.3f}", f"{theirs['npmi']:.3f}",
                     f"{ours['npmi_zero']:.3f}", f"{summed['npmi_zero']:.3f}",
                     f"{theirs['npmi_zero']:.3f}"))
    return _lda_title(lda) + "\n\n" + markdown_table(
        ("K", "lpp ms / sweep", "of which the K × V Gamma draws, ms",
         "lpp collapse_phi ms / sweep", "tomotopy ms / sweep", "lpp / tomotopy",
         "lpp without them / tomotopy", "collapse_phi / tomotopy", "NPMI lpp",
         "NPMI collapse_phi", "NPMI tomotopy", "NPMI (never = 0) lpp",
         "NPMI (never = 0) collapse_phi", "NPMI (never = 0) tomotopy"), rows)


def threads_table(threads):
    """``bench.threads``: seconds per sweep at each thread count, and chains side by side."""
    scaling, side = threads["scaling"], threads["side_by_side"]
    size = (f"{scaling['D']:,} × {scaling['V']:,}, K = {scaling['K']}, "
            f"ε/N = {scaling['epsilon_over_n']:g}")
    rows = [(r["sweep"], r["threads"], f"{r['seconds']:.3f}", f"{r['speedup']:.2f}×")
            for r in scaling["rows"]]
    cells = [(c["chains"], c["threads"], f"{c['seconds_per_sweep']:.3f}",
              f"{c['sweeps_per_second']:.2f}", f"{c['vs_one_chain_on_most_threads']:.2f}×")
             for c in side["cells"]]
    text = (f"Thread counts, taking turns sweep by sweep ({size}; medians of "
            f"{scaling['rounds']} rounds; {conditions(threads, scaling)})\n\n"
            + markdown_table(("sweep", "threads", "seconds per sweep", "speed-up over 1 thread"),
                             rows)
            + f"\n\nChains of ours side by side, each its own process ({size}; "
            f"{conditions(threads, side)})\n\n"
            + markdown_table(("chains", "threads each", "seconds per sweep, each",
                              "sweeps per second, all", "against one chain on every core"),
                             cells))
    if "bound" in threads:
        text += "\n\n" + bound_table(threads)
    return text


def bound_table(threads):
    """``bench.threads bound``: the serial share of each sweep, and ours' balance over the row
    chunks with the speed-up it bounds."""
    bound = threads["bound"]
    size = f"{bound['D']:,} × {bound['V']:,}, K = {bound['K']}, ε/N = {bound['epsilon_over_n']:g}"
    serial = [(name, f"{row['seconds']:.3f}", f"{1e3 * row['serial_seconds']:.1f}",
               f"{100 * row['serial_share']:.1f} %") for name, row in bound["serial"].items()]
    chunks = [(row["threads"], row["chunks"], f"{row['slowest_over_mean']:.3f}",
               f"{row['speedup_bound']:.1f}×") for row in bound["rows"]]
    return (f"What the code allows on more cores, measured on one thread ({size}; "
            f"{conditions(threads, bound, threads=1)})\n\n"
            + markdown_table(("sweep", "seconds per sweep", "ms outside the parallel loops",
                              "serial share"), serial)
            + "\n\n" + markdown_table(("threads", "row chunks", "ours' pass 1: slowest chunk / "
                                         "mean", "bound on ours' speed-up"), chunks))


def ab_table(ab):
    """``bench.ab``: a base revision against the working tree, run by run."""
    n, _, k = ab["size"]
    rows = [(r["case"], r["engine"], ", ".join(f"{s:.3f}" for s in r["runs"]["base"]),
             ", ".join(f"{s:.3f}" for s in r["runs"]["working"]), f"{r['ratio']:.2f}")
            for r in ab["rows"]]
    title = (f"Revision `{ab['base']}` against the working tree of the run; {n:,} × {n:,}, "
             f"K = {k}, {ab['rounds']} rounds of fresh interpreters alternating the two; "
             f"{conditions(ab, threads=1)}")
    return title + "\n\n" + markdown_table(
        ("case", "engine", "base, s / sweep (runs)", "working, s / sweep (runs)",
         "working / base (medians)"), rows)


# ---------------------------------------------------------------- the page's tables

class Table(NamedTuple):
    """A generated table of ``bench/README.md``: the block's name (its markers
    ``<!-- name -->``), the result files it reads (``bench/results/<record>.json``) and the
    function of their loaded records that makes it."""

    name: str
    records: tuple
    make: Callable


README_TABLES = (
    Table("bench-targets", ("sweep", "accuracy", "vi", "threads", "lda", "lda_reuters"),
          targets_table),
    Table("bench-numpy", ("sweep",), numpy_table),
    Table("bench-scaling", ("sweep",), scaling_table),
    Table("bench-private-fit", ("sweep",), private_fit_table),
    Table("bench-floor", ("sweep",), floor_table),
    Table("bench-saved-sweep", ("saved_sweep",), saved_sweep_table),
    Table("bench-pass1", ("pass1",), pass1_table),
    Table("bench-protocol", ("accuracy",), protocol_table),
    Table("bench-truth", ("accuracy",), truth_table),
    Table("bench-curve", ("accuracy",), curve_table),
    Table("bench-starts", ("vi",), starts_table),
    Table("bench-lda", ("lda",), lda_table),
    Table("bench-lda-reuters", ("lda_reuters",), lda_reuters_table),
    Table("bench-threads", ("threads",), threads_table),
    Table("bench-ab", ("ab",), ab_table),
)


# ---------------------------------------------------------------- the GPU and the cost model

def gpu_table(gpu):
    """``bench.gpu``'s sweeps side by side (docs/gpu.md quotes this table as printed)."""
    def ms(row, key):
        return f"{row[key] * 1e3:.1f}" if key in row else "–"

    rows = [(f"{r['epsilon_over_n']:g}", f"{100 * r['positive_fraction']:.1f} %",
             f"{r['cpu_collapsed'] * 1e3:.0f}" if "cpu_collapsed" in r else "–",
             ms(r, "cuda_floor"), ms(r, "cuda_collapsed"), ms(r, "cuda_naive"),
             ms(r, "cuda_nonprivate"), f"{r['collapsed_over_floor']:.1f}")
            for r in gpu["rows"]]
    first = gpu["rows"][0]
    kernels = ", ".join(f"{name} {sec * 1e3:.1f}" for name, sec in
                        first["phases"]["kernels"].items() if sec * 1e3 >= 0.5)
    repro = all(v for k, v in gpu["reproducibility"].items() if k.startswith("identical_"))
    fit = gpu["fit"]
    title = (f"{gpu['D']:,} × {gpu['V']:,}, K = {gpu['K']}, {gpu['data']}; GPU: {gpu['device']}; "
             f"CPU: {first['cpu_threads']} threads of {gpu['cpu']}; milliseconds per sweep")
    notes = (f"The collapsed sweep at ε/N = {first['epsilon_over_n']:g} by kernel (ms, each "
             f"launch synchronised): {kernels}. A {fit['n_iter']:,}-sweep fit (burn-in "
             f"{fit['burn_in']}, every {fit['thin']}th sweep saved): {fit['seconds']:.1f} s. "
             f"Device memory in use at its peak: {gpu['device_memory_peak_bytes'] / 2**30:.1f} "
             f"GiB. The same seed repeats the chain bit for bit with 128, 32 and 512 threads per "
             f"block: {'yes' if repro else 'NO'}.")
    design = design_hours([{"collapsed": r["cuda_collapsed"], "naive": r["cuda_naive"]}
                           for r in gpu["rows"]], first["cuda_nonprivate"])
    notes += (f" At ε/N = {first['epsilon_over_n']:g} a GPU sweep is "
              f"{first['cpu_over_cuda_collapsed']:.0f} times faster than the CPU engine's on "
              f"{first['cpu_threads']} threads; at these times the paper's topic design (5 "
              f"copies × {len(gpu['rows'])} levels × {{ours, naive}} × 2 chains × 7,500 sweeps, "
              f"and the non-private reference) takes {design:.1f} hours of the GPU.")
    return title + "\n\n" + markdown_table(
        ("ε/N", "positive entries", "CPU collapsed", "CUDA floor", "CUDA collapsed",
         "CUDA naive", "CUDA non-private", "collapsed / floor"), rows) + "\n\n" + notes


#: the paper's topic design (Schein et al., Enron topics): privatized copies, chains per fit and
#: sweeps per chain, at each of its privacy levels, of ours and the naive method; and the chains
#: of the non-private reference
DESIGN_COPIES, DESIGN_CHAINS, DESIGN_SWEEPS, DESIGN_NONPRIVATE_CHAINS = 5, 2, 7500, 2


def design_hours(levels, nonprivate):
    """Hours of the paper's topic design, one fit after another, at the given seconds per
    sweep: ``levels`` one ``{"collapsed": s, "naive": s}`` per privacy level, ``nonprivate``
    the reference's seconds per sweep."""
    private = sum(lv["collapsed"] + lv["naive"] for lv in levels)
    return DESIGN_SWEEPS * (DESIGN_COPIES * DESIGN_CHAINS * private
                            + DESIGN_NONPRIVATE_CHAINS * nonprivate) / 3600


def cpu_design_hours(sweep):
    """:func:`design_hours` at ``bench.sweep large``'s measured CPU seconds per sweep."""
    levels = [{"collapsed": lv["collapsed"]["seconds"], "naive": lv["naive"]["seconds"]}
              for lv in sweep["large"]["levels"]]
    return design_hours(levels, sweep["large"]["levels"][0]["nonprivate"]["seconds"])


def cost_model_table(sweep, gpu):
    """Hours of the paper's topic design at 10,000², K = 50, from measured seconds per sweep:
    on 2 cores (``bench.sweep large``), on a GPU (``bench.gpu``), and on k machines of either
    kind (the design's fits are independent: k of them at a time)."""
    cpu_levels = sweep["large"]["levels"]
    gpu_levels = [{"collapsed": r["cuda_collapsed"], "naive": r["cuda_naive"]}
                  for r in gpu["rows"]]
    fits = DESIGN_COPIES * DESIGN_CHAINS * 2 * len(cpu_levels) + DESIGN_NONPRIVATE_CHAINS
    rows = []
    for label, total in ((f"{part_machine(sweep, 'large')['cpu_count']} CPU cores (one fit at "
                          "a time)",
                          cpu_design_hours(sweep)),
                         (f"one GPU ({gpu['device']})",
                          design_hours(gpu_levels, gpu["rows"][0]["cuda_nonprivate"]))):
        rows.append((label, f"{total:,.1f}", f"{total / 4:,.1f}", f"{total / 16:,.1f}"))
    title = (f"Hours of the paper's topic design ({DESIGN_COPIES} privatized copies × "
             f"{len(cpu_levels)} levels × {{ours, naive}} × {DESIGN_CHAINS} chains × "
             f"{DESIGN_SWEEPS:,} sweeps, and {DESIGN_NONPRIVATE_CHAINS} non-private chains: "
             f"{fits} independent fits) at 10,000 × 10,000, K = 50, from the measured seconds "
             "per sweep; k machines run k fits at a time (`profiles/run.py --jobs`, "
             "`--cluster`)")
    return title + "\n\n" + markdown_table(("one machine of", "k = 1", "k = 4", "k = 16"), rows)


def main(argv=()):
    """Print every table whose result files are present."""
    parts = []
    for table in README_TABLES:
        records = [_load(name) for name in table.records]
        if all(records):
            parts.append(f"<!-- {table.name} -->\n{table.make(*records)}")
    sweep, gpu = _load("sweep"), _load("gpu")
    if gpu:
        parts.append("<!-- gpu-table -->\n" + gpu_table(gpu))
    if gpu and "large" in sweep:
        parts.append("<!-- cost-model -->\n" + cost_model_table(sweep, gpu))
    print("\n\n".join(parts) if parts else f"no benchmark results in {RESULTS}")


if __name__ == "__main__":
    main(sys.argv[1:])
