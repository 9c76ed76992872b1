"""The appendix E comparison: every method's row, reproducible MAEs, the paper's numbers beside,
the figure and table written, bad schedules refused; seeds repeat the whole comparison."""
import numpy as np
import pandas as pd
import pytest

import study.vi_benchmark
from study.reports import write_table
from study.vi_benchmark import (
    LABELS,
    clear_finished,
    finished_folder,
    PAPER_NUMBERS,
    data_seed,
    make_benchmark_data,
    mean_over_seeds,
    paper_table,
    plot_benchmark,
    run_benchmark,
    run_seeds,
)

SCHEDULE = {"mcmc_n_iter": 30, "mcmc_burn_in": 15, "mcmc_thin": 5, "vi_mcmc_n_iter": 10,
            "vi_mcmc_burn_in": 5, "em_sweeps": 20}


@pytest.fixture(scope="module")
def data():
    return make_benchmark_data(30, 3, shape=0.5, rng=data_seed(1))


@pytest.fixture(scope="module")
def table(data):
    return run_benchmark(data, 3, seed=1, **SCHEDULE)


def test_one_row_per_method_in_order(table):
    assert tuple(table.method) == LABELS
    assert list(table.data) == ["naive", "naive"] + ["private"] * 4
    assert np.all(np.isfinite(table.mae)) and np.all(table.mae > 0)
    assert np.all(table.seconds > 0)
    # the VI-started chain's time includes the CAVI's, and it ran its own schedule
    vi = table.set_index("method")
    assert vi.loc["VI-started MCMC", "seconds"] > vi.loc["collapsed CAVI", "seconds"]
    assert vi.loc["VI-started MCMC", "iterations"] == SCHEDULE["vi_mcmc_n_iter"]
    assert vi.loc["private MCMC", "iterations"] == SCHEDULE["mcmc_n_iter"]
    # the two private CAVIs are scored on the same exact bound
    assert np.isfinite(vi.loc["paper CAVI", "collapsed_bound"])
    assert np.isfinite(vi.loc["collapsed CAVI", "collapsed_bound"])


def test_same_seed_same_maes_and_seeds(data, table):
    again = run_benchmark(data, 3, seed=1, **SCHEDULE)
    np.testing.assert_array_equal(again.mae.to_numpy(), table.mae.to_numpy())
    np.testing.assert_array_equal(again.seed.to_numpy(), table.seed.to_numpy())
    assert len(set(table.seed)) == len(table)  # every method its own stream


def test_data_seed_replays_the_data():
    a = make_benchmark_data(20, 2, rng=data_seed(3))
    b = make_benchmark_data(20, 2, rng=data_seed(3))
    np.testing.assert_array_equal(a.y_tilde, b.y_tilde)
    assert not np.array_equal(a.y_tilde, make_benchmark_data(20, 2, rng=data_seed(4)).y_tilde)


def test_paper_numbers_beside_ours(table):
    out = paper_table(table).set_index("method")
    assert out.loc["private MCMC", "paper_mae"] == PAPER_NUMBERS["mcmc_mae"] == 0.36
    assert out.loc["paper CAVI", "paper_mae"] == PAPER_NUMBERS["vi_mae"] == 0.52
    assert out.loc["paper CAVI", "paper_seconds_per_iteration"] == 2.8
    assert out.loc["private MCMC", "paper_seconds_per_iteration"] == 0.8
    assert out.loc["paper CAVI", "paper_speed_up"] == 20.0
    assert out.loc["private MCMC", "speed_up"] == 1.0
    assert np.isnan(out.loc["collapsed CAVI", "paper_mae"])


