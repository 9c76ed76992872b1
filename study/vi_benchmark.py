"""The VI paper's appendix E comparison: MAE to the true rates and wall time of every method.

Schofield et al. compare, on one synthetic private factorization (1000 x 1000, K = 50,
epsilon/N = 1), their MCMC (about 0.8 s per iteration, 5000 + 2500 iterations, MAE 0.36) with
their CAVI (about 2.8 s per iteration, about 100 iterations, MAE 0.52): a "20x" speed-up at a
cost in accuracy. :func:`run_benchmark` fits the same kind of data with

* naive MCMC and naive CAVI (``max(y_tilde, 0)`` treated as the true counts);
* private MCMC (the collapsed Gibbs sampler), the paper's CAVI, the exact collapsed CAVI;
* VI-started MCMC: the collapsed Gibbs sampler started at the collapsed CAVI's means, with a
  short schedule; its wall time includes the CAVI's.

and returns one row per method; :func:`run_seeds` repeats the whole comparison (data and fits)
for several seeds, so that MCMC against CAVI is judged against the spread over seeds;
:func:`paper_table` puts the paper's numbers beside the means over seeds and
:func:`plot_benchmark` draws MAE against wall time. Numba's compilation is excluded from every
time (:func:`warm_up` runs each method on a tiny problem first). Times depend on the machine
and its load; the MAEs repeat to the bit for a given seed.
"""
from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from bench.paper_numbers import PAPER_NUMBERS
from lpp.formats.files import atomic_write_bytes
from lpp.inference import RunOptions, TopicModel, fit_private
from lpp.inference.numerics import SERIAL_BELOW
from lpp.randomness import derive_seed
from lpp.simulate import PrivatizedFactorization, make_private_factorization
from lpp.validation import non_negative_int, positive_int
from lpp.vi.driver import VIOptions, collapsed_bound, fit_variational
from study import checkpoints
from study.figures import method_style, save_figure
from study.score_tables import converged

#: each row's method in the figures' one naming (study.figures.METHOD_STYLES)
FIGURE_METHODS = {"naive MCMC": "naive", "naive CAVI": "naive_cavi",
                  "private MCMC": "collapsed", "paper CAVI": "paper_cavi",
                  "collapsed CAVI": "collapsed_cavi", "VI-started MCMC": "vi_started"}
#: (row label, data the method sees, kind, method argument), in table order
ROWS = (
    ("naive MCMC", "naive", "mcmc", "naive"),
    ("naive CAVI", "naive", "vi", "naive"),
    ("private MCMC", "private", "mcmc", "collapsed"),
    ("paper CAVI", "private", "vi", "bessel"),
    ("collapsed CAVI", "private", "vi", "collapsed"),
    ("VI-started MCMC", "private", "vi+mcmc", "collapsed"),
)
LABELS = tuple(row[0] for row in ROWS)
#: tags of the per-method seeds derived from the benchmark's seed (never change: they key
#: committed results)
_DATA_TAG, _FIT_TAG = 1, 2


def make_benchmark_data(n: int, k: int, *, epsilon_over_n: float = 1.0, shape: float = 0.2,
                        rate: float = 1.0, rng=None) -> PrivatizedFactorization:
    """The benchmark's data: ``theta, phi ~ Gamma(shape, rate)`` (the authors' test script uses
    shape 0.2, scale 1; the paper does not print them), ``n x n`` Poisson counts privatized at
    ``alpha = exp(-epsilon / N)``. See :func:`lpp.simulate.make_private_factorization`."""
    return make_private_factorization(n, n, k, epsilon_over_n=epsilon_over_n, shape=shape,
                                      rate=rate, rng=rng)


def warm_up(k: int) -> None:
    """Compile every method's numba kernels (kept out of the timings).

    Two small problems: the kernels come in a serial and a parallel twin, and problems below
    ``SERIAL_BELOW`` entries take the serial one, so one problem of each kind compiles both.
    """
    model = TopicModel(k)
    for n in (40, math.isqrt(SERIAL_BELOW) + 1):
        data = make_benchmark_data(n, k, rng=0)
        for method in ("collapsed", "bessel", "naive"):
            fit_variational(data.y_tilde, data.alpha, model, method=method, rng=0,
                            run=VIOptions(max_iter=2, em_sweeps=2))
        for method in ("collapsed", "naive"):
            fit_private(data.y_tilde, data.alpha, model, method=method,
                        run=RunOptions(n_iter=2, burn_in=1, progress=False), rng=0)


def _mae(mu_hat, mu) -> float:
    return float(np.mean(np.abs(mu_hat - mu)))


