"""bench.machine: the record of the machine and of the code's revision beside a measurement."""
import json
import subprocess

import bench
from bench import CODE_PATHS, code_revision, cpu_model, machine, write_parts


def _git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_the_revision_is_the_commit_marked_only_by_changes_to_code(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "lpp").mkdir()
    (tmp_path / "lpp" / "a.py").write_text("a = 1\n")
    (tmp_path / "README.md").write_text("text\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    assert code_revision(tmp_path) == commit
    (tmp_path / "README.md").write_text("other text\n")       # not code
    (tmp_path / "lpp" / "new.py").write_text("b = 2\n")       # untracked
    assert code_revision(tmp_path) == commit
    (tmp_path / "lpp" / "a.py").write_text("a = 2\n")
    assert code_revision(tmp_path) == commit + "+changes"
    assert "lpp" in CODE_PATHS


def test_outside_a_checkout_the_revision_is_unknown(tmp_path):
    assert code_revision(tmp_path) == "unknown"


def test_the_machine_record_names_cores_cpu_and_revision():
    record = machine()
    assert {"cpu_count", "cpu_model", "numba_threads", "revision"} <= set(record)
    assert isinstance(cpu_model(), str) and cpu_model()


def test_a_part_run_alone_records_its_machine_and_leaves_the_others_as_they_were(tmp_path,
                                                                                monkeypatch):
    old = {"cpu_count": 2, "numba_threads": 2, "cpu_model": "AMD EPYC"}
    (tmp_path / "sweep.json").write_text(json.dumps(
        {"machine": old, "numpy": {"rows": [1]}, "large": {"levels": [1]}}))
    new = {"cpu_count": 16, "numba_threads": 16, "cpu_model": "Intel"}
    monkeypatch.setattr(bench, "machine", lambda: new)
    write_parts("sweep", {"large": {"levels": [2]}}, results=tmp_path)
    record = json.loads((tmp_path / "sweep.json").read_text())
    assert record["machine"] == old and record["numpy"] == {"rows": [1]}
    assert record["large"] == {"levels": [2], "machine": new}
    write_parts("threads", {"scaling": {"rows": []}}, results=tmp_path)
    write_parts("threads", {"side_by_side": {"cells": []}}, results=tmp_path)
    record = json.loads((tmp_path / "threads.json").read_text())
    assert record == {"machine": new, "scaling": {"rows": [], "machine": new},
                      "side_by_side": {"cells": [], "machine": new}}
