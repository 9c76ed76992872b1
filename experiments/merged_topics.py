"""Why does the collapsed CAVI keep fewer distinct topics than Gibbs on long private documents?

    python -m experiments.merged_topics [--quick] [--eps E ...] [--seeds S ...] [--k K]
                                        [--sweeps S] [--cases ...] [--no-write]

Data: a corpus of the Reuters corpus' shape (395 documents x 4,258 words, about 84k tokens,
lognormal document lengths of mean about 210) drawn with a fixed seed from LDA with
``K_true = K`` well-separated topics (Dirichlet(0.05) over the vocabulary, Dirichlet(0.1)
document proportions), privatized at epsilon/N = E (``lpp.mechanism.privatize``).

Fits, each counted by its **distinct topics** (topics, normalised to distributions, joined
when their cosine similarity exceeds ``COSINE``, connected components counted; the count by
top-10 words overlapping in at least 8 is printed beside it) and its **recovery** (mean
Hellinger distance to the true topics after Hungarian alignment, ``lpp.metrics.align_topics``):

* ``cavi`` — ``fit_variational(method="collapsed")`` with its default start (200 EM-like
  sweeps on ``max(y_tilde, 0)``) per seed; ``start`` is that start itself (the factors after
  one CAVI iteration);
* ``cavi-prior`` — the default CAVI under the prior shapes ``a0`` = 0.3 and 1;
* ``cavi-random`` — the random start (``em_sweeps=0``: data rows);
* ``cavi-true-start`` — the EM start run on the *true* counts, then the private CAVI;
* ``nonprivate`` — ``fit_variational_nonprivate`` of the true counts;
* ``gibbs`` — ``fit_private(method="collapsed", init="em")``, the posterior mean of the
  second half of S sweeps; ``gibbs-dispersed`` — the same chain from
  ``init=lpp.vi.dispersed_start`` (a draw around a collapsed CAVI fit);
* ``cavi-from-gibbs`` — the CAVI started at the Gibbs posterior mean; ``cavi-from-truth`` —
  started at the true factors. The exact collapsed bound (``collapsed_bound``) of every
  private fit is printed, so a merged and an unmerged optimum compare on one objective (for
  ``truth`` and ``gibbs`` it is the bound of Gamma factors of shape 100 centred on the point,
  not optimised, so lower than what a CAVI from there reaches).

``cavi`` (with, for the first seed, its distinct and live topics, total rate and bound after
10, 50, 200 and 500 iterations at tolerance 0), ``gibbs`` and ``cavi-from-gibbs`` run for
every seed, the other cases for the first seed only. *Live* topics: those whose effective
number of words (exp entropy) is below 90% of the vocabulary; a topic emptied to the prior is
flat. The total rate ``sum E[mu]`` is printed beside ``sum y`` (the corpus' tokens); ``geo``
is ``sum G / sum E[mu]``, the share of the rate the bound pays for that the count step credits.

Writes ``experiments/results/merged_topics.json`` (not with ``--quick`` or ``--no-write``),
keyed by epsilon and case: a run of some epsilons or cases replaces only their rows.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from experiments import RESULTS, machine, write_results
from lpp.inference import RunOptions, TopicModel, fit_private
from lpp.mechanism import alpha_from_epsilon, privatize
from lpp.metrics import align_topics
from lpp.vi import (GammaFactor, VIOptions, collapsed_bound, dispersed_start, fit_variational,
                    fit_variational_nonprivate)

#: topics whose normalised word distributions have a cosine above this are one topic
COSINE = 0.9
#: a topic is live when its effective number of words is below this share of the vocabulary
LIVE_SHARE = 0.9
#: shape of the Gamma factors centred on a point start (the package's START_CONCENTRATION)
CONCENTRATION = 100.0
CASES = ("cavi", "cavi-prior", "cavi-random", "cavi-true-start", "nonprivate", "gibbs",
         "cavi-from-gibbs", "gibbs-dispersed", "cavi-from-truth")


def reuters_like(n_docs=395, n_words=4258, k=20, mean_len=210.0, seed=0):
    """``(y, theta, phi)``: an LDA corpus of Reuters' shape; ``theta * phi`` are its rates."""
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(n_words, 0.05), size=k)
    props = rng.dirichlet(np.full(k, 0.1), size=n_docs)
    sigma = 0.6
    lengths = np.maximum(rng.lognormal(np.log(mean_len) - sigma ** 2 / 2, sigma, n_docs), 10)
    y = rng.poisson(lengths[:, None] * (props @ phi))
    return y.astype(np.int64), lengths[:, None] * props, phi


def distinct(phi, cosine=COSINE):
    """Number of clusters of topics linked by cosine similarity > ``cosine``."""
    p = phi / phi.sum(axis=1, keepdims=True)
    u = p / np.linalg.norm(p, axis=1, keepdims=True)
    link = (u @ u.T) > cosine
    k = len(p)
    label = list(range(k))

    def find(i):
        while label[i] != i:
            label[i] = label[label[i]]
            i = label[i]
        return i
    for i in range(k):
        for j in range(i + 1, k):
            if link[i, j]:
                label[find(i)] = find(j)
    return len({find(i) for i in range(k)})