def test_table_and_figure_written(table, tmp_path):
    path = write_table(table, tmp_path / "sub" / "benchmark.csv")
    back = pd.read_csv(path)
    assert list(back.method) == list(LABELS)
    np.testing.assert_allclose(back.mae, table.mae, rtol=1e-5)
    fig_path = tmp_path / "fig" / "vi_benchmark.png"
    plot_benchmark(table, fig_path)
    assert fig_path.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("change, match", [
    ({"mcmc_burn_in": 30}, "burn-in"),
    ({"vi_mcmc_burn_in": -1}, "burn-in"),
    ({"mcmc_n_iter": 0}, "mcmc_n_iter"),
    ({"mcmc_thin": 0}, "mcmc_thin"),
])
def test_bad_schedules_raise(data, change, match):
    with pytest.raises(ValueError, match=match):
        run_benchmark(data, 3, seed=1, **{**SCHEDULE, **change})


def test_bad_k_and_seed_raise(data):
    with pytest.raises(ValueError):
        run_benchmark(data, 0, seed=1, **SCHEDULE)
    with pytest.raises((ValueError, TypeError)):
        run_benchmark(data, 3, seed=-1, **SCHEDULE)


def test_seeds_repeat_the_whole_comparison_and_keep_each_seeds_rows(table):
    runs = run_seeds([1, 2], 30, 3, shape=0.5, **SCHEDULE)
    assert list(runs.columns[:2]) == ["run_seed", "method"]
    assert list(runs.run_seed) == [1] * len(LABELS) + [2] * len(LABELS)
    # seed 1's rows are run_benchmark's on seed 1's data, whatever runs beside it
    first = runs[runs.run_seed == 1].reset_index(drop=True)
    np.testing.assert_array_equal(first.mae.to_numpy(), table.mae.to_numpy())
    assert not np.array_equal(first.mae.to_numpy(), runs[runs.run_seed == 2].mae.to_numpy())
    means = mean_over_seeds(runs).set_index("method")
    assert tuple(means.index) == LABELS and set(means.runs) == {2}
    pair = runs[runs.method == "paper CAVI"].mae
    assert means.loc["paper CAVI", "mae"] == pytest.approx(pair.mean())
    assert means.loc["paper CAVI", "mae_sd"] == pytest.approx(pair.std(ddof=1))
    out = paper_table(runs).set_index("method")
    assert out.loc["private MCMC", "speed_up"] == 1.0 and out.loc["paper CAVI", "runs"] == 2


def test_a_run_cut_short_continues_with_the_seeds_it_had_not_finished(tmp_path, table,
                                                                    monkeypatch, capsys):
    folder = finished_folder(tmp_path / "benchmark.csv")
    assert folder.name == "benchmark.csv.checkpoints"
    first = run_seeds([1], 30, 3, shape=0.5, finished=folder, **SCHEDULE)
    (done,) = folder.glob("seed1-*.csv")
    # the seed is not run again: its rows come back from the file, the values to the bit
    monkeypatch.setattr(study.vi_benchmark, "run_benchmark",
                        lambda *a, **kw: pytest.fail("a finished seed ran again"))
    again = run_seeds([1], 30, 3, shape=0.5, finished=folder, **SCHEDULE)
    assert "read from" in capsys.readouterr().out
    np.testing.assert_array_equal(again.mae.to_numpy(), table.mae.to_numpy())
    # the stage's table is the same text (a missing value reads back as NaN, not None)
    written = [write_table(t, tmp_path / f"{name}.csv").read_bytes()
               for name, t in (("first", first), ("again", again))]
    assert written[0] == written[1]
    # other settings never read another's seeds, and remove them
    monkeypatch.undo()
    run_seeds([1], 30, 3, shape=0.6, finished=folder, **SCHEDULE)
    assert not done.exists() and len(list(folder.glob("seed1-*.csv"))) == 1
    clear_finished(folder)
    assert not folder.exists()


def test_one_runs_table_has_no_spread(table):
    means = mean_over_seeds(table)
    assert set(means.runs) == {1} and set(means.mae_sd) == {0.0}


@pytest.mark.parametrize("seeds", [[], [1, 1], [-1]])
def test_bad_seeds_raise(seeds):
    with pytest.raises((ValueError, TypeError), match="seeds"):
        run_seeds(seeds, 30, 3, **SCHEDULE)
