"""What ``PrivateTopicModel.score`` costs against a ``transform`` of the same documents.

    python -m bench.score [--n-iter N] [--rounds R] [--eps E] [--quick] [--no-write]

The Reuters-shaped corpus of ``bench.estimators`` (395 documents x 4,258 words, about 84,000
tokens, drawn from 20 topics), privatized by the geometric mechanism at ``epsilon / N = E``
(default 1), and a collapsed Gibbs fit at K = 20 of it (200 sweeps: its topics are what the
chains below hold fixed). Then ``transform(X)`` and ``score(X)`` of the same privatized
counts, taking turns ``R`` times (default 2) in this one process, at the estimator's default
schedule (``N`` = 1,000 sweeps, burn-in 500); both were run once on a few documents first, so
that numba's kernels are compiled. Prints each time, the ratio score / transform of each
round, and where score's time goes in the last round (its two fixed-topic chains, and the
predictive densities of the held-out entries); writes ``bench/results/score.json``.
``--quick`` runs a small corpus with a few sweeps and writes nothing; ``--no-write`` prints
only.
"""
from __future__ import annotations

import argparse
import os
import time
import types

import numpy as np

from bench import machine, write_results
from bench.estimators import QUICK_REUTERS, REUTERS, reuters_like
from lpp.estimators import GeometricMechanism, PrivateTopicModel
import lpp.estimators._topic_model as topic_model
from lpp.mechanism import alpha_from_epsilon

#: the sweeps of the fit whose topics transform and score hold fixed
FIT_SWEEPS = 200
#: what score may cost, in transforms of the same documents
TARGET_RATIO = 2.0


class _Timed:
    """Stands in for ``owner.name`` (a module's function, or an estimator's bound method) and
    adds up the seconds spent in it."""

    def __init__(self, owner, name):
        self.owner, self.name = owner, name
        self.inner = getattr(owner, name)
        self.seconds = 0.0

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start

    def __enter__(self):
        setattr(self.owner, self.name, self)
        return self

    def __exit__(self, *exc):
        if isinstance(self.owner, types.ModuleType):
            setattr(self.owner, self.name, self.inner)
        else:  # the instance's attribute goes: its method is its class's again
            delattr(self.owner, self.name)


def _seconds(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def run(shape, n_iter: int, rounds: int, eps: float) -> dict:
    counts = reuters_like(shape)
    alpha = float(alpha_from_epsilon(eps, 1))
    X = GeometricMechanism(alpha, random_state=1).fit_transform(counts)
    est = PrivateTopicModel(shape[3], alpha=alpha, n_iter=min(n_iter, FIT_SWEEPS),
                            random_state=0, progress=False).fit(X)
    est.set_params(n_iter=n_iter)
    est.transform(X[:5])  # numba's kernels compiled or loaded before any timing
    est.score(X[:5])
    transforms, scores = [], []
    for _ in range(rounds):
        transforms.append(_seconds(est.transform, X))
        with _Timed(est, "_fixed_topic_fit") as chains, \
                _Timed(topic_model, "log_predictive") as predictive:
            scores.append(_seconds(est.score, X))
    ratios = [s / t for s, t in zip(scores, transforms)]
    return {"shape": list(X.shape), "tokens": int(counts.sum()), "eps": eps, "alpha": alpha,
            "n_components": shape[3], "n_iter": n_iter, "fit_sweeps": min(n_iter, FIT_SWEEPS),
            "transform_seconds": transforms, "score_seconds": scores, "ratios": ratios,
            "last_score_chains_seconds": chains.seconds,
            "last_score_predictive_seconds": predictive.seconds,
            "target_ratio": TARGET_RATIO}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.score", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-iter", type=int, default=1000,
                        help="sweeps of transform's and score's chains (default 1000)")
    parser.add_argument("--rounds", type=int, default=2, help="transform / score turns")
    parser.add_argument("--eps", type=float, default=1.0, help="epsilon / N of the noise")
    parser.add_argument("--quick", action="store_true", help="small corpus; nothing written")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    shape = QUICK_REUTERS if args.quick else REUTERS
    n_iter = 10 if args.quick else args.n_iter
    load_before = os.getloadavg()[0]
    result = run(shape, n_iter, 1 if args.quick else args.rounds, args.eps)
    result["load_before"], result["load_after"] = load_before, os.getloadavg()[0]
    print(f"{result['shape'][0]:,} x {result['shape'][1]:,} privatized at eps/N = {args.eps:g}, "
          f"K = {shape[3]}, {n_iter} sweeps (collapsed Gibbs)")
    print(f"{'round':>5} {'transform s':>12} {'score s':>9} {'score / transform':>18}")
    for i, (t, s, r) in enumerate(zip(result["transform_seconds"], result["score_seconds"],
                                      result["ratios"]), 1):
        print(f"{i:>5} {t:12.1f} {s:9.1f} {r:18.2f}")
    print(f"last score: {result['last_score_chains_seconds']:.1f} s in its two chains, "
          f"{result['last_score_predictive_seconds']:.1f} s in the predictive densities")
    print(f"ratio {np.mean(result['ratios']):.2f} (target <= {TARGET_RATIO:g}); load average "
          f"{load_before:.1f} before, {result['load_after']:.1f} after")
    if not (args.quick or args.no_write):
        result["machine"] = machine()
        print(f"wrote {write_results('score', result)}")
    return result


if __name__ == "__main__":
    main()
