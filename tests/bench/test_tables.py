"""The benchmark tables that the docs quote are the ones ``bench.tables`` makes from the
committed results, so a rerun's numbers cannot leave stale copies behind."""
import copy
from pathlib import Path

import pytest

from bench.tables import (
    DESIGN_CHAINS,
    DESIGN_COPIES,
    DESIGN_NONPRIVATE_CHAINS,
    DESIGN_SWEEPS,
    _load,
    conditions,
    cost_model_table,
    design_hours,
    gpu_table,
    markdown_table,
    targets_table,
)
from study.prose import block_content

ROOT = Path(__file__).resolve().parents[2]


def test_the_gpu_page_quotes_the_committed_gpu_results():
    quoted = block_content((ROOT / "docs" / "gpu.md").read_text(), "gpu-table")
    assert quoted is not None, "docs/gpu.md has no marked table"
    assert quoted == gpu_table(_load("gpu"))


def test_the_readme_quotes_the_cost_model_of_the_committed_results():
    quoted = block_content((ROOT / "README.md").read_text(), "cost-model")
    assert quoted is not None, "README.md has no marked cost model"
    assert quoted == cost_model_table(_load("sweep"), _load("gpu"))


def test_the_design_hours_count_every_fit_of_the_design():
    """One second per sweep everywhere: every fit's sweeps, one after another."""
    levels = [{"collapsed": 1.0, "naive": 1.0}] * 3
    fits = DESIGN_COPIES * DESIGN_CHAINS * 2 * len(levels) + DESIGN_NONPRIVATE_CHAINS
    assert design_hours(levels, 1.0) == pytest.approx(fits * DESIGN_SWEEPS / 3600)
    # the naive method's time counts as much as ours; the reference's only for its chains
    assert design_hours([{"collapsed": 0.0, "naive": 2.0}] * 3, 0.0) == pytest.approx(
        DESIGN_COPIES * DESIGN_CHAINS * 6 * DESIGN_SWEEPS / 3600)


def test_a_markdown_table_has_a_header_a_rule_and_a_row_per_entry():
    assert markdown_table(("a", "b"), [(1, "x"), (2.5, "")]) == (
        "| a | b |\n|---|---|\n| 1 | x |\n| 2.5 |  |")


def test_a_table_states_the_recorded_machine_and_load_or_that_none_was_recorded():
    record = {"machine": {"cpu_count": 2, "numba_threads": 2, "cpu_model": "AMD EPYC"},
              "part": {"load_before": [1.04, 0.9, 0.8], "load_after": [1.56, 1.2, 1.0]}}
    assert conditions(record, record["part"]) == (
        "2 numba threads on 2 cores (AMD EPYC); load average 1.0 before, 1.6 after")
    bare = {"machine": {"cpu_count": 16, "numba_threads": 16}}
    assert conditions(bare, threads=1) == (
        "1 numba thread on 16 cores (CPU model not recorded); no load average recorded")
    # a part run on another machine than the file's others names its own
    record["part"]["machine"] = {"cpu_count": 16, "numba_threads": 16, "cpu_model": "Intel"}
    assert conditions(record, record["part"]) == (
        "16 numba threads on 16 cores (Intel); load average 1.0 before, 1.6 after")


@pytest.mark.parametrize("seconds, result", [(0.3, "met: 0.300 s"), (0.5, "**not** met: 0.500 s")])
def test_a_target_is_met_or_not_by_the_recorded_time(seconds, result):
    sweep = copy.deepcopy(_load("sweep"))
    sweep["large"]["levels"][0]["nonprivate"]["seconds"] = seconds
    table = targets_table(sweep, _load("accuracy"), _load("vi"), _load("threads"), _load("lda"),
                          _load("lda_reuters"))
    row = next(line for line in table.splitlines() if "non-private on the true counts" in line)
    assert row.endswith(f"| {result} |")


