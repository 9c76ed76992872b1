"""study.diagnoses: every committed verdict other than PASS has a diagnosis and no diagnosis
outlives its verdict; a diagnosis is one of the four causes with its evidence and a command
that runs; the claims builder attaches them, reports what is missing or stale, and counts the
causes in claims.md and claims.json."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from study import claims as cl
from study import diagnoses as dg
from study import evidence
from study.claims import report
from study.diagnoses import CAUSES, DIAGNOSES, Diagnosis

REPO = Path(__file__).resolve().parents[2]
COMMITTED = ["results", "results/paper"]


@pytest.mark.parametrize("results", COMMITTED)
def test_every_committed_verdict_other_than_pass_is_diagnosed_and_none_is_stale(results,
                                                                               monkeypatch):
    if not (REPO / results / "claims.json").is_file():
        pytest.skip(f"no committed {results}/claims.json")
    monkeypatch.chdir(REPO)
    claims = cl.check_claims(results)
    problems = cl.diagnosis_problems(claims, cl.profile_of(results))
    assert problems == {"undiagnosed": [], "stale": []}, (
        f"{results}: give each new verdict other than PASS a diagnosis in study/diagnoses.py, "
        "and drop the diagnoses of claims that now pass")
    for c in report._verdicts(claims):
        assert (c.cause is None) == (c.status == cl.PASS), c.id


def test_a_cause_outside_the_four_is_refused():
    with pytest.raises(ValueError, match="choose one of"):
        Diagnosis("unlucky", "evidence", "true")
    with pytest.raises(ValueError, match="evidence"):
        Diagnosis(CAUSES[0], " ", "true")


def test_the_profiles_diagnoses_use_the_four_causes_and_name_a_command():
    assert set(DIAGNOSES) == {"quick", "paper"}
    for profile, table in DIAGNOSES.items():
        for claim, found in table.items():
            assert found.cause in CAUSES, (profile, claim)
            argv = shlex.split(found.command.split("&&")[0])
            if argv[:3] == ["python", "-m", "study.evidence"]:
                evidence.main(argv[3:])   # it runs (argparse exits on an unknown one)


def _one_failing_claim(tmp_path: Path, profile: str) -> Path:
    """A results root whose only table is a one-seed Fig. 1 file, under ``profile``."""
    root = tmp_path / "r"
    (root / "synthetic").mkdir(parents=True)
    levels = [{"epsilon": e, "collapsed": {"mae_to_rates": 1.0},
               "naive": {"mae_to_rates": 2.0}} for e in (2.5, 0.75)]
    (root / "synthetic" / "communities.json").write_text(json.dumps(
        {"levels": levels, "non-private": {"mae_to_rates": 0.9}}))
    (root / "params.yaml").write_text(yaml.safe_dump({"profile": profile}))
    return root


def test_the_builder_attaches_reports_and_counts_the_diagnoses(tmp_path, monkeypatch):
    fig1 = Diagnosis(dg.UNDECIDED, "one seed", "python -m study.evidence seeds")
    monkeypatch.setitem(DIAGNOSES, "mine", {"icml.fig1.naive_degrades": fig1,
                                            "no.such.claim": fig1})
    root = _one_failing_claim(tmp_path, "mine")
    claims = {c.id: c for c in cl.check_claims(root)}
    assert claims["icml.fig1.naive_degrades"].status == cl.NOT_REPRODUCED
    assert claims["icml.fig1.naive_degrades"].cause == dg.UNDECIDED
    problems = cl.diagnosis_problems(list(claims.values()), "mine")
    assert "icml.fig1.ours_beats_naive" in problems["undiagnosed"]
    assert problems["stale"] == ["no.such.claim"]
    md, js = cl.write_claims(root, tmp_path / "out")
    payload = json.loads(js.read_text())
    assert payload["diagnosis_problems"] == problems
    assert payload["causes"][dg.UNDECIDED] == 1
    assert payload["causes"]["undiagnosed"] == len(problems["undiagnosed"])
    record = {c["id"]: c for c in payload["claims"]}["icml.fig1.naive_degrades"]
    assert (record["cause"], record["evidence"], record["command"]) == (
        fig1.cause, fig1.evidence, fig1.command)
    text = md.read_text()
    assert "1 undecided" in text and "undiagnosed" in text and "`no.such.claim`" in text
    assert "## Why each verdict other than PASS is not one" in text


def test_a_diagnosis_of_a_claim_that_passes_is_stale(tmp_path, monkeypatch):
    fig1 = Diagnosis(dg.UNDECIDED, "one seed", "true")
    monkeypatch.setitem(DIAGNOSES, "mine", {"vi.appE_fig1.mae": fig1})
    root = _one_failing_claim(tmp_path, "mine")
    (root / "vi").mkdir()
    (root / "vi" / "synthetic.json").write_text(json.dumps(
        {"scores": {"bessel": {"mae": 0.4}, "naive": {"mae": 0.6}, "collapsed": {"mae": 0.4}}}))
    claims = cl.check_claims(root)
    assert {c.id: c.status for c in claims}["vi.appE_fig1.mae"] == cl.PASS
    assert {c.id: c.cause for c in claims}["vi.appE_fig1.mae"] is None
    assert cl.diagnosis_problems(claims, "mine")["stale"] == ["vi.appE_fig1.mae"]
