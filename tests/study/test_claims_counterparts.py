"""The claims of the figures that had no counterpart: appendix Fig. 2, the VI paper's speed-up,
iteration count and seconds per iteration, Foulds et al.'s Fig. 1, Table 1, Fig. 6 (all three
panels, paired by held-out split), OPS run time and war-log figures. Each check passes, fails
(or is not reproduced) and is NOT-RUN on small hand-made tables."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from study import claims as cl
from study.claims import FAIL, NOT_REPRODUCED, NOT_RUN, PASS, foulds, icml, reading, vi


def _by_id(group, root):
    """The verdicts of one group of checks on the tables under ``root``, by claim id."""
    return {check.id: reading._run(check.run) for check in group(reading._Reader(root))}


def _write(root, rel, payload):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(payload, pd.DataFrame):
        payload.to_csv(path, index=False)
    else:
        path.write_text(json.dumps(payload))


# ---------------------------------------------------------------- appendix Fig. 2

def _two_geometric(holds=True, off_centre=True, heavier=True):
    return {"identity": {"k_max": 40, "max_abs_gap_below": 1e-13 if holds else 1e-3,
                         "per_alpha": {"0.5": 1e-13}, "tolerance": 1e-9, "holds": holds},
            "skellam": [{"rates": [1, 1], "mean": 0},
                        {"rates": [5, 1], "mean": 4 if off_centre else 0}],
            "tails": [{"alpha": 0.5, "k": 8, "two_sided_geometric": 5e-3,
                       "skellam": 4e-4 if heavier else 6e-3}]}


@pytest.mark.parametrize("kwargs, identity, shapes", [
    ({}, PASS, PASS),
    ({"holds": False}, FAIL, PASS),
    ({"heavier": False}, PASS, FAIL),
    ({"off_centre": False}, PASS, FAIL),
])
def test_appendix_fig2(tmp_path, kwargs, identity, shapes):
    _write(tmp_path, "synthetic/two_geometric.json", _two_geometric(**kwargs))
    verdicts = _by_id(icml._icml_appendix_fig2, tmp_path)
    assert verdicts["icml.appfig2.randomized_skellam"].status == identity
    assert verdicts["icml.appfig2.symmetric_heavy_tailed"].status == shapes


def test_appendix_fig2_without_its_table_is_not_run(tmp_path):
    verdicts = _by_id(icml._icml_appendix_fig2, tmp_path)
    assert {v.status for v in verdicts.values()} == {NOT_RUN}
    assert all("two_geometric.json is absent" in v.reason for v in verdicts.values())


# ---------------------------------------------------------------- VI: 20x and 100 iterations

def _benchmark(vi_iterations=100, vi_seconds=10.0, mcmc_iterations=7500, mcmc_seconds=250.0,
               converged=True):
    return pd.DataFrame([
        {"method": "private MCMC", "iterations": mcmc_iterations,
         "seconds_per_iteration": mcmc_seconds / mcmc_iterations, "seconds": mcmc_seconds,
         "converged": None},
        {"method": "paper CAVI", "iterations": vi_iterations,
         "seconds_per_iteration": vi_seconds / vi_iterations, "seconds": vi_seconds,
         "converged": converged}])


@pytest.mark.parametrize("kwargs, iterations, speed_up", [
    ({}, PASS, PASS),                                      # 100 iterations, 25x as run
    ({"vi_iterations": 150, "mcmc_seconds": 120.0}, PASS, PASS),      # 12x: within a factor 2
    ({"vi_iterations": 450, "mcmc_seconds": 50.0}, NOT_REPRODUCED, NOT_REPRODUCED),  # 5x
    ({"converged": False}, NOT_REPRODUCED, PASS),
])
def test_vi_speed_up_and_iterations(tmp_path, kwargs, iterations, speed_up):
    _write(tmp_path, "vi/benchmark.csv", _benchmark(**kwargs))
    verdicts = _by_id(vi._vi_speed, tmp_path)
    assert verdicts["vi.appE.iterations"].status == iterations
    assert verdicts["vi.appE.speed_up"].status == speed_up


def _seeded_cavi_runs(iterations, converged):
    return pd.concat([_benchmark(vi_iterations=i, converged=c).assign(run_seed=seed)
                      for seed, (i, c) in enumerate(zip(iterations, converged), start=1)],
                     ignore_index=True)


@pytest.mark.parametrize("iterations, converged, status, median", [
    # "typically": the median run; one run at the cap of five does not decide it
    ([182, 200, 183, 196, 191], [True, False, True, True, True], PASS, "191 iterations"),
    # the middle run at the cap: it needed more, however many
    ([150, 200, 200, 160, 200], [True, False, False, True, False], NOT_REPRODUCED,
     "at least 200 iterations"),
    # converged runs beyond the tolerance
    ([250, 260, 240], [True, True, True], NOT_REPRODUCED, "250 iterations"),
    # an even count: the upper middle, here the capped run
    ([120, 200], [True, False], NOT_REPRODUCED, "at least 200 iterations"),
    # an even count of converged runs: the upper middle
    ([120, 190, 150, 170], [True] * 4, PASS, "170 iterations"),
    # the tolerance's edge: 200 converged passes, 201 does not
    ([200, 120, 201], [True] * 3, PASS, "200 iterations"),
    ([201, 120, 202], [True] * 3, NOT_REPRODUCED, "201 iterations"),
    # a run capped below the others: the median lies between two converged runs, both within
    ([150, 100, 160], [True, False, True], PASS, "150 to 160 iterations"),
])
def test_the_typical_cavi_run_is_the_median_with_capped_runs_as_bounds(
        tmp_path, iterations, converged, status, median):
    _write(tmp_path, "vi/benchmark.csv", _seeded_cavi_runs(iterations, converged))
    verdict = _by_id(vi._vi_speed, tmp_path)["vi.appE.iterations"]
    assert verdict.status == status
    assert verdict.ours.startswith(median)
    assert f"the median run of {len(iterations)}" in verdict.ours
    if not all(converged):
        cap = max(i for i, done in zip(iterations, converged) if not done)
        assert f"stopped at the cap of {cap}" in verdict.ours


@pytest.mark.parametrize("iterations, converged", [
    # a cap of 150 does not show that the middle run needed more than the 200 allowed
    ([150, 150, 120], [False, False, True]),
    # the median lies between a run capped at 190, which may need more, and a converged 250
    ([190, 250, 100], [False, True, True]),
])
def test_a_median_that_a_cap_below_the_tolerance_leaves_open_is_undecided(
        tmp_path, iterations, converged):
    _write(tmp_path, "vi/benchmark.csv", _seeded_cavi_runs(iterations, converged))
    verdict = _by_id(vi._vi_speed, tmp_path)["vi.appE.iterations"]
    assert verdict.status == NOT_REPRODUCED and "undecided" in verdict.reason


def test_a_short_mcmc_run_is_projected_to_the_papers_schedule(tmp_path):
    # 200 sweeps of 0.1 s: 20 s as run (2x), 750 s at 7,500 sweeps (75x)
    _write(tmp_path, "vi/benchmark.csv", _benchmark(mcmc_iterations=200, mcmc_seconds=20.0))
    verdict = _by_id(vi._vi_speed, tmp_path)["vi.appE.speed_up"]
    assert verdict.status == PASS and "projected" in verdict.reason and "75x" in verdict.ours


def test_vi_speed_without_its_table_or_rows_is_not_run(tmp_path):
    assert {v.status for v in _by_id(vi._vi_speed, tmp_path).values()} == {NOT_RUN}
    _write(tmp_path, "vi/benchmark.csv", _benchmark().iloc[:1])
    verdicts = _by_id(vi._vi_speed, tmp_path)
    assert {v.status for v in verdicts.values()} == {NOT_RUN}
    assert "no paper CAVI row" in verdicts["vi.appE.speed_up"].reason


# ---------------------------------------------------------------- Foulds et al.

def _beta_bernoulli(temperature=2.7726, ops_peak=2.5, support=(0.2, 0.8)):
    return {"figure1": {"n": 20, "p": 0.3, "epsilon": 1.0, "a0": 0.2, "n_pos": 10,
                        "temperature": temperature, "posterior_peak": 3.7,
                        "ops_peak": ops_peak, "ops_support": list(support)}}


def _runtime(ops=2.0, laplace=1.05):
    return {"results": {"iraq": {"data": "synthetic Iraq-shaped",
                                 "relative": {"nonprivate": 1.0, "laplace": laplace,
                                              "ops": ops}}}}


@pytest.mark.parametrize("kwargs, status", [
    ({}, PASS),
    ({"temperature": 3.5}, FAIL),
    ({"ops_peak": 4.0}, FAIL),
    ({"support": (0.05, 0.95)}, FAIL),
])
def test_foulds_fig1(tmp_path, kwargs, status):
    _write(tmp_path, "central/beta_bernoulli.json", _beta_bernoulli(**kwargs))
    assert _by_id(foulds._foulds_more, tmp_path)["foulds.fig1.ops_flat_truncated"].status \
        == status


@pytest.mark.parametrize("kwargs, status", [
    ({}, PASS), ({"laplace": 0.99}, PASS), ({"ops": 1.1}, NOT_REPRODUCED),
    ({"ops": 4.0}, NOT_REPRODUCED), ({"laplace": 1.8}, NOT_REPRODUCED),
    # Laplace's extra time a fifth of OPS's: more than "did not greatly affect"
    ({"laplace": 1.15, "ops": 1.68}, NOT_REPRODUCED),
])
def test_ops_runtime(tmp_path, kwargs, status):
    _write(tmp_path, "central/runtime.json", _runtime(**kwargs))
    verdict = _by_id(foulds._foulds_more, tmp_path)["foulds.sec5.ops_runtime"]
    assert verdict.status == status


def test_foulds_without_tables_is_not_run_and_says_why(tmp_path):
    verdicts = _by_id(foulds._foulds_more, tmp_path)
    assert {v.status for v in verdicts.values()} == {NOT_RUN}
    assert "central/runtime.json is absent" in verdicts["foulds.sec5.ops_runtime"].reason
    for claim_id in ("foulds.fig3_5.iraq_states", "foulds.fig7.afghanistan_ops_states"):
        assert "licence" in verdicts[claim_id].reason


def test_every_new_claim_is_in_the_table(tmp_path):
    ids = {c.id for c in cl.check_claims(tmp_path)}
    assert {"icml.appfig2.randomized_skellam", "icml.appfig2.symmetric_heavy_tailed",
            "vi.appE.iterations", "vi.appE.speed_up", "vi.appE.seconds_per_iteration",
            "foulds.fig1.ops_flat_truncated",
            "foulds.table1.sensitivity", "foulds.table1.are", "foulds.table1.gibbs_cost",
            "foulds.fig6.afghanistan_hmm", "foulds.sec5.ops_runtime",
            "foulds.fig3_5.iraq_states", "foulds.fig7.afghanistan_ops_states"} <= ids


def test_the_fig6_checks_on_a_stand_in_show_a_pattern_not_a_verdict(tmp_path):
    """Every panel alike: on the synthetic stand-ins the comparison is run and shown, its
    outcome named in the reason, and the verdict is NOT-RUN (the claims are about the war
    logs); rows of the logs themselves, where a table has them, give the verdict."""
    rows = [{"dataset": dataset, "split": s, "model": model, "route": r, "epsilon": 1.0,
             "loglik_per_record": v}
            for dataset, model in (("synthetic_iraq", "hmm"),
                                   ("synthetic_afghanistan", "hmm"),
                                   ("synthetic_afghanistan", "naive_bayes"))
            for s in (0, 1) for r, v in (("laplace", -5.0 + 0.01 * s), ("ops_M10", -5.5))]
    _write(tmp_path, "central/heldout_loglik.csv", pd.DataFrame(rows))
    verdicts = {c.id: c for c in cl.check_claims(tmp_path)}
    for panel, outcome in (("iraq_hmm", PASS), ("naive_bayes", PASS),
                           ("afghanistan_hmm", FAIL)):
        verdict = verdicts[f"foulds.fig6.{panel}"]
        assert verdict.status == NOT_RUN and "synthetic_" in verdict.ours, panel
        assert "untestable here" in verdict.reason and f"gives {outcome}:" in verdict.reason
        assert verdict.copies == 2
    assert "synthetic Iraq-shaped" in verdicts["foulds.fig6.iraq_hmm"].source
    _write(tmp_path, "central/heldout_loglik.csv",
           pd.DataFrame([{**row, "dataset": "iraq"} for row in rows
                         if row["dataset"] == "synthetic_iraq"] + rows))
    assert {c.id: c for c in cl.check_claims(tmp_path)}["foulds.fig6.iraq_hmm"].status == PASS


def test_the_state_count_is_shown_never_judged(tmp_path):
    _write(tmp_path, "central/occupancy.json", {"datasets": {"synthetic_iraq": {
        "laplace": {"n_used": 2}, "nonprivate": {"n_used": 9}, "true_regimes": 6}}})
    verdict = {c.id: c for c in cl.check_claims(tmp_path)}["foulds.sec5.occupancy"]
    assert verdict.status == NOT_RUN and "untestable" in verdict.reason
    assert "true regimes 6" in verdict.ours


# ---------------------------------------------------------------- ICML Fig. 3 at high noise

def recovery_map(scores, *, threshold=0.6, doc_length=30.0):
    """synthetic/recovery_map.json: ``scores`` maps ``(method, alpha0)`` to one list per seed
    of its chains' support scores, at ``doc_length`` tokens per document."""
    runs = [{"seed": seed, "doc_length": doc_length, "alpha0": alpha0, "chain": chain,
             "method": method, "draw_support": value, "mean_support": value}
            for (method, alpha0), seeds in scores.items()
            for seed, chains in enumerate(seeds, start=1)
            for chain, value in enumerate(chains)]
    return {"limits": {"uniform": 0.3, "truth": 0.9, "threshold": threshold}, "runs": runs}