@pytest.mark.parametrize("speed_up, verdict", [(1.9, "met: 1.90×"), (1.7, "**not** met: 1.70×")])
def test_the_thread_scaling_target_reads_ours_at_two_threads(speed_up, verdict):
    threads = copy.deepcopy(_load("threads"))
    for row in threads["scaling"]["rows"]:
        if (row["sweep"], row["threads"]) == ("collapsed", 2):
            row["speedup"] = speed_up
    table = targets_table(_load("sweep"), _load("accuracy"), _load("vi"), threads, _load("lda"),
                          _load("lda_reuters"))
    row = next(line for line in table.splitlines() if "ours at 2 threads" in line)
    assert f"| {verdict} (naive" in row


def test_the_tomotopy_target_is_met_only_at_every_k():
    lda = copy.deepcopy(_load("lda"))
    ratios = [0.9] + [1.1] * (len(lda["rows"]) - 1)
    for row, ratio in zip(lda["rows"], ratios):
        row["lpp_over_tomotopy"] = ratio
    table = targets_table(_load("sweep"), _load("accuracy"), _load("vi"), _load("threads"), lda,
                          _load("lda_reuters"))
    row = next(line for line in table.splitlines() if "tomotopy" in line)
    assert "**not** met: 0.90× at K = 20, 1.10× at K = 50" in row


def test_the_long_document_target_reads_the_sweep_with_and_without_the_gamma_draws():
    reuters = copy.deepcopy(_load("lda_reuters"))
    for row, (whole, rest) in zip(reuters["rows"], [(0.95, 0.5), (0.99, 0.6)]):
        row["lpp_over_tomotopy"], row["rest_over_tomotopy"] = whole, rest
    table = targets_table(_load("sweep"), _load("accuracy"), _load("vi"), _load("threads"),
                          _load("lda"), reuters)
    row = next(line for line in table.splitlines() if "long documents" in line)
    assert ("met: 0.95× at K = 20 (0.50× without the topics' Gamma draws), 0.99× at K = 50"
            in row) and "**not**" not in row


def test_the_long_document_target_of_collapse_phi_is_met_only_at_every_k():
    reuters = copy.deepcopy(_load("lda_reuters"))
    for row, ratio in zip(reuters["rows"], [0.9, 1.1]):
        row["collapsed_phi_over_tomotopy"] = ratio
    table = targets_table(_load("sweep"), _load("accuracy"), _load("vi"), _load("threads"),
                          _load("lda"), reuters)
    row = next(line for line in table.splitlines() if "collapse_phi=True" in line)
    assert "**not** met: 0.90× at K = 20, 1.10× at K = 50" in row


def test_the_floor_and_naive_targets_read_every_level_at_every_thread_count():
    sweep = copy.deepcopy(_load("sweep"))
    for level in sweep["large"]["levels"]:
        level["floor"]["seconds"], level["collapsed"]["seconds"] = 1.0, 1.5
        level["naive"]["seconds"] = 1.2
        level["one_thread"] = {"floor": {"seconds": 2.0}, "collapsed": {"seconds": 5.0},
                               "naive": {"seconds": 4.0}}
    sweep["large"]["levels"][1]["collapsed"]["seconds"] = 2.5
    sweep["large"]["levels"][0]["naive"]["seconds"] = 1.8
    table = targets_table(sweep, _load("accuracy"), _load("vi"), _load("threads"), _load("lda"),
                          _load("lda_reuters"))
    row = next(line for line in table.splitlines() if "× the floor" in line)
    threads = sweep["large"]["levels"][0]["threads"]
    assert f"met at ε/N = 1, {threads} threads (1.50×)" in row
    assert f"**not** met at ε/N = 2, {threads} threads (2.50×)" in row
    assert "**not** met at ε/N = 3, 1 thread (2.50×)" in row
    assert row.count("met at ε/N") == 6
    row = next(line for line in table.splitlines() if "naive ≤ ours" in line)
    assert f"**not** met at ε/N = 1, {threads} threads (1.20×)" in row
    assert f"met at ε/N = 2, {threads} threads (0.48×)" in row
    assert "met at ε/N = 3, 1 thread (0.80×)" in row