def distinct_top10(phi, overlap=8):
    top = np.argsort(-phi, axis=1)[:, :10]
    k = len(top)
    label = list(range(k))

    def find(i):
        while label[i] != i:
            i = label[i]
        return i
    for i in range(k):
        for j in range(i + 1, k):
            if len(set(top[i]) & set(top[j])) >= overlap:
                label[find(i)] = find(j)
    return len({find(i) for i in range(k)})


def centred(theta, phi):
    theta, phi = np.maximum(theta, 1e-12), np.maximum(phi, 1e-12)  # Dirichlet draws underflow
    return {"theta": GammaFactor(np.full(theta.shape, CONCENTRATION), CONCENTRATION / theta),
            "phi": GammaFactor(np.full(phi.shape, CONCENTRATION), CONCENTRATION / phi)}


def live_topics(phi):
    """Topics not at the prior: effective number of words (exp entropy) below LIVE_SHARE of the
    vocabulary (a topic that received no tokens keeps the prior's flat mean, all V words)."""
    p = phi / phi.sum(axis=1, keepdims=True)
    eff = np.exp(-(p * np.log(p)).sum(axis=1))
    return int((eff < LIVE_SHARE * phi.shape[1]).sum())


def geometric_share(q):
    """``sum G / sum E[mu]``: how much of the rate the bound pays for (``E mu``) it is credited
    for in the count step (``G = sum_k exp(E log theta) exp(E log phi)``)."""
    g = q["theta"].geometric.sum(axis=0) @ q["phi"].geometric.sum(axis=1)
    return round(float(g / (q["theta"].mean.sum(axis=0) @ q["phi"].mean.sum(axis=1))), 4)


def describe(name, phi, phi_true, bound=None, theta=None, **extra):
    tiny = np.finfo(float).tiny
    phi = np.maximum(phi, tiny)
    rate = None if theta is None else float(theta.sum(axis=0) @ phi.sum(axis=1))
    row = {"case": name, "distinct": distinct(phi), "distinct_top10": distinct_top10(phi),
           "live": live_topics(phi), "hellinger": align_topics(phi, phi_true).mean_distance,
           "total_rate": rate, "bound": bound, **extra}
    print(f"{name:>24} {row['distinct']:>8} {row['distinct_top10']:>7} {row['live']:>5} "
          f"{row['hellinger']:>9.3f} {(f'{rate:.0f}' if rate is not None else ''):>10} "
          f"{(f'{bound:.6e}' if bound is not None else ''):>14} "
          + " ".join(f"{k}={v}" for k, v in extra.items()), flush=True)
    return row