def _regime(ours_high, naive_high, nonprivate=0.8):
    """The figure's two cells: every method near the truth at low noise; at high noise ours,
    the naive method and the non-private fit as given (two seeds x two chains)."""
    low = [[0.80, 0.81], [0.79, 0.80]]
    return {("collapsed", 0.2): low, ("naive", 0.2): low, ("nonprivate", 0.2): low,
            ("collapsed", 0.8): ours_high, ("naive", 0.8): naive_high,
            ("nonprivate", 0.8): [[nonprivate, nonprivate], [nonprivate, nonprivate]]}


FIG3 = ("icml.fig3.naive_degrades", "icml.fig3.ours_beats_naive",
        "icml.fig3.ours_recovers_at_high_noise")


def test_fig3_reads_the_recovery_map_at_the_figures_regime(tmp_path):
    """The paper's pattern (the naive method falls below the threshold, ours stays above it
    and ahead of it in every seed) passes all three; the chains are values of their seeds."""
    _write(tmp_path, "synthetic/recovery_map.json",
           recovery_map(_regime([[0.75, 0.76], [0.72, 0.74]], [[0.45, 0.47], [0.50, 0.48]])))
    verdicts = _by_id(icml._icml_fig3, tmp_path)
    assert {i: verdicts[i].status for i in FIG3} == dict.fromkeys(FIG3, PASS)
    assert (verdicts["icml.fig3.ours_beats_naive"].copies,
            verdicts["icml.fig3.ours_beats_naive"].chains) == (2, 2)
    assert "4 of 4 runs at or above 0.6" in verdicts["icml.fig3.ours_recovers_at_high_noise"].ours
    assert "0 of 4 runs" in verdicts["icml.fig3.naive_degrades"].ours


