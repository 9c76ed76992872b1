"""study.evidence: each summary the diagnoses cite prints from the committed tables."""
from __future__ import annotations

from pathlib import Path

import pytest

from study import evidence

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("summary", ["heldout", "seeds", "topics", "central", "topics-regime",
                                     "recovery-map"])
def test_the_summaries_print_from_the_committed_tables(summary, capsys, monkeypatch):
    if not (REPO / "results" / "paper" / "claims.json").is_file():
        pytest.skip("no committed results/paper")
    monkeypatch.chdir(REPO)
    assert evidence.main([summary, "results/paper"]) == 0
    assert capsys.readouterr().out.strip()


def test_an_unknown_summary_is_refused():
    with pytest.raises(SystemExit):
        evidence.main(["nothing-of-the-kind"])


def test_the_recovery_map_summary_shows_the_figures_regime(capsys, monkeypatch):
    if not (REPO / "results" / "synthetic" / "recovery_map.json").is_file():
        pytest.skip("no committed results/synthetic/recovery_map.json")
    monkeypatch.chdir(REPO)
    assert evidence.main(["recovery-map", "results"]) == 0
    out = capsys.readouterr().out
    assert "30 tokens/doc, α0 = 0.8" in out and "collapsed" in out and "# Topic recovery map" in out
