"""Which latent holds the private topic chain's total rate back? Exact variants of one sweep.

    python -m experiments.slow_direction [--quick] [--n N] [--k K] [--sweeps S] [--seeds 3 4 5 6]

The collapsed chain's total rate ``sum mu`` mixes slowly (``docs/convergence.md``). A Gibbs
sampler with data augmentation is slow along a direction where the augmented variables say
much more about the parameters than the data do, so the candidates are the augmented
variables themselves. Each variant below targets the same posterior (tested in
``tests/experiments/test_slow_direction.py``) but samples one block differently; if that block were
the slow one, its variant would have a markedly larger effective sample size (ESS):

* ``plain`` — the package's scheme: ``y`` drawn on every entry from its exact conditional and
  split over topics, then ``phi``, then ``theta`` from their Gamma conditionals.
* ``negatives summed out`` — on an entry with ``y_tilde <= 0`` the true count is summed out
  instead of drawn: ``p(y_tilde | mu) ∝ exp(-(1 - alpha) mu)`` there, so such an entry adds
  no count and an exposure of ``1 - alpha`` (not 1) to the Gamma rates.
* ``theta collapsed`` — after the plain draw of ``y`` and its split, every document's tokens
  are reassigned one at a time with ``theta[d]`` summed out (token of word ``v`` to topic
  ``k`` with probability ``∝ (a0 + n[d, k]) phi[k, v] / (b0 + sum_v phi[k, v])``, the counts
  ``n`` without the token), then ``theta`` is drawn given the new split before ``phi`` uses
  it: a partially collapsed sweep, as in collapsed LDA.
* ``prior shape 1`` — the plain sweep with the factors' prior shape ``a0 = 1`` instead of
  0.1: another posterior, a control for the role of the sparse prior.

Dense, one thread, on the text-like data of :func:`bench.sweep.text_data` at epsilon/N = 1, all
from the same prior draw per seed. Prints per variant and seed the total rate after a few
sweeps, its mean and ESS (ArviZ) over the second half of the run, and the median ESS per
variant; writes ``experiments/results/slow_direction.json`` (not with ``--quick``).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from numba import njit

from experiments import machine, write_results
from experiments.starts import stationary_from
from bench.sweep import text_data
from lpp.distributions import poisson_nb
from lpp.distributions import categorical_nb
from lpp.inference.privacy import sample_true_count_collapsed_nb
from lpp.randomness import new_stream, seed_block
from lpp.diagnostics.export import require_arviz

arviz = require_arviz()  # without ArviZ's once-a-day FutureWarning at import

PLAIN, NEGATIVES_SUMMED_OUT, THETA_COLLAPSED = 0, 1, 2
#: (name, scheme, prior shape a0)
VARIANTS = (("plain", PLAIN, 0.1), ("negatives summed out", NEGATIVES_SUMMED_OUT, 0.1),
            ("theta collapsed", THETA_COLLAPSED, 0.1), ("prior shape 1", PLAIN, 1.0))
B0 = 1.0
#: sweeps after which the total rate is printed
REPORT_AT = (25, 100, 200)
#: the written trace keeps the total rate after every this many sweeps
TRACE_EVERY = 5


@njit(cache=True)
def sweep(y_tilde, alpha, theta, phi, a0, b0, scheme, seed, collapsed_exposure=True):
    """One sweep of ``scheme`` in place on ``theta`` (D x K) and ``phi`` (K x V).

    ``collapsed_exposure=False`` drops the ``1 / (b0 + sum_v phi[k, v])`` factor of the
    collapsed reassignment: a wrong sweep, kept to show that the test can tell."""
    np.random.seed(seed)  # numba's generator: the Gamma draws below
    rng = new_stream()  # the samplers of lpp.distributions take a stream of their own
    seed_block(rng, seed, 0, 0)
    n_docs, n_words = y_tilde.shape
    n_topics = theta.shape[1]
    doc_topic = np.zeros((n_docs, n_topics))
    topic_word = np.zeros((n_topics, n_words))
    weights = np.empty(n_topics)
    row_y = np.empty(n_words, dtype=np.int64)
    exposure = 1.0 / (b0 + phi.sum(axis=1))
    for d in range(n_docs):
        n_tokens = 0
        for v in range(n_words):
            mu = 0.0
            for k in range(n_topics):
                mu += theta[d, k] * phi[k, v]
            if y_tilde[d, v] <= 0 and scheme == NEGATIVES_SUMMED_OUT:
                row_y[v] = 0
            elif y_tilde[d, v] <= 0:
                row_y[v] = poisson_nb(rng, alpha * mu)
            else:
                row_y[v] = sample_true_count_collapsed_nb(rng, y_tilde[d, v], alpha, mu)
            n_tokens += row_y[v]
        token_word = np.empty(n_tokens, dtype=np.int64)
        token_topic = np.empty(n_tokens, dtype=np.int64)
        t = 0
        for v in range(n_words):
            if row_y[v] == 0:
                continue
            total = 0.0
            for k in range(n_topics):
                weights[k] = theta[d, k] * phi[k, v]
                total += weights[k]
            for _ in range(row_y[v]):
                token_word[t] = v
                token_topic[t] = categorical_nb(rng, weights, total)
                doc_topic[d, token_topic[t]] += 1.0
                t += 1
        if scheme == THETA_COLLAPSED:
            for t in range(n_tokens):
                v = token_word[t]
                doc_topic[d, token_topic[t]] -= 1.0
                total = 0.0
                for k in range(n_topics):
                    weights[k] = (a0 + doc_topic[d, k]) * phi[k, v]
                    if collapsed_exposure:
                        weights[k] *= exposure[k]
                    total += weights[k]
                token_topic[t] = categorical_nb(rng, weights, total)
                doc_topic[d, token_topic[t]] += 1.0
        for t in range(n_tokens):
            topic_word[token_topic[t], token_word[t]] += 1.0
    if scheme == THETA_COLLAPSED:  # theta given the new split, before phi uses it
        _draw_theta(y_tilde, alpha, theta, phi, a0, b0, doc_topic, False)
    summed_out = scheme == NEGATIVES_SUMMED_OUT
    _draw_phi(y_tilde, alpha, theta, phi, a0, b0, topic_word, summed_out)
    _draw_theta(y_tilde, alpha, theta, phi, a0, b0, doc_topic, summed_out)


@njit(cache=True)
def _draw_phi(y_tilde, alpha, theta, phi, a0, b0, topic_word, summed_out):
    n_docs, n_words = y_tilde.shape
    n_topics = theta.shape[1]
    # exposure of phi[k, v]: sum_d theta[d, k] over entries, (1 - alpha) on summed-out ones
    exposure = np.empty((n_topics, n_words))
    theta_sums = theta.sum(axis=0)
    for k in range(n_topics):
        exposure[k, :] = b0 + theta_sums[k]
    if summed_out:
        for d in range(n_docs):
            for v in range(n_words):
                if y_tilde[d, v] <= 0:
                    for k in range(n_topics):
                        exposure[k, v] -= alpha * theta[d, k]
    for k in range(n_topics):
        for v in range(n_words):
            phi[k, v] = np.random.gamma(a0 + topic_word[k, v], 1.0 / exposure[k, v])


@njit(cache=True)
def _draw_theta(y_tilde, alpha, theta, phi, a0, b0, doc_topic, summed_out):
    n_docs, n_words = y_tilde.shape
    n_topics = theta.shape[1]
    phi_sums = phi.sum(axis=1)
    exposure = np.empty(n_topics)
    for d in range(n_docs):
        exposure[:] = b0 + phi_sums
        if summed_out:
            for v in range(n_words):
                if y_tilde[d, v] <= 0:
                    for k in range(n_topics):
                        exposure[k] -= alpha * phi[k, v]
        for k in range(n_topics):
            theta[d, k] = np.random.gamma(a0 + doc_topic[d, k], 1.0 / exposure[k])


def run_chain(y_tilde, alpha, n_topics, scheme, a0, seed, n_sweeps):
    """Total rate after every sweep from a prior draw keyed by ``seed`` (the same for every
    variant), and the seconds it took."""
    rng = np.random.default_rng(seed)
    n_docs, n_words = y_tilde.shape
    theta = rng.gamma(0.1, 1.0 / B0, (n_docs, n_topics))
    phi = rng.gamma(0.1, 1.0 / B0, (n_topics, n_words))
    totals = np.empty(n_sweeps)
    start = time.perf_counter()
    for it in range(n_sweeps):
        sweep(y_tilde, alpha, theta, phi, a0, B0, scheme, seed * 1_000_003 + it)
        totals[it] = theta.sum(axis=0) @ phi.sum(axis=1)
    return totals, time.perf_counter() - start


def main(argv=()):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--sweeps", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[3, 4, 5, 6])
    parser.add_argument("--variants", nargs="+", choices=[v[0].replace(" ", "-") for v in VARIANTS],
                        help="run only these (spaces as hyphens, e.g. theta-collapsed)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(list(argv))
    if args.quick:
        args.n, args.k, args.sweeps, args.seeds = 60, 4, 40, [3]
    y_tilde, alpha, _, _, info = text_data(args.n, args.k, 1.0, seed=0)
    half = args.sweeps // 2
    at = [t for t in REPORT_AT if t <= args.sweeps]
    print(f"slow direction: {args.n}^2, K = {args.k}, eps/N = 1, {args.sweeps} sweeps, seeds "
          f"{args.seeds}; {info['positive_fraction']:.0%} of y~ positive")
    print(f"{'variant':>21} {'seed':>4} " + " ".join(f"{'rate@' + str(t):>9}" for t in at)
          + f" {'stationary from':>15} {'mean 2nd half':>13} {'sd':>6} {'ESS 2nd half':>12}"
          + f" {'seconds':>7}")
    out = {"machine": machine(), "settings": vars(args), "data": info, "variants": []}
    chosen = [v for v in VARIANTS
              if args.variants is None or v[0].replace(" ", "-") in args.variants]
    for name, scheme, a0 in chosen:
        runs = []
        for seed in args.seeds:
            totals, seconds = run_chain(y_tilde, alpha, args.k, scheme, a0, seed, args.sweeps)
            second = totals[half:]
            ess = float(arviz.ess(second[None, :])) if second.size >= 4 else float("nan")
            burn = stationary_from({"total_rate": (np.arange(1, args.sweeps + 1), totals)},
                                   args.sweeps)
            runs.append({"seed": seed, "seconds": seconds, "stationary_from": burn,
                         "mean_second_half": float(second.mean()),
                         "sd_second_half": float(second.std()), "ess_second_half": ess,
                         "total_rate_every": TRACE_EVERY,
                         "total_rate": np.round(totals[TRACE_EVERY - 1::TRACE_EVERY], 1).tolist()})
            print(f"{name:>21} {seed:4d} " + " ".join(f"{totals[t - 1]:9.0f}" for t in at)
                  + f" {'> ' + str(half) if burn is None else burn:>15} {second.mean():13.0f}"
                  + f" {second.std():6.0f} {ess:12.1f} {seconds:7.1f}")
        median = float(np.median([r["ess_second_half"] for r in runs]))
        out["variants"].append({"variant": name, "a0": a0, "median_ess": median, "runs": runs})
    print("median ESS of the second half: " + ", ".join(
        f"{v['variant']} {v['median_ess']:.1f}" for v in out["variants"]))
    if not (args.quick or args.no_write):
        print("wrote", write_results("slow_direction", out))
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