@pytest.mark.parametrize("ours_high, naive_high, expected", [
    # ours below the threshold in 3 of 4 runs: does not recover; naive ahead beyond the spread
    ([[0.50, 0.55], [0.65, 0.52]], [[0.70, 0.72], [0.74, 0.73]],
     {"icml.fig3.ours_recovers_at_high_noise": FAIL, "icml.fig3.ours_beats_naive": FAIL,
      "icml.fig3.naive_degrades": FAIL}),
    # ours above it in exactly half: not more than half, so not recovered
    ([[0.70, 0.50], [0.71, 0.52]], [[0.45, 0.47], [0.50, 0.48]],
     {"icml.fig3.ours_recovers_at_high_noise": FAIL, "icml.fig3.naive_degrades": PASS}),
    # ahead of the naive method in each seed, but by 0.02 and 0.30: inside the seeds' spread
    ([[0.52, 0.52], [0.78, 0.78]], [[0.50, 0.50], [0.48, 0.48]],
     {"icml.fig3.ours_beats_naive": NOT_REPRODUCED}),
])
def test_fig3_fails_or_is_undecided_on_the_map(tmp_path, ours_high, naive_high, expected):
    _write(tmp_path, "synthetic/recovery_map.json",
           recovery_map(_regime(ours_high, naive_high)))
    verdicts = _by_id(icml._icml_fig3, tmp_path)
    assert {i: verdicts[i].status for i in expected} == expected