def run(eps, seeds, k, sweeps, cases, data_seed=0, max_iter=500, n_docs=395, n_words=4258,
        mean_len=210.0):
    y, theta_true, phi_true = reuters_like(n_docs, n_words, k, mean_len, data_seed)
    alpha = float(alpha_from_epsilon(eps, 1.0))
    y_tilde = privatize(y, alpha, rng=data_seed + 1)
    model = TopicModel(k)
    info = {"eps": eps, "alpha": alpha, "tokens": int(y.sum()),
            "positive_noise_mass": int(np.maximum(y_tilde, 0).sum() - y.sum()),
            "positive_share": float((y_tilde > 0).mean())}
    print(f"\neps/N = {eps}: {y.shape}, {info['tokens']} tokens, "
          f"sum max(y_tilde,0) - sum y = {info['positive_noise_mass']}, positive share "
          f"{info['positive_share']:.3f}")
    print(f"{'case':>24} {'distinct':>8} {'top10':>7} {'live':>5} {'hellinger':>9} "
          f"{'total rate':>10} {'exact bound':>14}")

    def bound(q):
        return collapsed_bound(y_tilde, alpha, model, q)

    rows = [describe("truth", phi_true, phi_true, bound(centred(theta_true, phi_true)),
                     theta_true)]
    for seed in seeds:
        first = seed == seeds[0]
        if "cavi" in cases:
            t = time.perf_counter()
            st = fit_variational(y_tilde, alpha, model, rng=seed, run=VIOptions(max_iter=1))
            rows.append(describe(f"start seed={seed}", st.q["phi"].mean, phi_true,
                                 theta=st.q["theta"].mean, geo=geometric_share(st.q)))
            # the distinct count along the iterations: restarts from q are exact continuations
            q, trace, total = None, [], 0
            for chunk in ((10, 40, 150, 300) if first else ()):
                res = fit_variational(y_tilde, alpha, model, rng=seed,
                                      run=VIOptions(max_iter=chunk, tol=0.0, init=q))
                q, total = res.q, total + chunk
                trace.append((total, distinct(q["phi"].mean), live_topics(q["phi"].mean),
                              float(res.mu_hat.sum()), float(res.objective[-1])))
            res = fit_variational(y_tilde, alpha, model, rng=seed)
            rows.append(describe(f"cavi seed={seed}", res.q["phi"].mean, phi_true,
                                 bound(res.q), res.q["theta"].mean, iters=res.iterations,
                                 geo=geometric_share(res.q),
                                 s=round(time.perf_counter() - t, 1)))
            rows[-1]["trace"] = trace
            print(" " * 26 + "tol=0 trace (iteration, distinct, live, total rate, bound): "
                  + ", ".join(f"({a}, {b}, {c}, {d:.0f}, {e:.5e})" for a, b, c, d, e in trace))
        if "cavi-prior" in cases and first:
            for a0 in (0.3, 1.0):
                res = fit_variational(y_tilde, alpha, TopicModel(k, a0=a0), rng=seed)
                rows.append(describe(f"cavi a0={a0} seed={seed}", res.q["phi"].mean, phi_true,
                                     None, res.q["theta"].mean, iters=res.iterations))
        if "cavi-random" in cases and first:
            res = fit_variational(y_tilde, alpha, model, rng=seed, run=VIOptions(em_sweeps=0))
            rows.append(describe(f"cavi-random seed={seed}", res.q["phi"].mean, phi_true,
                                 bound(res.q), res.q["theta"].mean, iters=res.iterations))
        if "cavi-true-start" in cases and first:
            st = fit_variational_nonprivate(y, model, rng=seed, run=VIOptions(max_iter=1))
            res = fit_variational(y_tilde, alpha, model, rng=seed, run=VIOptions(init=st.q))
            rows.append(describe(f"cavi-true-start seed={seed}", res.q["phi"].mean, phi_true,
                                 bound(res.q), res.q["theta"].mean, iters=res.iterations))
        if "nonprivate" in cases and first:
            res = fit_variational_nonprivate(y, model, rng=seed)
            rows.append(describe(f"nonprivate seed={seed}", res.q["phi"].mean, phi_true,
                                 None, res.q["theta"].mean, iters=res.iterations,
                                 geo=geometric_share(res.q)))
        if "gibbs" in cases:
            t = time.perf_counter()
            g = fit_private(y_tilde, alpha, model, method="collapsed",
                            run=RunOptions(init="em", n_iter=sweeps, burn_in=sweeps // 2,
                                           progress=False),
                            rng=seed)
            th, ph = g.samples["theta"].mean(axis=0), g.samples["phi"].mean(axis=0)
            th, ph = np.maximum(th, 1e-12), np.maximum(ph, 1e-12)
            rows.append(describe(f"gibbs seed={seed}", ph, phi_true, bound(centred(th, ph)), th,
                                 sweeps=sweeps, s=round(time.perf_counter() - t, 1)))
            if "cavi-from-gibbs" in cases:
                res = fit_variational(y_tilde, alpha, model, run=VIOptions(init=centred(th, ph)))
                rows.append(describe(f"cavi-from-gibbs seed={seed}", res.q["phi"].mean,
                                     phi_true, bound(res.q), res.q["theta"].mean,
                                     iters=res.iterations))
        if "gibbs-dispersed" in cases and first:
            g = fit_private(y_tilde, alpha, model, method="collapsed",
                            run=RunOptions(init=dispersed_start, n_iter=sweeps,
                                           burn_in=sweeps // 2, progress=False),
                            rng=seed)
            th = np.maximum(g.samples["theta"].mean(axis=0), 1e-12)
            ph = np.maximum(g.samples["phi"].mean(axis=0), 1e-12)
            rows.append(describe(f"gibbs-dispersed seed={seed}", ph, phi_true, None, th,
                                 sweeps=sweeps))
    if "cavi-from-truth" in cases:
        res = fit_variational(y_tilde, alpha, model,
                              run=VIOptions(init=centred(theta_true, phi_true)))
        rows.append(describe("cavi-from-truth", res.q["phi"].mean, phi_true, bound(res.q),
                             res.q["theta"].mean, iters=res.iterations,
                             geo=geometric_share(res.q)))
    return {"data": info, "rows": rows}


def main(argv=()) -> dict:
    parser = argparse.ArgumentParser(prog="python -m experiments.merged_topics")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--eps", type=float, nargs="+", default=[1.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--sweeps", type=int, default=200)
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(list(argv))
    size = {}
    if args.quick:
        args.seeds, args.k, args.sweeps = [0], 4, 20
        size = dict(n_docs=40, n_words=200, mean_len=60.0, max_iter=30)
    out = {"machine": machine(), "invocations": [vars(args)], "cosine": COSINE, "runs": {}}
    for eps in args.eps:
        out["runs"][str(eps)] = run(eps, args.seeds, args.k, args.sweeps, args.cases, **size)
    if not (args.quick or args.no_write):
        # one file for every epsilon and case: a run replaces only the rows it reran
        path = RESULTS / "merged_topics.json"
        if path.exists():
            old = json.loads(path.read_text())
            runs = old.get("runs", {})
            for eps, new in out["runs"].items():
                kept = {r["case"]: r for r in runs.get(eps, {}).get("rows", [])}
                kept.update({r["case"]: r for r in new["rows"]})
                runs[eps] = {"data": new["data"], "rows": list(kept.values())}
            out["runs"] = runs
            out["invocations"] = old.get("invocations", []) + out["invocations"]
        print(f"wrote {write_results('merged_topics', out)}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
