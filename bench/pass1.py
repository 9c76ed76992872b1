"""Where pass 1 of the collapsed sparse sweep spends its time, against the floor kernel.

    python -m bench.pass1 [--quick] [--rows D] [--cols V] [--k K] [--eps E] [--warm W]
                          [--repeat R] [--no-write]

On text-like data of D x V (``bench.sweep``'s generator; V = 10,000 by default, so ``phi``'s
V x K table exceeds the L2 cache), after W sweeps of the collapsed chain, the engine's own
pass-1 kernel is timed on the same factors in one process, in alternating order, in four forms:

* ``as is``: the sweep's pass 1;
* ``columns folded``: the same entries with their columns taken modulo 256, so that every
  ``phi`` row the pass reads sits in a 100 kB table that stays in cache; if the pass were bound
  by memory traffic on ``phi``'s columns, this would run much faster (its draws differ: the
  rates of other columns, so it allocates a different number of entries; both are printed);
* ``rates only``: every entry marked unobserved, so that each still forms its rate and
  excluded mass (the K-term loop) but draws nothing and allocates nothing;
* ``floor``: the floor kernel's entry pass (:mod:`bench.floor`) on the same positive entries.

``as is`` minus ``rates only`` is the cost of the two-piece conditional draw and the
allocation. Writes ``bench/results/pass1.json`` (not with ``--quick``).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from bench import machine, write_results
from bench.floor import FloorKernel, _floor_pass
from bench.sweep import _generate, _load
from lpp.randomness import Tag, derive_seed
from lpp.inference import GibbsSampler, TopicModel
from lpp.inference.engines import sparse_topics
from lpp.inference.privacy import noise_levels

#: columns the folded form keeps: 256 rows of phi^T, K = 50 doubles each, about 100 kB
FOLDED_COLUMNS = 256


def _pass1_timer(chain, y_tilde, alpha, n_topics):
    """The engine's pass 1 at ``chain``'s factors on ``y_tilde``: ``(layout, workspace, theta,
    phi, run)``, where ``run(cols, values, starts=None, ends=None) -> (seconds, entries with
    y > 0)`` runs it on the layout's rows with the given columns and values, over the
    workspace's chunks or over the row ranges ``starts[c]..ends[c] - 1``."""
    theta, phi = (np.ascontiguousarray(a, dtype=np.float64)
                  for a in chain.model.row_column_factors(chain.state))
    privacy = sparse_topics.SparseTopicPrivacy(y_tilde, noise_levels(alpha, y_tilde.shape),
                                               np.ones(y_tilde.shape, dtype=bool))
    layout, workspace = privacy.layout, privacy.workspace(n_topics)
    n_rows = theta.shape[0]
    phi_t = np.ascontiguousarray(phi.T)
    phi_sums = phi.sum(axis=1)
    pos_y = np.empty(layout.nnz, dtype=np.int64)
    row_drawn = np.empty(n_rows)
    neg_counts = np.empty((n_rows, n_topics), dtype=np.int64)
    doc_topic = np.zeros((n_rows, n_topics), dtype=np.int64)
    seed = derive_seed(1, Tag.PASS1)

    def run(cols, values, starts=None, ends=None):
        if starts is None:
            starts, ends = workspace.bounds[:-1], workspace.bounds[1:]
        workspace.col_partials.fill(0)
        workspace.markers.fill(0)
        doc_topic.fill(0)
        start = time.perf_counter()
        sparse_topics._pass1[False](layout.indptr, cols, values, layout.alpha_rows, theta, phi_t,
                                    phi_sums, seed, 0, 0, starts, ends, pos_y, row_drawn,
                                    neg_counts, workspace.residual, doc_topic,
                                    workspace.col_partials, workspace.markers)
        return time.perf_counter() - start, int(np.count_nonzero(pos_y))

    return layout, workspace, theta, phi, run


def main(argv=()):
    parser = argparse.ArgumentParser(prog="python -m bench.pass1")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--cols", type=int, default=10000)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--warm", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(list(argv))
    if args.quick:
        args.rows, args.cols, args.k, args.warm, args.repeat = 60, 400, 8, 1, 2
    load_before = _load()
    y_tilde, alpha, _, _, info = _generate(args.rows, args.cols, args.k, args.eps, 0,
                                           0.1, 1.0, 0.1, 10.0)
    chain = GibbsSampler.private(y_tilde, alpha, TopicModel(args.k), rng=1)
    if chain.engine != "sparse":
        raise RuntimeError(f"the chain took the {chain.engine} engine, not the sparse one")
    for _ in range(args.warm):
        chain.sweep()
    layout, _, theta, phi, run = _pass1_timer(chain, y_tilde, alpha, args.k)
    floor = FloorKernel(y_tilde)
    phi_t = np.ascontiguousarray(phi.T)

    def run_floor():
        start = time.perf_counter()
        _floor_pass(floor.indptr, floor.cols, theta, phi_t, floor.bounds, floor.sinks)
        return time.perf_counter() - start, 0

    forms = {
        "as is": lambda: run(layout.cols, layout.values),
        "columns folded": lambda: run(layout.cols % min(FOLDED_COLUMNS, args.cols),
                                      layout.values),
        "rates only": lambda: run(layout.cols, np.zeros_like(layout.values)),
        "floor": run_floor,
    }
    for form in forms.values():  # compile
        form()
    times = {name: [] for name in forms}
    allocated = {}
    for _ in range(args.repeat):
        for name, form in forms.items():
            seconds, n_allocated = form()
            times[name].append(seconds)
            allocated[name] = n_allocated
    entries = layout.nnz
    out = {"machine": machine(), "settings": vars(args), "data": info,
           "entries": entries, "load_before": load_before, "load_after": _load(), "forms": {}}
    floor_seconds = float(np.median(times["floor"]))
    print(f"pass 1 of the sparse sweep: {args.rows} x {args.cols}, K = {args.k}, "
          f"eps/N = {args.eps}, {entries} positive entries, {machine()['numba_threads']} "
          f"thread(s), median of {args.repeat}")
    print(f"{'form':>15} {'seconds':>8} {'ns/entry':>9} {'/ floor':>8} {'y > 0':>9}")
    for name in forms:
        seconds = float(np.median(times[name]))
        out["forms"][name] = {"seconds": seconds, "all": times[name],
                              "ns_per_entry": 1e9 * seconds / max(entries, 1),
                              "over_floor": seconds / floor_seconds,
                              "entries_with_y_positive": allocated[name]}
        shown = "–" if name in ("floor", "rates only") else str(allocated[name])
        print(f"{name:>15} {seconds:8.3f} {1e9 * seconds / max(entries, 1):9.1f} "
              f"{seconds / floor_seconds:8.2f} {shown:>9}")
    print(f"load average before {load_before}, after {out['load_after']}")
    if not (args.quick or args.no_write):
        print(f"wrote {write_results('pass1', out)}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