def test_fig3_outside_the_figures_regime_is_not_run(tmp_path):
    # the non-private fit itself fails at high noise: not the regime the figure shows
    _write(tmp_path, "synthetic/recovery_map.json",
           recovery_map(_regime([[0.75, 0.76], [0.72, 0.74]], [[0.45, 0.47], [0.50, 0.48]],
                                nonprivate=0.5)))
    verdicts = _by_id(icml._icml_fig3, tmp_path)
    assert {verdicts[i].status for i in FIG3} == {NOT_RUN}
    assert "not the figure's regime" in verdicts["icml.fig3.ours_beats_naive"].reason
    # a map without the figure's document length
    _write(tmp_path, "synthetic/recovery_map.json",
           recovery_map(_regime([[0.75, 0.76], [0.72, 0.74]], [[0.45, 0.47], [0.50, 0.48]]),
                        doc_length=100.0))
    verdicts = _by_id(icml._icml_fig3, tmp_path)
    assert {verdicts[i].status for i in FIG3} == {NOT_RUN}
    assert "30 tokens per document" in verdicts["icml.fig3.ours_beats_naive"].reason


@pytest.mark.parametrize("ours_high, status", [
    ((0.16, 0.17), PASS),            # ours grows by 0.015 where naive grows by 0.3
    ((0.55, 0.57), FAIL),            # ours grows by 0.41: more than naive, beyond the spread
    ((0.25, 0.27), NOT_REPRODUCED),  # by 0.11: more than a tenth of naive's, under a half
])
def test_fig3_one_draw_observation_at_high_noise(tmp_path, ours_high, status):
    rows = [{"seed": seed, "alpha0": a, "collapsed": c, "naive": n}
            for seed, high in zip((3, 4), ours_high)
            for a, c, n in ((0.2, 0.15, 0.15), (0.8, high, 0.45))]
    _write(tmp_path, "synthetic/topics.json", {"per_seed": rows})
    verdict = _by_id(icml._icml_fig3, tmp_path)["icml.fig3.draw_ours_recovers_at_high_noise"]
    assert verdict.status == status
    assert verdict.ours.startswith("α0=0.2 → 0.8: ours at α0=0.8")