def method_seed(seed: int, label: str) -> int:
    """The seed of the fit of method ``label`` (a row of :data:`ROWS`) in the run of base
    seed ``seed`` (the ``seed`` column of its row)."""
    return derive_seed(derive_seed(seed, _FIT_TAG), LABELS.index(label))


def run_vi(data: PrivatizedFactorization, k: int, method: str, *, rng: int,
           em_sweeps: int | None = None, progress: bool = False):
    """One CAVI fit: ``(row, VIResult)``; the row holds iterations, median seconds per
    iteration, total seconds (start included), MAE to ``data.mu``, converged flag and the
    exact collapsed bound of its Gamma factors (one scale for every method)."""
    model = TopicModel(k)
    start = {} if em_sweeps is None else {"em_sweeps": em_sweeps}
    res = fit_variational(data.y_tilde, data.alpha, model, method=method,
                          run=VIOptions(progress=progress, **start), rng=rng)
    row = {"iterations": res.iterations,
           "seconds_per_iteration": float(np.median(res.iter_seconds)),
           "seconds": res.seconds, "start_seconds": res.start_seconds,
           "mae": _mae(res.mu_hat, data.mu), "converged": res.converged,
           "collapsed_bound": collapsed_bound(data.y_tilde, data.alpha, model, res.q),
           "seed": res.seed}
    return row, res


def run_mcmc(data: PrivatizedFactorization, k: int, method: str, *, n_iter: int, burn_in: int,
             thin: int, rng: int, init="data", progress: bool = False) -> dict:
    """One Gibbs chain (:func:`lpp.inference.fit_private`): MAE of its posterior mean rates,
    median seconds per sweep and the sum of the sweeps' times."""
    res = fit_private(data.y_tilde, data.alpha, TopicModel(k), method=method,
                      run=RunOptions(n_iter=n_iter, burn_in=burn_in, thin=thin, init=init,
                                     progress=progress),
                      rng=rng)
    return {"iterations": res.iterations_done,
            "seconds_per_iteration": float(np.median(res.iter_seconds)),
            "seconds": float(np.nansum(res.iter_seconds)), "start_seconds": 0.0,
            "mae": _mae(res.mu_hat, data.mu), "converged": None, "collapsed_bound": None,
            "seed": res.seed}


def run_benchmark(data: PrivatizedFactorization, k: int, *, seed: int, mcmc_n_iter: int,
                  mcmc_burn_in: int, mcmc_thin: int, vi_mcmc_n_iter: int,
                  vi_mcmc_burn_in: int, em_sweeps: int | None = None,
                  progress: bool = False) -> pd.DataFrame:
    """Every method of :data:`ROWS` on ``data``; one row each, in that order.

    Parameters
    ----------
    data : PrivatizedFactorization
        The benchmark's data (:func:`make_benchmark_data`); ``data.mu`` is the truth.
    k : int
        Components of the fitted model.
    seed : int
        Base seed; each method's seed is derived from it (recorded in the ``seed`` column).
    mcmc_n_iter, mcmc_burn_in, mcmc_thin : int
        Schedule of the naive and private MCMC chains.
    vi_mcmc_n_iter, vi_mcmc_burn_in : int
        Schedule of the VI-started chain (every sweep after burn-in is kept).
    em_sweeps : int, optional
        The CAVI start's EM-like sweeps (default: :func:`lpp.vi.fit_variational`'s).
    progress : bool
        Progress bars.

    Returns
    -------
    pandas.DataFrame
        Columns ``method``, ``data``, ``iterations``, ``seconds_per_iteration``, ``seconds``,
        ``start_seconds``, ``mae``, ``converged``, ``collapsed_bound``, ``seed``.

    Raises
    ------
    ValueError
        Non-positive ``k`` or schedules, a burn-in not below its ``n_iter``.
    """
    k = positive_int(k, "k")
    seed = non_negative_int(seed, "seed")
    for name, value in (("mcmc_n_iter", mcmc_n_iter), ("mcmc_thin", mcmc_thin),
                        ("vi_mcmc_n_iter", vi_mcmc_n_iter)):
        positive_int(value, name)
    if not 0 <= mcmc_burn_in < mcmc_n_iter or not 0 <= vi_mcmc_burn_in < vi_mcmc_n_iter:
        raise ValueError("each burn-in must be >= 0 and below its n_iter")
    rows, collapsed_fit = [], None
    for label, seen, kind, method in ROWS:
        fit_seed = method_seed(seed, label)
        if kind == "vi":
            row, res = run_vi(data, k, method, rng=fit_seed, em_sweeps=em_sweeps,
                              progress=progress)
            if label == "collapsed CAVI":
                collapsed_fit = res
        elif kind == "mcmc":
            row = run_mcmc(data, k, method, n_iter=mcmc_n_iter, burn_in=mcmc_burn_in,
                           thin=mcmc_thin, rng=fit_seed, progress=progress)
        else:
            if collapsed_fit is None:
                raise RuntimeError("the VI-started chain needs the collapsed CAVI's row first")
            row = run_mcmc(data, k, method, n_iter=vi_mcmc_n_iter, burn_in=vi_mcmc_burn_in,
                           thin=1, rng=fit_seed, init=collapsed_fit.to_init(),
                           progress=progress)
            row["start_seconds"] = collapsed_fit.seconds
            row["seconds"] += collapsed_fit.seconds
        rows.append({"method": label, "data": seen, **row})
    return pd.DataFrame(rows)


