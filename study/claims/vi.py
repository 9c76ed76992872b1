"""The claims of the VI paper (Schofield et al.): appendix E and its Fig. 1."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from study.claims.reading import Check, _Reader, _get
from study.claims.rules import (NAIVE, NOT_REPRODUCED, NOT_RUN, OURS, PASS, Cell, _Missing,
                                Verdict, better, _fmt, near_number)
from study.score_tables import converged


_VI_PAPER_N = 1000
#: the rows of vi/benchmark.csv (study.vi_benchmark)
_PAPER_CAVI, _COLLAPSED_CAVI, _NAIVE_CAVI = "paper CAVI", "collapsed CAVI", "naive CAVI"
_PRIVATE_MCMC = "private MCMC"


def _vi(r: _Reader):
    def scores():
        return _get(r.json("vi/synthetic.json"), "scores")

    def paper_cavi(s):
        # the notebook names Schofield et al.'s CAVI after its privacy step ("bessel")
        for key in ("bessel", "bessel-mode", "paper_cavi"):
            if key in s:
                return _get(s, key, "mae")
        raise _Missing("vi/synthetic.json has no score of the paper's CAVI (bessel)")

    def demo_private_vs_naive():
        s = scores()
        verdict = better({1.0: Cell.of([paper_cavi(s)])}, {1.0: Cell.of([_get(s, NAIVE, "mae")])},
                         higher_is_better=False, names=("the paper's CAVI", "naive CAVI"))
        return replace(verdict, ours=verdict.ours + f"; collapsed CAVI "
                       f"{_fmt(_get(s, OURS, 'mae'))}")

    def demo_mae():
        s = scores()
        verdict = near_number(paper_cavi(s), 0.507, rel_tol=0.25, better_if_lower=True)
        return replace(verdict, ours=f"the paper's CAVI {verdict.ours}; collapsed CAVI "
                       f"{_fmt(_get(s, OURS, 'mae'))}")

    def bench():
        return r.csv("vi/benchmark.csv", ("method", "mae"))

    def mae(method):
        # each seed repeats the whole comparison (data and fits): the seeds are the units
        # the methods are paired by; a table without run_seed is one run
        rows = bench()[lambda t: t.method == method]
        if rows.empty:
            raise _Missing(f"vi/benchmark.csv has no {method!r} row")
        if "run_seed" not in rows:
            return Cell.of(rows["mae"].to_numpy(float))
        return Cell.of(rows["mae"].to_numpy(float), rows["run_seed"].tolist(), unit="seed")

    def paper_size_only(check):
        bench()
        _paper_size(r)
        return check()

    def mcmc_beats_vi():
        verdict = better({1.0: mae(_PRIVATE_MCMC)}, {1.0: mae(_PAPER_CAVI)},
                         higher_is_better=False, names=("MCMC", "the paper's CAVI"))
        return replace(verdict, ours=verdict.ours + f"; collapsed CAVI "
                       f"{_fmt(mae(_COLLAPSED_CAVI).mean)}")

    fig = "appendix E, Fig. 1 (20 x 20 synthetic, K = 3, ε/N = 1)"
    large = "appendix E (1,000 x 1,000 synthetic, ε/N = 1)"
    return [
        Check("vi.appE_fig1.mae", fig,
              "\"We find that our model successfully converges to within a reasonable estimate "
              "of the true model parameters ... The mean average error (MAE) between the true "
              "model parameters and the inferred parameters under privacy is 0.507\" (checked "
              "on Schofield et al.'s CAVI: at most 0.507, or within 25%; the collapsed CAVI "
              "shown beside it)", "0.507", demo_mae),
        Check("vi.appE.vi_mae", large,
              "\"our variational inference model ... [reaches an] error of 0.52\" (checked: the "
              "same algorithm, ours at most 0.52 or within 10%)", "0.52",
              lambda: paper_size_only(lambda: near_number(
                  None, 0.52, rel_tol=0.10, better_if_lower=True, cell=mae(_PAPER_CAVI)))),
        Check("vi.appE.mcmc_mae", large,
              "\"Using 5000 iterations of burnin and 2500 to collect samples, [MCMC ends] with a "
              "final mean average error (MAE) of 0.36\" (checked: ours at most 0.36 or within "
              "10%)", "0.36",
              lambda: paper_size_only(lambda: near_number(
                  None, 0.36, rel_tol=0.10, better_if_lower=True, cell=mae(_PRIVATE_MCMC)))),
        Check("vi.appE.mcmc_beats_vi", large,
              "MCMC's \"final mean average error (MAE) of 0.36. In contrast, our variational "
              "inference model ... [reaches an] error of 0.52\" (checked: MCMC's MAE below the "
              "paper's CAVI's, paired by seed)", "MCMC 0.36 vs VI 0.52", mcmc_beats_vi),
        Check("vi.appE_fig1.private_vs_naive", fig,
              "The paper's CAVI against a CAVI that ignores the noise, MAE to the true "
              "parameters (the paper reports no naive VI)", "", demo_private_vs_naive,
              observation=True),
        Check("vi.appE.private_vs_naive", large,
              "The paper's CAVI against a CAVI that ignores the noise, MAE to the true rates "
              "(the paper reports no naive VI)", "",
              lambda: better({1.0: mae(_PAPER_CAVI)}, {1.0: mae(_NAIVE_CAVI)},
                             higher_is_better=False, names=("the paper's CAVI",
                                                            "naive CAVI")),
              observation=True),
    ]


def _paper_size(r: _Reader) -> None:
    """Appendix E's numbers are for the paper's 1,000 x 1,000 matrix: a benchmark of another
    size (``vi_benchmark.n`` in the params file) is not held to them.

    Raises
    ------
    _Missing
        The params file names another size.
    """
    settings = r.params().get("vi_benchmark")
    n = settings.get("n") if isinstance(settings, dict) else None
    if n is not None and int(n) != _VI_PAPER_N:
        raise _Missing(f"the benchmark ran on {n} x {n} (vi_benchmark.n); the paper's "
                       f"number is for {_VI_PAPER_N:,} x {_VI_PAPER_N:,}")


#: where the benchmark's times come from, beside the paper's
_MACHINE = ("our time is the machine's that ran the vi_benchmark stage (its cores and load, "
            "not recorded in the table), the paper's its authors' single-threaded code's")


#: how far the ratio of two methods' times may stray from the paper's, either way: times come
#: from other machines and implementations, their ratio roughly carries over
_TIME_RATIO_FACTOR = 1.5
#: appendix E's "typically requires 100 iterations", and the relative tolerance of the check
#: (a factor of 2: at most 200)
_PAPER_ITERATIONS, _ITERATIONS_TOL = 100.0, 1.0


def _vi_speed(r: _Reader):
    """Appendix E's "about 100 iterations", "20 times faster" and seconds per iteration, on
    the vi_benchmark stage's table (``vi/benchmark.csv``): the paper's CAVI against the
    private MCMC."""
    #: the paper's MCMC schedule (5,000 burn-in + 2,500 kept sweeps)
    paper_sweeps = 7500

    def runs():
        t = r.csv("vi/benchmark.csv",
                  ("method", "iterations", "seconds_per_iteration", "seconds", "converged"))
        _paper_size(r)
        found = {m: t[t.method == m] for m in (_PAPER_CAVI, _PRIVATE_MCMC)}
        lacking = [m for m, table in found.items() if table.empty]
        if lacking:
            raise _Missing(f"vi/benchmark.csv has no {', '.join(lacking)} row")
        return found

    def rows():
        # over several seeds: the mean times and iterations
        return {m: table[["iterations", "seconds_per_iteration", "seconds"]].mean()
                for m, table in runs().items()}

    def iterations():
        # "typically": the median run. A run stopped at the cap before the authors' rule
        # needed more than the iterations it ran, an unknown number: counted as a little more
        # than its cap, the median is a lower bound of the true one, counted as infinite an
        # upper bound. The verdict is decided where both fall on one side of the tolerance
        cavi = runs()[_PAPER_CAVI]
        done = converged(cavi).to_numpy()
        ran = cavi["iterations"].to_numpy(float)
        middle = ran.size // 2  # the upper middle of an even count
        low = float(np.sort(np.where(done, ran, ran + 0.5))[middle])
        high = float(np.sort(np.where(done, ran, np.inf))[middle])
        edge = _PAPER_ITERATIONS * (1 + _ITERATIONS_TOL)
        count = (_fmt(high) if low == high else
                 f"at least {_fmt(np.floor(low))}" if high == np.inf
                 else f"{_fmt(np.floor(low))} to {_fmt(high)}")
        capped = int((~done).sum())
        ours = (f"{count} iterations, the median run of {ran.size} ({int(done.sum())} converged"
                + (f"; {capped} stopped at the cap of {_fmt(ran[~done].max())}, counted as "
                   "needing more" if capped else "")
                + f"; mean {_fmt(ran.mean())} as run)")
        if high <= edge:
            verdict = near_number(high, _PAPER_ITERATIONS, rel_tol=_ITERATIONS_TOL,
                                  better_if_lower=True)
            return Verdict(verdict.status, ours, verdict.reason)
        if low > edge:
            return Verdict(NOT_REPRODUCED, ours,
                           f"the median run needs more than the tolerance's {_fmt(edge)}"
                           + (" (the paper's CAVI hit its iteration cap there)"
                              if high == np.inf else ""))
        return Verdict(NOT_REPRODUCED, ours, "a run stopped at its cap below the tolerance's "
                                             f"{_fmt(edge)} decides the median: undecided "
                                             "until it runs longer")

    def speed_up():
        found = rows()
        vi, mcmc = found[_PAPER_CAVI], found[_PRIVATE_MCMC]
        as_run = float(mcmc.seconds) / float(vi.seconds)
        # the MCMC's wall time at the paper's schedule, from its own seconds per sweep
        projected = float(mcmc.seconds_per_iteration) * paper_sweeps / float(vi.seconds)
        full = int(mcmc.iterations) >= paper_sweeps
        ratio = as_run if full else projected
        verdict = near_number(ratio, 20.0, rel_tol=0.5, better_if_lower=False)
        ours = (f"{_fmt(as_run)}x as run ({int(mcmc.iterations)} MCMC sweeps); "
                f"{_fmt(projected)}x at the paper's {paper_sweeps:,} sweeps")
        basis = "as run" if full else f"projected to {paper_sweeps:,} MCMC sweeps"
        return Verdict(verdict.status, ours, f"{basis}: {verdict.reason}")

    def seconds_per_iteration():
        # seconds on the authors' machine and code are not ours to match; what carries over
        # between machines is how much longer a CAVI iteration takes than an MCMC sweep
        found = rows()
        vi, mcmc = (float(found[m].seconds_per_iteration) for m in (_PAPER_CAVI, _PRIVATE_MCMC))
        ratio, paper = vi / mcmc, 2.8 / 0.8
        ours = (f"MCMC {_fmt(mcmc)} s, the paper's CAVI {_fmt(vi)} s per iteration: "
                f"{_fmt(ratio)}x (the paper's: {_fmt(paper)}x)")
        if not np.isfinite(ratio) or ratio <= 0:
            return Verdict(NOT_RUN, ours, "no positive seconds per iteration")
        factor = max(ratio / paper, paper / ratio)
        if factor <= _TIME_RATIO_FACTOR:
            return Verdict(PASS, ours, f"the ratio within a factor {_TIME_RATIO_FACTOR} of the "
                                       f"paper's; {_MACHINE}")
        return Verdict(NOT_REPRODUCED, ours, f"the ratio {_fmt(factor)}x off the paper's "
                                             f"(allowed: {_TIME_RATIO_FACTOR}); {_MACHINE}")

    fig = "appendix E (MCMC against CAVI; the vi_benchmark stage)"
    return [
        Check("vi.appE.iterations", fig,
              "\"[our variational inference model] typically requires 100 iterations to "
              "converge\" (checked: the median run at most 200, a factor of 2)", "about 100",
              iterations),
        Check("vi.appE.speed_up", fig,
              "\"this method converges to reasonable estimates of the true model parameters 20 "
              "times faster than the MCMC approach\" (5,000 + 2,500 MCMC iterations; checked: "
              "at least 10x, wall time of the whole fit)", "20x", speed_up),
        # the seconds and their ratio are properties of the authors' implementation and
        # machine, not of the methods: ours are reported as ours
        Check("vi.appE.seconds_per_iteration", fig,
              "Our CAVI's seconds per iteration over our MCMC's seconds per sweep, beside the "
              "paper's 2.8 s / 0.8 s = 3.5 (a timing of the authors' code, not of the method)",
              "", seconds_per_iteration, observation=True),
    ]