def test_fig3_with_one_noise_level_is_not_run(tmp_path):
    _write(tmp_path, "synthetic/topics.json",
           {"per_seed": [{"seed": 3, "alpha0": 0.2, "collapsed": 0.1, "naive": 0.2}]})
    verdict = _by_id(icml._icml_fig3, tmp_path)["icml.fig3.draw_ours_recovers_at_high_noise"]
    assert verdict.status == NOT_RUN


def test_vi_speed_is_judged_only_at_the_papers_size(tmp_path):
    _write(tmp_path, "vi/benchmark.csv", _benchmark())
    (tmp_path / "params.yaml").write_text("vi_benchmark:\n  n: 150\n")
    verdicts = _by_id(vi._vi_speed, tmp_path)
    assert {v.status for v in verdicts.values()} == {NOT_RUN}
    assert "vi_benchmark.n" in verdicts["vi.appE.speed_up"].reason
    (tmp_path / "params.yaml").write_text("vi_benchmark:\n  n: 1000\n")
    assert _by_id(vi._vi_speed, tmp_path)["vi.appE.speed_up"].status == PASS


# ---------------------------------------------------------------- VI: seconds per iteration

@pytest.mark.parametrize("kwargs, status", [
    ({}, PASS),                                               # 0.033 s and 0.1 s: 3.0x
    ({"mcmc_seconds": 7500.0, "vi_seconds": 400.0}, PASS),    # 1 s and 4 s: 4.0x
    ({"mcmc_seconds": 9000.0, "vi_seconds": 250.0}, NOT_REPRODUCED),   # 1.2 s, 2.5 s: 2.1x
    ({"mcmc_seconds": 7500.0, "vi_seconds": 100.0}, NOT_REPRODUCED),   # 1 s, 1 s: 1.0x
    ({"mcmc_seconds": 750.0, "vi_seconds": 100.0}, NOT_REPRODUCED),    # 0.1 s, 1 s: 10x
])
def test_seconds_per_iteration_are_judged_by_their_ratio_never_failed(tmp_path, kwargs, status):
    """The authors' seconds are their machine's: the CAVI's time per iteration over the
    MCMC's (3.5 in the paper) is what is compared, within a factor of 1.5 either way."""
    _write(tmp_path, "vi/benchmark.csv", _benchmark(**kwargs))
    verdict = _by_id(vi._vi_speed, tmp_path)["vi.appE.seconds_per_iteration"]
    assert verdict.status == status
    assert "machine" in verdict.reason and "per iteration" in verdict.ours


