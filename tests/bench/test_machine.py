"""bench.machine: the record of the machine and of the code's revision beside a measurement."""
import subprocess

from bench import CODE_PATHS, code_revision, cpu_model, machine


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
