"""Markdown tables of the committed benchmark results, for ``bench/README.md``.

``python -m bench.tables`` reads ``bench/results/sweep.json``, ``accuracy.json`` and ``gpu.json`` and prints
the tables; nothing is measured and nothing is written, so the README's numbers can be
regenerated rather than copied by hand. Parts missing from the results are skipped.
"""
from __future__ import annotations

import json
import sys

from bench import RESULTS


def _load(name):
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def markdown_table(header, rows):
    """A Markdown table of ``header`` and ``rows`` (each cell as ``str`` gives it)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def numpy_table(sweep):
    part = sweep["numpy"]
    rows = [(r["sampler"], f"{r['seconds']:.3f}", f"{r['speedup_vs_numpy']:.1f}×")
            for r in part["rows"]]
    title = (f"NumPy baseline: {part['D']} × {part['V']}, K = {part['K']}, ε/N = "
             f"{part['epsilon_over_n']:g}, {part['data']} data, {part['threads']} threads")
    return title + "\n\n" + markdown_table(("sampler", "s / sweep", "speed-up"), rows)


def scaling_table(sweep):
    cells = sweep["scaling"]["cells"]
    by_key = {(c["data"], c["D"], c["K"], c["epsilon_over_n"], c["threads"]): c for c in cells}
    rows, ratios = [], []
    for (data, n, k, eps, threads), cell in by_key.items():
        if threads != 1:
            continue
        two = by_key.get((data, n, k, eps, 2))
        rows.append((data, f"{n:,}", k, f"{eps:g}", f"{cell['positive_fraction']:.1%}",
                     f"{cell['seconds']:.3f}", f"{two['seconds']:.3f}" if two else "–",
                     f"{cell['seconds'] / two['seconds']:.2f}" if two else "–"))
        high = by_key.get((data, n, k, 3.0, 2))
        if eps == 1.0 and two and high:
            ratios.append((data, f"{n:,}", k, f"{two['seconds'] / high['seconds']:.2f}"))
    table = markdown_table(("data", "D = V", "K", "ε/N", "positive", "1 thread (s)", "2 threads (s)",
                   "1 / 2 threads"), rows)
    ratio = markdown_table(("data", "D = V", "K", "ε/N = 1 over ε/N = 3 (2 threads)"), ratios)
    return "Scaling (median s per sweep)\n\n" + table + "\n\n" + ratio


def large_table(sweep):
    part = sweep["large"]
    fit = part.get("private_fit", part)  # the whole part, in results written before the floor
    rows = [("s per sweep, last ten unsaved sweeps (median)", f"{fit['unsaved_sweep_median']:.2f}"),
            ("s per sweep, sweeps 2–6 (median)",
             f"{fit['early_sweep_median']:.2f}" if "early_sweep_median" in fit else "–"),
            ("first sweep (compiles)", f"{fit['iter_seconds'][0]:.1f}"),
            ("saved sweeps (dense mu, log joint)",
             ", ".join(f"{s:.2f}" for s in fit["saved_sweep_seconds"])),
            ("peak resident memory (GiB)", f"{fit['peak_rss_bytes'] / 2**30:.2f}"),
            ("threads", fit["threads"])]
    title = (f"{fit['D']:,} × {fit['V']:,}, K = {fit['K']}, ε/N = {fit['epsilon_over_n']:g} "
             f"(text-like, {fit['positive_fraction']:.1%} positive), fit_private")
    out = title + "\n\n" + markdown_table(("", "value"), rows)
    if "levels" in part:
        rows = []
        for lv in part["levels"]:
            floor, ours, naive = (lv["floor"]["seconds"], lv["collapsed"]["seconds"],
                                  lv["naive"]["seconds"])
            rows.append((f"{lv['epsilon_over_n']:g}", f"{lv['positive_fraction']:.1%}",
                         f"{floor:.3f}", f"{ours:.3f}", f"{ours / floor:.2f}", f"{naive:.3f}",
                         f"{naive / ours:.2f}",
                         f"{lv['nonprivate']['seconds']:.3f}" if "nonprivate" in lv else "–"))
        sparse = part["sparse_nonprivate"]
        out += ("\n\nEvery method against the floor kernel (median s per sweep; load "
                f"{part['load_before']} → {part['load_after']})\n\n"
                + markdown_table(("ε/N", "positive", "floor", "ours", "ours / floor", "naive",
                         "naive / ours", "non-private"), rows)
                + f"\n\nnon-private on a matrix with {sparse['true_nonzero_fraction']:.1%} of "
                  f"the true counts non-zero: {sparse['nonprivate']['seconds']:.3f} s per sweep")
    return out


def accuracy_table(acc):
    out = []
    if "long" in acc:
        long = acc["long"]
        rows = []
        for m in ("naive", "collapsed"):
            for chain in long[m].get("chains", [long[m]]) if m in long else ():
                rows.append((m, chain.get("seed", 1),
                             f"{chain['burn_in']} + {chain.get('collected', 1000)}",
                             f"{chain['mae']:.3f}",
                             f"{chain['mae_all']:.3f}" if "mae_all" in chain else "–"))
        out.append("The paper's protocol\n\n" + markdown_table(
            ("method", "seed", "iterations", "MAE, 10 samples 100 apart",
             "MAE, 100 samples 10 apart"), rows))
    if "curve" in acc:
        curve = acc["curve"]
        rows = []
        for name, run in curve.items():
            if not isinstance(run, dict) or "curve" not in run:
                continue
            last = run["curve"][-1]
            hit = run.get("seconds_to_within_5pct")
            rows.append((name, run["init"], f"{run['init_seconds']:.1f}", run["iterations"],
                         f"{last['mae']:.3f}", f"{hit:.0f}" if hit is not None else "not reached"))
        out.append(f"Within {curve['budget_seconds']:g} s of wall time ({curve['threads']} threads)"
                   "\n\n" + markdown_table(("chain", "start", "start (s)", "iterations", "MAE at the end",
                                   "s to within 5% of converged"), rows))
    if "truth" in acc:
        truth = acc["truth"]
        rows = [(name, f"{truth[name]['final_current_mae']:.3f}",
                 f"{truth[name]['average_mae']:.3f}", truth[name]["samples_averaged"])
                for name in ("collapsed", "nonprivate") if name in truth]
        out.append(f"Chains started at the true factors ({truth['sweeps']} sweeps)\n\n" + markdown_table(
            ("chain", "MAE, last sample", "MAE, average", "samples averaged"), rows))
    return "\n\n".join(out)


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
    for label, total in ((f"{sweep['machine']['cpu_count']} CPU cores (one fit at a time)",
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
    sweep, acc = _load("sweep"), _load("accuracy")
    parts = []
    for key, make in (("numpy", numpy_table), ("scaling", scaling_table),
                      ("large", large_table)):
        if key in sweep:
            parts.append(make(sweep))
    if acc:
        parts.append(accuracy_table(acc))
    gpu = _load("gpu")
    if gpu:
        parts.append(gpu_table(gpu))
    if gpu and "large" in sweep:
        parts.append(cost_model_table(sweep, gpu))
    if not parts:
        print("no benchmark results in", RESULTS)
        return
    machine = sweep.get("machine") or acc.get("machine") or {}
    print(f"machine: {machine.get('cpu_model', '?')}, {machine.get('cpu_count', '?')} cores, "
          f"numba {machine.get('numba', '?')}, numpy {machine.get('numpy', '?')}\n")
    print("\n\n".join(parts))


if __name__ == "__main__":
    main(sys.argv[1:])