def test_seconds_per_iteration_without_the_papers_size_or_table_are_not_run(tmp_path):
    claim = "vi.appE.seconds_per_iteration"
    assert _by_id(vi._vi_speed, tmp_path)[claim].status == NOT_RUN
    _write(tmp_path, "vi/benchmark.csv", _benchmark())
    (tmp_path / "params.yaml").write_text("vi_benchmark:\n  n: 150\n")
    assert _by_id(vi._vi_speed, tmp_path)[claim].status == NOT_RUN


# ---------------------------------------------------------------- Foulds et al.'s Table 1

def _table1(laplace_sensitivity=2.0, ops_sensitivity=1.38629, ops_are=3.77259,
            laplace_cost="once", ops_cost="per update (2.77 per full scan unless converged)"):
    return pd.DataFrame([
        {"mechanism": "Laplace", "release": "statistics (posterior mean)",
         "sensitivity": laplace_sensitivity, "statistics": "noised", "temperature": 1,
         "are": 1, "gibbs_cost": laplace_cost},
        {"mechanism": "Laplace", "release": "statistics (one sample)",
         "sensitivity": laplace_sensitivity, "statistics": "noised", "temperature": 1,
         "are": 2, "gibbs_cost": laplace_cost},
        {"mechanism": "Exponential (OPS)", "release": "one sample",
         "sensitivity": ops_sensitivity, "statistics": "rescaled by 1/T",
         "temperature": 2.77259, "are": ops_are, "gibbs_cost": ops_cost}])


@pytest.mark.parametrize("kwargs, sensitivity, are, cost", [
    ({}, PASS, PASS, PASS),
    ({"laplace_sensitivity": 1.0}, FAIL, PASS, PASS),
    ({"ops_sensitivity": 2.19722}, FAIL, FAIL, PASS),      # a0 = 0.1's, with T still 2.77
    ({"ops_are": 2.77259}, PASS, FAIL, PASS),              # T, not 1 + T
    ({"ops_cost": "once"}, PASS, PASS, FAIL),
    ({"laplace_cost": "per update"}, PASS, PASS, FAIL),
])
def test_foulds_table1(tmp_path, kwargs, sensitivity, are, cost):
    _write(tmp_path, "central/table1.csv", _table1(**kwargs))
    _write(tmp_path, "central/beta_bernoulli.json", {"are": {"epsilon": 1.0, "a0": 0.2}})
    verdicts = _by_id(foulds._foulds_table1, tmp_path)
    assert verdicts["foulds.table1.sensitivity"].status == sensitivity
    assert verdicts["foulds.table1.are"].status == are
    assert verdicts["foulds.table1.gibbs_cost"].status == cost


def test_foulds_table1_without_its_tables_is_not_run(tmp_path):
    verdicts = _by_id(foulds._foulds_table1, tmp_path)
    assert {v.status for v in verdicts.values()} == {NOT_RUN}
    assert "central/table1.csv is absent" in verdicts["foulds.table1.sensitivity"].reason
    _write(tmp_path, "central/table1.csv", _table1())
    verdicts = _by_id(foulds._foulds_table1, tmp_path)      # no a0 and ε to evaluate it at
    assert verdicts["foulds.table1.sensitivity"].status == NOT_RUN
    assert verdicts["foulds.table1.gibbs_cost"].status == PASS


def test_the_committed_table1_matches_the_paper():
    verdicts = _by_id(foulds._foulds_table1, Path(__file__).resolve().parents[2] / "results")
    if any(v.status == NOT_RUN for v in verdicts.values()):
        pytest.skip("no committed results/central/table1.csv")
    assert {v.status for v in verdicts.values()} == {PASS}


# ---------------------------------------------------------------- Foulds et al.'s Fig. 6