def run_seeds(seeds, n: int, k: int, *, epsilon_over_n: float = 1.0, shape: float = 0.2,
              rate: float = 1.0, finished=None, **schedule) -> pd.DataFrame:
    """:func:`run_benchmark` on the data of each of ``seeds``, one after another.

    Each seed draws its own data (:func:`data_seed`) and its fits' seeds, so the seeds are
    independent repeats of the whole comparison; a seed's rows are the same whichever other
    seeds run beside it. With ``finished`` (a folder: :func:`finished_folder`), each seed's
    rows are written there as the seed finishes, under a name that holds a digest of every
    setting, and a later call with the same settings reads them instead of running the seed
    again: a run cut short (a paper-scale seed takes about half an hour) continues with the
    seeds it had not finished. Files of other settings are removed, never read.

    Parameters
    ----------
    seeds : sequence of int
        The runs' base seeds (at least one, no repeats).
    n, k : int
        The data's ``n x n`` size and the components of the truth and of every fit.
    epsilon_over_n, shape, rate : float
        As :func:`make_benchmark_data`.
    finished : path-like, optional
        Where each finished seed's rows are kept until the whole run is done (then remove it:
        :func:`clear_finished`).
    **schedule
        :func:`run_benchmark`'s keywords (``mcmc_n_iter``, ...).

    Returns
    -------
    pandas.DataFrame
        :func:`run_benchmark`'s rows of every seed, a first column ``run_seed`` naming it.

    Raises
    ------
    ValueError
        No seeds, a repeated one, or :func:`run_benchmark`'s errors.
    """
    seeds = [non_negative_int(s, "seeds") for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be one or more distinct seeds, got {seeds}")
    key = _settings_key(n=n, k=k, epsilon_over_n=epsilon_over_n, shape=shape, rate=rate,
                        **{name: value for name, value in schedule.items()
                           if name != "progress"})
    kept = _finished_files(finished, key)
    tables = []
    for seed in seeds:
        done = kept.get(seed)
        if done is not None:
            print(f"seed {seed}: its rows read from {done} (finished by an earlier run of "
                  "these settings)", flush=True)
            table = pd.read_csv(done)
        else:
            data = make_benchmark_data(n, k, epsilon_over_n=epsilon_over_n, shape=shape,
                                       rate=rate, rng=data_seed(seed))
            table = run_benchmark(data, k, seed=seed, **schedule)
            if finished is not None:
                text = table.to_csv(index=False, float_format="%.17g")
                atomic_write_bytes(Path(finished) / f"seed{seed}-{key}.csv", text.encode())
        tables.append(table.assign(run_seed=seed)[["run_seed", *table.columns]])
    return pd.concat(tables, ignore_index=True)


def finished_folder(table_out) -> Path:
    """Where :func:`run_seeds` keeps the finished seeds of the run that writes ``table_out``:
    beside it, as a fit keeps its checkpoints (:data:`study.checkpoints.SUFFIX`, ignored by
    git)."""
    return Path(f"{table_out}{checkpoints.SUFFIX}")


def clear_finished(folder) -> None:
    """Remove the finished seeds' folder once the run's table is written."""
    shutil.rmtree(folder, ignore_errors=True)


def _settings_key(**settings) -> str:
    """A digest of a run's settings (the seed aside), naming its finished seeds' files."""
    text = json.dumps(settings, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _finished_files(folder, key: str) -> dict[int, Path]:
    """``{seed: file}`` of the seeds finished under ``key`` in ``folder``, after removing
    the files of other settings."""
    if folder is None or not Path(folder).is_dir():
        return {}
    kept = {}
    for path in Path(folder).glob("seed*-*.csv"):
        seed, _, their_key = path.stem[len("seed"):].partition("-")
        if their_key == key and seed.isdigit():
            kept[int(seed)] = path
        else:
            path.unlink()
    return kept


def mean_over_seeds(table: pd.DataFrame) -> pd.DataFrame:
    """One row per method, in :data:`ROWS` order: the means over the runs' seeds of the MAE,
    seconds per iteration, iterations and seconds, the MAE's standard deviation over seeds
    (``mae_sd``; 0 for one seed), ``runs`` and ``converged`` (every run's CAVI converged)."""
    runs = table["run_seed"] if "run_seed" in table else pd.Series(0, index=table.index)
    grouped = table.assign(run_seed=runs).groupby("method", sort=False)
    out = grouped[["mae", "seconds_per_iteration", "iterations", "seconds"]].mean()
    out["mae_sd"] = grouped["mae"].std(ddof=1).fillna(0.0)
    out["runs"] = grouped["run_seed"].nunique()
    if "converged" in table:
        out["converged"] = grouped["converged"].agg(
            lambda c: bool(c.isna().all()) or bool(converged(c.to_frame()).all()))
    order = [m for m in LABELS if m in out.index] + [m for m in out.index if m not in LABELS]
    return out.loc[order].reset_index()


def data_seed(seed: int) -> int:
    """The seed of the benchmark's data, derived from the run's base seed."""
    return derive_seed(non_negative_int(seed, "seed"), _DATA_TAG)


def paper_table(table: pd.DataFrame) -> pd.DataFrame:
    """``table``'s MAE, seconds per iteration, iterations and seconds (means over its seeds,
    :func:`mean_over_seeds`, with ``mae_sd`` and ``runs``), with the paper's numbers beside
    (its MCMC beside our private MCMC, its CAVI beside our paper CAVI) and each method's
    speed-up over the private MCMC's mean wall time (the paper's "20x" beside the paper
    CAVI)."""
    means = mean_over_seeds(table)
    mcmc_seconds = float(means.loc[means.method == "private MCMC", "seconds"].iloc[0])
    out = means[["method", "mae", "mae_sd", "runs", "seconds_per_iteration", "iterations",
                 "seconds"]].copy()
    out["speed_up"] = mcmc_seconds / out["seconds"]
    theirs = {"private MCMC": (PAPER_NUMBERS["mcmc_mae"],
                               PAPER_NUMBERS["mcmc_seconds_per_iteration"],
                               PAPER_NUMBERS["mcmc_iterations"], 1.0),
              "paper CAVI": (PAPER_NUMBERS["vi_mae"], PAPER_NUMBERS["vi_seconds_per_iteration"],
                             PAPER_NUMBERS["vi_iterations"], PAPER_NUMBERS["speed_up"])}
    for j, column in enumerate(("paper_mae", "paper_seconds_per_iteration", "paper_iterations",
                                "paper_speed_up")):
        out[column] = [theirs.get(m, (np.nan,) * 4)[j] for m in out.method]
    return out


def plot_benchmark(table: pd.DataFrame, figure=None, *, title: str = ""):
    """MAE against wall time (log scale), one point per method and seed, the paper's two MAEs
    as lines.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`run_benchmark`'s or :func:`run_seeds`'s table.
    figure : path-like, optional
        Where to save the PNG (atomically).
    title : str
        The axes' title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    # pyplot takes a second to load and picks a backend: loaded to draw, not by the readers of
    # the table (study.prose)
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(8, 4.2))
    labelled = set()
    for row in table.itertuples():
        # names and colours as in every figure; squares for the MCMC runs, dots for CAVI;
        # one point per method and seed, the method named once
        style = method_style(FIGURE_METHODS[row.method])
        kind = "MCMC" if "MCMC" in row.method else "CAVI"
        label = style.label if style.label.endswith(kind) else f"{style.label}, {kind}"
        ax.scatter(row.seconds, row.mae, s=60, marker="s" if kind == "MCMC" else "o",
                   color=style.colour, alpha=0.8,
                   label=None if row.method in labelled else label)
        labelled.add(row.method)
    ax.axhline(PAPER_NUMBERS["mcmc_mae"], color="grey", ls="--", lw=1,
               label=f"MCMC MAE {PAPER_NUMBERS['mcmc_mae']} as reported by\n"
                     "Schofield et al. (1000 x 1000, K = 50)")
    ax.axhline(PAPER_NUMBERS["vi_mae"], color="grey", ls=":", lw=1,
               label=f"CAVI MAE {PAPER_NUMBERS['vi_mae']} as reported")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set(xlabel="wall time (s, log scale; compilation excluded)",
           ylabel="MAE to the true rates", title=title)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    if figure is not None:
        save_figure(fig, figure, dpi=110)
    return fig

