"""study.claims_changes: the verdicts that changed between two claims records."""
import json
import subprocess

import pytest

from study.claims_changes import RecordError, changes, counts, load_record, main, report


def _claim(id_, status, ours="x", chains=2, copies=1, reason="because"):
    return {"id": id_, "status": status, "ours": ours, "chains": chains, "copies": copies,
            "reason": reason}


BASE = {"claims": [_claim("a", "PASS"), _claim("b", "UNSETTLED", ours="0.1 | 0.2"),
                   _claim("gone", "FAIL")],
        "observations": [_claim("obs", "PASS")]}
NEW = {"claims": [_claim("new", "NOT-RUN"), _claim("b", "PASS", copies=3, reason="beyond"),
                  _claim("a", "PASS", ours="y")],
       "observations": []}


def test_changes_are_changed_verdicts_and_one_sided_claims_in_the_new_order():
    found = changes(BASE, NEW)
    assert [(c.id, c.base is None, c.new is None) for c in found] == [
        ("new", True, False), ("b", False, False), ("gone", False, True)]
    assert [c.status_changed for c in found] == [False, True, False]


def test_a_changed_reading_with_the_same_verdict_is_not_a_change():
    assert "a" not in {c.id for c in changes(BASE, NEW)}


def test_counts_follow_the_verdict_order_and_skip_observations():
    assert counts(BASE) == {"PASS": 1, "FAIL": 1, "UNSETTLED": 1, "NOT-REPRODUCED": 0,
                            "NOT-RUN": 0}


def test_report_rows_name_both_verdicts_support_and_reason():
    text = report(BASE, NEW, base_name="old", new_name="now")
    assert "| PASS | 1 | 2 |" in text and "| all | 3 | 3 |" in text
    row = next(line for line in text.splitlines() if line.startswith("| `b`"))
    assert "UNSETTLED → PASS" in row
    assert "2 chains, 1 copy → 2 chains, 3 copies" in row
    assert "0.1 \\| 0.2" in row          # a pipe inside a reading does not split the row
    assert row.endswith("| beyond |")
    assert "## Claims only in now (1)" in text and "| `new` | NOT-RUN |" in text
    assert "## Claims only in old (1)" in text and "| `gone` | FAIL |" in text


def test_no_change_says_so():
    text = report(BASE, BASE)
    assert "## Verdicts that changed (0)\n\nNone." in text


def test_a_record_is_read_from_a_revision(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "claims.json").write_text(json.dumps(BASE))
    git("add", "claims.json")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    (tmp_path / "claims.json").write_text(json.dumps(NEW))
    assert load_record("HEAD:claims.json", repo=tmp_path) == BASE
    with pytest.raises(RecordError, match="HEAD:missing.json: no such file, and git show"):
        load_record("HEAD:missing.json", repo=tmp_path)


@pytest.mark.parametrize("text, message", [("{", "not JSON"), ('{"claims": 3}',
                                                                "not a claims record")])
def test_a_file_that_is_not_a_claims_record_is_refused_by_name(tmp_path, text, message):
    path = tmp_path / "claims.json"
    path.write_text(text)
    with pytest.raises(RecordError, match=f"{path}: {message}"):
        load_record(str(path))


def test_the_command_exits_2_naming_a_missing_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path / "nope.json"), str(tmp_path / "nope.json")])
    assert exit_.value.code == 2
    assert "nope.json: no such file" in capsys.readouterr().err


def test_the_command_prints_the_report(tmp_path, capsys):
    for name, record in (("base.json", BASE), ("new.json", NEW)):
        (tmp_path / name).write_text(json.dumps(record))
    assert main([str(tmp_path / "base.json"), str(tmp_path / "new.json")]) == 0
    assert "UNSETTLED → PASS" in capsys.readouterr().out