def _heldout(dataset, model, laplace, ops, splits=(-5.0, -6.0, -7.0, -5.5)):
    """Held-out rows: per ε, Laplace's and OPS's (M = 10) offset from each split's level;
    OPS with M = 100 always worse. The splits differ more than the mechanisms."""
    rows = []
    for eps in laplace:
        for s, level in enumerate(splits):
            for route, offset in (("laplace", laplace[eps][s]), ("ops_M10", ops[eps][s]),
                                  ("ops_M100", ops[eps][s] - 1.0)):
                rows.append({"dataset": dataset, "split": s, "model": model, "route": route,
                             "epsilon": eps, "loglik_per_record": level + offset})
    return pd.DataFrame(rows)


AHEAD, BEHIND, EVEN = (0.05, 0.06, 0.04, 0.05), (-0.05, -0.06, -0.04, -0.05), (0.01, -0.01,
                                                                             0.0, 0.005)
ZERO = (0.0,) * 4


def _fig6(tmp_path, frame):
    _write(tmp_path, "central/heldout_loglik.csv", frame)
    return _by_id(foulds._foulds, tmp_path)


@pytest.mark.parametrize("laplace, status", [
    ({0.1: AHEAD, 10.0: EVEN}, PASS),        # ahead at small ε, level at large ε: superior
    ({0.1: AHEAD, 10.0: BEHIND}, FAIL),      # behind somewhere beyond the paired spread
    ({0.1: EVEN, 10.0: EVEN}, NOT_REPRODUCED),
])
def test_fig6_naive_bayes_is_paired_by_split(tmp_path, laplace, status):
    ops = {eps: ZERO for eps in laplace}
    verdict = _fig6(tmp_path, _heldout("afghanistan", "naive_bayes", laplace, ops))[
        "foulds.fig6.naive_bayes"]
    assert verdict.status == status and verdict.copies == 4
    assert "paired by split" in verdict.ours


def test_fig6_the_split_pairing_decides_where_bands_overlap(tmp_path):
    # unpaired, the splits' spread (about 0.9) swamps the 0.05 lead; paired, it is 4 of 4
    frame = _heldout("afghanistan", "naive_bayes", {0.1: AHEAD}, {0.1: ZERO})
    verdict = _fig6(tmp_path, frame)["foulds.fig6.naive_bayes"]
    assert verdict.status == PASS and "Laplace ahead in 4 of 4" in verdict.ours
    unsplit = _fig6(tmp_path / "u", frame.drop(columns="split"))["foulds.fig6.naive_bayes"]
    assert unsplit.status == NOT_RUN and "split" in unsplit.reason


@pytest.mark.parametrize("laplace, status", [
    ({0.1: EVEN, 1.0: EVEN, 10.0: AHEAD}, PASS),       # level at 2 of 3: competitive
    ({0.1: AHEAD, 1.0: AHEAD, 10.0: EVEN}, FAIL),      # Laplace ahead at a majority
    ({0.1: BEHIND, 1.0: EVEN, 10.0: AHEAD}, PASS),     # OPS ahead counts for OPS
])
def test_fig6_middle_ops_competitive_on_afghanistan(tmp_path, laplace, status):
    ops = {eps: ZERO for eps in laplace}
    verdicts = _fig6(tmp_path, _heldout("afghanistan", "hmm", laplace, ops))
    assert verdicts["foulds.fig6.afghanistan_hmm"].status == status
    # the Afghanistan HMM rows are not the naive Bayes claim's
    assert verdicts["foulds.fig6.naive_bayes"].status == NOT_RUN


@pytest.mark.parametrize("laplace, status", [
    ({0.1: AHEAD, 1.0: AHEAD, 10.0: EVEN}, PASS),
    # OPS ahead in every split at the highest privacy, Laplace ahead elsewhere
    ({0.1: BEHIND, 1.0: AHEAD, 10.0: AHEAD}, FAIL),
    ({0.1: EVEN, 1.0: AHEAD, 10.0: AHEAD}, NOT_REPRODUCED),   # not ahead where it matters
])
def test_fig6_iraq_needs_laplace_ahead_at_high_privacy(tmp_path, laplace, status):
    ops = {eps: ZERO for eps in laplace}
    verdict = _fig6(tmp_path, _heldout("iraq", "hmm", laplace, ops))[
        "foulds.fig6.iraq_hmm"]
    assert verdict.status == status
    assert "at the highest privacy" in verdict.reason
    assert _fig6(tmp_path / "none", _heldout("iraq", "naive_bayes", laplace, ops))[
        "foulds.fig6.iraq_hmm"].status == NOT_RUN
