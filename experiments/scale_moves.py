"""Do exact scale moves shorten the collapsed chain's slow creep of the total rate?

    python -m experiments.scale_moves [--quick] [--n N] [--k K] [--sweeps S] [--seed SEED]

Between the collapsed chain's sweeps (sparse engine, ``init="data"``, text-like data of
:func:`bench.sweep.text_data` at epsilon/N = 1), a Metropolis step multiplies each document's
``theta[d, :]`` (or each word's ``phi[:, v]``) by ``c = exp(N(0, s^2))`` with the true counts
``y`` integrated out, so it targets the posterior of the factors exactly:

* on an observed entry with ``y_tilde <= 0``, ``log p(y_tilde | mu) = const - (1 - alpha) mu``;
* on one with ``y_tilde > 0``, ``p(y_tilde | mu) ∝ e^-mu (alpha^y_tilde e^(mu/alpha)
  F(y_tilde; mu/alpha) + alpha^-y_tilde e^(alpha mu) S(y_tilde; alpha mu))`` with the
  Poisson distribution function ``F`` and survival function ``S``;
* the acceptance ratio adds the Gamma(a0, b0) prior of the ``K`` scaled factors and the
  Jacobian ``c^K``.

Given the other factors the documents' (or words') moves are independent, so all are
proposed at once. The step is ``s = step / sqrt(1 + sum max(y_tilde, 0))`` over the
document's (word's) entries, a function of the data only, so the proposal stays symmetric.
Prints, per variant, the acceptance rate, the total rate ``sum mu`` after a few sweeps and
the ESS (ArviZ) of the total rate over the second half of the run; then, for the chain
without moves, where its posterior mean rates (second half) lie against the generating rates,
by bins of the generating rate (up to :data:`DENSE_MAX` rows). Writes
``experiments/results/scale_moves.json`` (not with ``--quick``).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy.stats import poisson

from experiments import machine, write_results
from bench.sweep import text_data
from lpp.inference import GibbsSampler, TopicModel
from lpp.diagnostics.export import require_arviz

arviz = require_arviz()  # without ArviZ's once-a-day FutureWarning at import

#: (name, axis moved: 0 documents / 1 words / None, step factor)
VARIANTS = (("none", None, 0.0), ("documents", 0, 2.0), ("documents", 0, 10.0),
            ("documents", 0, 30.0), ("words", 1, 10.0))
#: sweeps after which the total rate is printed
REPORT_AT = (25, 100, 200)
#: quantiles of the generating rates that bound the bins of the posterior-mean table
RATE_QUANTILES = (0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0)
#: the posterior-mean table keeps a dense D x V mean: only up to this many rows and columns
DENSE_MAX = 3000


def log_marginal(y_tilde, mu, alpha):
    """``log p(y_tilde | mu)`` of the two-sided geometric mechanism, ``y`` summed out, up to
    the constant ``log((1 - alpha) / (1 + alpha)) + |y_tilde| log(alpha)`` on non-positive
    entries and ``log((1 - alpha) / (1 + alpha))`` on positive ones."""
    y_tilde = np.asarray(y_tilde)
    mu = np.asarray(mu, dtype=np.float64)
    out = -(1.0 - alpha) * mu
    pos = y_tilde > 0
    if pos.any():
        y, m = y_tilde[pos], mu[pos]
        log_alpha = np.log(alpha)
        low = y * log_alpha + m / alpha + poisson.logcdf(y, m / alpha)
        high = -y * log_alpha + alpha * m + poisson.logsf(y, alpha * m)
        out[pos] = np.logaddexp(low, high) - m
    return out


class ScaleMove:
    """The Metropolis step on documents' (axis 0) or words' (axis 1) scales of one data set."""

    def __init__(self, y_tilde, alpha, axis, step, a0, b0):
        self.alpha, self.axis, self.a0, self.b0 = alpha, axis, a0, b0
        self.rows, self.cols = np.nonzero(y_tilde > 0)
        self.values = y_tilde[self.rows, self.cols]
        self.owner = self.rows if axis == 0 else self.cols
        self.n = y_tilde.shape[axis]
        self.step = step / np.sqrt(1.0 + np.maximum(y_tilde, 0).sum(axis=1 - axis))

    def _log_likelihood(self, mu_pos, non_positive):
        """Per document (word): the positive entries' terms plus the non-positive entries'
        ``-(1 - alpha) sum mu``."""
        terms = log_marginal(self.values, mu_pos, self.alpha)
        return (np.bincount(self.owner, weights=terms, minlength=self.n)
                - (1.0 - self.alpha) * non_positive)

    def __call__(self, theta, phi, rng):
        """The moved ``(theta, phi)`` and the acceptance rate."""
        mu_pos = np.einsum("ik,ik->i", theta[self.rows], phi[:, self.cols].T)
        total = theta @ phi.sum(axis=1) if self.axis == 0 else theta.sum(axis=0) @ phi
        non_positive = total - np.bincount(self.owner, weights=mu_pos, minlength=self.n)
        log_c = rng.normal(size=self.n) * self.step
        c = np.exp(log_c)
        factor = theta if self.axis == 0 else phi.T
        k = factor.shape[1]
        log_ratio = (self._log_likelihood(mu_pos * c[self.owner], non_positive * c)
                     - self._log_likelihood(mu_pos, non_positive)
                     + self.a0 * k * log_c - self.b0 * (c - 1.0) * factor.sum(axis=1))
        accept = np.log(rng.random(self.n)) < log_ratio
        scale = np.where(accept, c, 1.0)
        if self.axis == 0:
            return theta * scale[:, None], phi, float(accept.mean())
        return theta, phi * scale[None, :], float(accept.mean())


def run_variant(y_tilde, alpha, k, axis, step, seed, n_sweeps, mean_rates=False):
    chain = GibbsSampler.private(y_tilde, alpha, TopicModel(k), rng=seed, init="data",
                                 sparse=True)
    move = (None if axis is None else
            ScaleMove(y_tilde, alpha, axis, step, chain.model.a0, chain.model.b0))
    rng = np.random.default_rng([seed, 2019])
    total, accepted = [], []
    mu_sum = np.zeros(y_tilde.shape) if mean_rates else None
    start = time.perf_counter()
    for t in range(n_sweeps):
        chain.sweep()
        theta, phi = chain.state["theta"], chain.state["phi"]
        if move is not None:
            theta, phi, rate = move(theta, phi, rng)
            accepted.append(rate)
            chain.restore({"theta": theta, "phi": phi}, chain.aux, chain.iteration)
        total.append(float(theta.sum(axis=0) @ phi.sum(axis=1)))
        if mu_sum is not None and t >= n_sweeps // 2:
            mu_sum += theta @ phi
    half = np.array(total[n_sweeps // 2:])
    record = {"total_rate": total,
              "acceptance": float(np.mean(accepted)) if accepted else None,
              "ess_second_half": float(arviz.ess(half[None, :])),
              "mean_second_half": float(half.mean()), "seconds": time.perf_counter() - start}
    if mu_sum is not None:
        record["mu_mean"] = mu_sum / (n_sweeps - n_sweeps // 2)
    return record


def rates_by_true_rate(mu_mean, mu_true, y_tilde):
    """Rows ``(low, high, true mean, posterior mean, on y_tilde > 0, on y_tilde <= 0)`` over
    bins of the generating rate bounded by its :data:`RATE_QUANTILES`."""
    edges = np.quantile(mu_true, RATE_QUANTILES)
    positive = y_tilde > 0
    rows = []
    for low, high in zip(edges[:-1], edges[1:]):
        inside = (mu_true >= low) & (mu_true <= high)
        rows.append((float(low), float(high), float(mu_true[inside].mean()),
                     float(mu_mean[inside].mean()), float(mu_mean[inside & positive].mean()),
                     float(mu_mean[inside & ~positive].mean())))
    return rows


def main(argv=()) -> dict:
    parser = argparse.ArgumentParser(prog="python -m experiments.scale_moves")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--sweeps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(list(argv))
    if args.quick:
        args.n, args.k, args.sweeps = 120, 5, 30
    y_tilde, alpha, theta_true, phi_true, _ = text_data(args.n, args.k, 1.0, seed=0)
    dense = args.n <= DENSE_MAX
    print(f"scale moves: {args.n}^2, K = {args.k}, eps/N = 1, {args.sweeps} sweeps, seed "
          f"{args.seed}")
    at = [t for t in REPORT_AT if t <= args.sweeps]
    print(f"{'variant':>10} {'step':>5} {'accept':>6} "
          + " ".join(f"{'rate@' + str(t):>10}" for t in at)
          + f" {'mean 2nd half':>13} {'ESS 2nd half':>12}")
    out = {"machine": machine(), "settings": vars(args), "variants": []}
    for name, axis, step in VARIANTS:
        record = run_variant(y_tilde, alpha, args.k, axis, step, args.seed, args.sweeps,
                             mean_rates=dense and axis is None)
        mu_mean = record.pop("mu_mean", None)
        if mu_mean is not None:
            out["rates_by_true_rate"] = rates_by_true_rate(mu_mean, theta_true @ phi_true,
                                                           y_tilde)
        out["variants"].append({"variant": name, "step": step, **record})
        accept = "" if record["acceptance"] is None else f"{record['acceptance']:.2f}"
        print(f"{name:>10} {step:5.0f} {accept:>6} "
              + " ".join(f"{record['total_rate'][t - 1]:10.4g}" for t in at)
              + f" {record['mean_second_half']:13.5g} {record['ess_second_half']:12.1f}")
    if "rates_by_true_rate" in out:
        print("posterior mean rates (no move, second half) by bins of the generating rate:")
        print(f"{'generating rate':>19} {'its mean':>9} {'posterior':>9} {'y~ > 0':>8} "
              f"{'y~ <= 0':>8}")
        for low, high, true, post, on_pos, on_rest in out["rates_by_true_rate"]:
            print(f"{low:9.3g}-{high:<9.3g} {true:9.4f} {post:9.4f} {on_pos:8.4f} "
                  f"{on_rest:8.4f}")
    if not (args.quick or args.no_write):
        print("wrote", write_results("scale_moves", out))
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
