"""study.provenance: the committed results against the dvc.lock that describes them.

The toy repositories here are git repositories of a few files with a pipeline of two stages
(``fit`` for each seed of ``params.yaml``, its output a folder kept in DVC's cache, and
``report``, which reads the first fit and writes a committed table) and a ``dvc.lock``
written by hand. The hashes in these locks come from this file's own reading of DVC's rules
(md5 of the bytes; a folder's md5 is the md5 of its sorted JSON listing, with ``.dir``), not
from the module's, so a module that hashed differently would fail here.
"""
import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from study import provenance as pv

ROOT = Path(__file__).resolve().parents[2]

PIPELINE = """\
stages:
  fit:
    foreach: ${seeds}
    do:
      cmd: python code/step.py fit ${item}
      deps:
        - code
      outs:
        - results/fits/fit${item}
  report:
    cmd: python code/step.py report
    deps:
      - code/step.py
      - results/fits/fit1
    outs:
      - results/table.csv:
          cache: false
"""
CODE = {"code/step.py": "print('step, version 1')\n", "code/lib/util.py": "ONE = 1\n",
        # tracked but ignored by DVC (.dvcignore): not part of the folder's hash
        "code/kernel.nbc": "compiled\n"}
FIT_MD5 = "0123456789abcdef0123456789abcdef.dir"   # the cached fit's hash: not in git
TABLE = "seed,score\n1,0.5\n"


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def folder_md5(files: dict[str, str]) -> str:
    """DVC's hash of a folder holding ``files`` (paths inside it -> text)."""
    listing = sorted(({"md5": md5(text), "relpath": path} for path, text in files.items()),
                     key=lambda item: item["relpath"])
    return hashlib.md5(json.dumps(listing, sort_keys=True).encode()).hexdigest() + ".dir"


def code_md5(code: dict[str, str]) -> str:
    return folder_md5({path[len("code/"):]: text for path, text in code.items()
                       if path.startswith("code/") and not path.endswith(".nbc")})


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=repo, env=env,
                          check=True, capture_output=True, text=True).stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def entry(deps: dict[str, str], outs: dict[str, str]) -> dict:
    item = lambda path, digest: {"path": path, "hash": "md5", "md5": digest}
    return {"cmd": "python code/step.py", "deps": [item(*d) for d in deps.items()],
            "outs": [item(*o) for o in outs.items()]}


def lock(code=None, table=TABLE, fit_read=FIT_MD5, **extra) -> str:
    """The toy's dvc.lock: ``fit@1`` and ``report`` as a run of ``code`` would record them
    (``fit_read``: the fit's hash as ``report`` records reading it), plus ``extra`` entries."""
    code = CODE if code is None else code
    stages = {
        "fit@1": entry({"code": code_md5(code)}, {"results/fits/fit1": FIT_MD5}),
        "report": entry({"code/step.py": md5(code["code/step.py"]),
                         "results/fits/fit1": fit_read},
                        {"results/table.csv": md5(table)}),
        **extra}
    return yaml.safe_dump({"schema": "2.0", "stages": stages}, sort_keys=False)


@pytest.fixture
def toy(tmp_path):
    """A toy repository whose lock describes its committed files and code (at HEAD)."""
    repo = tmp_path / "toy"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, {**CODE, "dvc.yaml": PIPELINE, "params.yaml": "seeds: [1]\n",
                  ".dvcignore": "*.nbc\n", "results/fits/.gitignore": "/fit1\n/fit2\n",
                  "results/table.csv": TABLE, "dvc.lock": lock()}, "a run of the pipeline")
    return repo


def toy_layout(repo: Path, copies=None, roots=("results",)) -> pv.Layout:
    settings = yaml.safe_load((repo / "params.yaml").read_text())
    return pv.Layout("toy", "dvc.lock", roots, (("*.gitignore", "DVC's list"),), settings,
                     copies)


def check(repo: Path, **layout) -> pv.Report:
    return pv.check_provenance(repo, toy_layout(repo, **layout))


def where(report: pv.Report) -> list[str]:
    return [v.where for v in report.violations]


# ---- the toy repository ------------------------------------------------------------------

def test_a_lock_that_describes_the_committed_files_passes(toy):
    report = check(toy)
    assert report.ok, report.violations
    assert report.code.commit == git(toy, "rev-parse", "HEAD")
    assert report.code.differs_at_head == []
    assert (report.files_checked, report.outputs_committed, report.entries) == (2, 1, 2)


def test_a_committed_output_that_is_not_the_locks_fails(toy):
    commit(toy, {"results/table.csv": "seed,score\n1,0.6\n"}, "edited by hand")
    report = check(toy)
    assert where(report) == ["results/table.csv"]
    assert md5(TABLE) in report.violations[0].what and "report" in report.violations[0].what


def test_a_committed_file_no_output_names_fails(toy):
    commit(toy, {"results/notes.csv": "made by hand\n"}, "a file no stage makes")
    report = check(toy)
    assert [str(v) for v in report.violations] == [
        "results/notes.csv: named by no output of dvc.lock"]


def test_an_entry_for_a_stage_the_settings_do_not_make_fails(toy):
    stale = entry({"code": code_md5(CODE)}, {"results/fits/fit2": "f" * 32 + ".dir"})
    commit(toy, {"dvc.lock": lock(**{"fit@2": stale})}, "a lock from other settings")
    report = check(toy)
    assert where(report) == ["dvc.lock: fit@2"]
    assert "no such stage" in report.violations[0].what


def test_an_entry_whose_outputs_nothing_committed_read_fails(toy):
    # at these settings fit@2 is a stage, but the report reads fit 1 only
    unread = entry({"code": code_md5(CODE)}, {"results/fits/fit2": "f" * 32 + ".dir"})
    commit(toy, {"params.yaml": "seeds: [1, 2]\n", "dvc.lock": lock(**{"fit@2": unread})},
           "a fit nothing reads")
    report = check(toy)
    assert where(report) == ["dvc.lock: fit@2"]
    assert "describes no committed output" in report.violations[0].what


def test_a_reader_of_another_runs_output_fails(toy):
    commit(toy, {"dvc.lock": lock(fit_read="e" * 32 + ".dir")}, "report read an older fit")
    report = check(toy)
    assert where(report) == ["dvc.lock: report"]
    assert "results/fits/fit1" in report.violations[0].what
    assert "another run" in report.violations[0].what


def test_an_output_neither_committed_nor_cached_fails(toy):
    # a cache: false output that was never committed (not git-ignored either)
    extra = {"report": entry({"code/step.py": md5(CODE["code/step.py"]),
                              "results/fits/fit1": FIT_MD5},
                             {"results/table.csv": md5(TABLE), "results/lost.csv": md5("x")})}
    text = yaml.safe_load(lock())
    text["stages"].update(extra)
    commit(toy, {"dvc.lock": yaml.safe_dump(text, sort_keys=False)}, "an output gone")
    report = check(toy)
    assert where(report) == ["results/lost.csv"]
    assert "neither committed nor git-ignored" in report.violations[0].what


def test_code_that_no_commit_held_fails(toy):
    never = {**CODE, "code/step.py": "print('edited, never committed')\n"}
    commit(toy, {"dvc.lock": lock(code=never)}, "a lock of uncommitted code")
    report = check(toy)
    assert report.code.commit is None
    assert where(report) == ["dvc.lock", "dvc.lock: code", "dvc.lock: code/step.py"]
    assert "no commit has the code" in report.violations[0].what
    assert all("in no commit" in v.what for v in report.violations[1:])


def test_code_of_an_earlier_commit_is_found_and_named(toy):
    made_at = git(toy, "rev-parse", "HEAD")
    commit(toy, {"code/step.py": "print('step, version 2')\n"}, "newer code")
    commit(toy, {"README.md": "a toy\n"}, "docs only")
    report = check(toy)
    assert report.ok, report.violations
    assert report.code.commit == made_at
    assert report.code.differs_at_head == ["code", "code/step.py"]
    assert "HEAD's differs in code, code/step.py" in pv.format_report(report, toy)


def test_a_run_at_a_named_commit_is_checked_against_that_commits_pipeline(toy):
    """A lock made at an earlier commit stays valid when the pipeline changes after it: with
    ``pipeline_at_code_commit`` its entries are the stages of dvc.yaml at the commit whose
    code it records, not of the work tree's."""
    commit(toy, {"code/step.py": "print('step, version 2')\n",
                 "dvc.yaml": PIPELINE.replace("  report:", "  summary:")}, "a stage renamed")
    assert "dvc.lock: report" in where(check(toy))        # against today's pipeline
    layout = toy_layout(toy)
    named = pv.Layout(**{**layout.__dict__, "pipeline_at_code_commit": True})
    report = pv.check_provenance(toy, named)
    assert report.ok, report.violations


def test_code_of_two_commits_names_where_each_version_is(toy):
    first = git(toy, "rev-parse", "HEAD")
    newer = {**CODE, "code/step.py": "print('step, version 2')\n"}
    commit(toy, {"code/step.py": newer["code/step.py"]}, "newer code")
    mixed = yaml.safe_load(lock(code=newer))
    mixed["stages"]["fit@1"] = yaml.safe_load(lock())["stages"]["fit@1"]   # the old code's fit
    commit(toy, {"dvc.lock": yaml.safe_dump(mixed, sort_keys=False)}, "report rerun only")
    report = check(toy)
    assert report.code.commit is None
    (old_code,) = [v for v in report.violations if v.where == "dvc.lock: code"]
    assert f"as at {first[:7]}" in old_code.what and "fit@1" in old_code.what


def _run_at(repo: Path, record: dict, **layout) -> pv.Report:
    """The check of ``repo`` with each entry's commit taken from a run record."""
    base = toy_layout(repo, **layout)
    return pv.check_provenance(repo, pv.Layout(**{**base.__dict__, "run_record": record,
                                                  "pipeline_at_code_commit": True}))


def test_each_study_is_checked_against_the_commit_its_run_recorded(toy):
    """A lock merged from runs at two commits (the fit of the first, the report rerun at the
    second) has no one commit with every entry's code, and passes when each entry is checked
    against the commit its run recorded; an entry recorded at the other commit, whose code
    there is not its own, fails, naming the path, the entry and the commit."""
    first = git(toy, "rev-parse", "HEAD")
    newer = {**CODE, "code/step.py": "print('step, version 2')\n"}
    second = commit(toy, {"code/step.py": newer["code/step.py"]}, "newer code")
    mixed = yaml.safe_load(lock(code=newer))
    mixed["stages"]["fit@1"] = yaml.safe_load(lock())["stages"]["fit@1"]
    commit(toy, {"dvc.lock": yaml.safe_dump(mixed, sort_keys=False)}, "report rerun only")
    assert not check(toy).ok   # one commit for the whole lock: none has it
    report = _run_at(toy, {"revisions": {"fit@1": first, "report": second}})
    assert report.ok, report.violations
    assert report.made_at == {first: ["fit@1"], second: ["report"]}
    text = pv.format_report(report, toy)
    assert f"code of 1 entry: as at {second[:7]}" in text and f"as at {first[:7]}" in text
    report = _run_at(toy, {"revisions": {"fit@1": first, "report": first}})
    assert where(report) == ["dvc.lock: code/step.py"]
    assert "stage report" in report.violations[0].what
    assert f"their commit {first[:7]}" in report.violations[0].what


def test_an_entry_without_a_commit_the_history_holds_fails(toy):
    made_at = git(toy, "rev-parse", "HEAD")
    report = _run_at(toy, {"revisions": {"fit@1": made_at, "report": made_at + "+changes"}})
    assert where(report) == ["dvc.lock: report"]
    assert "a commit this repository does not hold" in report.violations[0].what
    report = _run_at(toy, {"revisions": {"fit@1": made_at}})
    assert where(report) == ["dvc.lock: report"]
    assert "names no commit" in report.violations[0].what
    # a record of one run (no revisions): every entry at its machine's revision
    assert _run_at(toy, {"machine": {"revision": made_at}}).ok
    assert pv.stage_commits({"machine": {"revision": "abc"}}, ["s", "t"]) == \
        {"s": "abc", "t": "abc"}
    assert pv.stage_commits({"machine": {"revision": "abc"}, "revisions": {"s": "def"}},
                            ["s", "t"]) == {"s": "def", "t": None}


def test_a_shallow_clone_without_the_locks_commit_says_so(toy, tmp_path):
    commit(toy, {"code/step.py": "print('step, version 2')\n"}, "newer code")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{toy}", str(clone))
    report = check(clone)
    assert report.code.commit is None
    assert "shallow" in report.violations[0].what and "--unshallow" in report.violations[0].what
    assert check(toy).ok   # the full history has it


def test_outputs_copied_elsewhere_and_folder_outputs(toy):
    # the lock's results/table.csv is committed as published/table.csv; a folder output's
    # files are committed and checked against its listing
    tables = {"a.csv": "1\n", "b/c.csv": "2\n"}
    text = yaml.safe_load(lock())
    text["stages"]["report"]["outs"].append(
        {"path": "results/tables", "hash": "md5", "md5": folder_md5(tables)})
    commit(toy, {"published/table.csv": TABLE, "dvc.lock": yaml.safe_dump(text),
                 **{f"published/tables/{p}": t for p, t in tables.items()}}, "published")
    copies = {"results/table.csv": "published/table.csv", "results/tables": "published/tables"}
    assert check(toy, copies=copies, roots=("published",)).ok
    commit(toy, {"published/tables/b/c.csv": "3\n"}, "one file of the folder edited")
    report = check(toy, copies=copies, roots=("published",))
    assert where(report) == ["published/tables"]


def test_the_module_hashes_as_dvc_does():
    files = {"z.py": "z\n", "a/b.py": "b\n"}
    assert pv.directory_md5({p: md5(t) for p, t in files.items()}) == folder_md5(files)
    assert pv.bytes_md5(b"x\n") == md5("x\n")


def test_a_missing_or_foreign_lock_is_named(tmp_path):
    with pytest.raises(ValueError, match="no such lock file"):
        pv.read_lock(tmp_path / "dvc.lock")
    (tmp_path / "dvc.lock").write_text("- a list\n")
    with pytest.raises(ValueError, match="not a dvc.lock"):
        pv.read_lock(tmp_path / "dvc.lock")
    (tmp_path / "dvc.lock").write_text(
        "stages:\n  s:\n    outs:\n    - path: x\n      md5: 0123\n")   # DVC 2: no `hash`
    with pytest.raises(ValueError, match=r"dvc.lock: stage 's', x: not hashed"):
        pv.read_lock(tmp_path / "dvc.lock")


def test_the_command_reports_and_fails_on_a_violation(toy, capsys):
    assert pv.main(["--repo", str(toy), "quick"]) == 0
    assert "OK" in capsys.readouterr().out
    commit(toy, {"results/notes.csv": "x\n"}, "a file no stage makes")
    assert pv.main(["--repo", str(toy), "quick"]) == 1
    assert "results/notes.csv: named by no output of dvc.lock" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        pv.main(["nightly"])


# ---- the committed results ---------------------------------------------------------------

needs_git = pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")


@needs_git
def test_the_quick_profile_is_what_its_lock_describes():
    report = pv.check_provenance(ROOT, pv.quick_layout(ROOT))
    assert report.ok, pv.format_report(report, ROOT)
    assert report.outputs_committed >= 30 and report.code.commit is not None


@needs_git
def test_the_paper_profile_is_what_its_lock_describes():
    """The paper-scale results are the runs' that made each study: every file is its lock's
    output, every entry describes one, and each entry's code is that of the commit its run
    recorded."""
    report = pv.check_provenance(ROOT, pv.paper_layout(ROOT))
    assert report.ok, pv.format_report(report, ROOT)
    assert report.outputs_committed >= 30
    assert sum(map(len, report.made_at.values())) == report.entries


def test_a_study_in_pieces_is_a_profile_of_its_own_checked_where_one_is_under_way(tmp_path,
                                                                                  capsys):
    """A paper-scale study rerun in pieces (results/paper/pieces) has its own lock, settings
    and commits: the paper profile leaves its files to it, the default check runs it only where
    it has a lock, and a checkout without one gets an error naming the missing settings."""
    with pytest.raises(ValueError, match=r"results/paper/pieces/params.yaml: no settings"):
        pv.pieces_layout(tmp_path)
    paper_roots = {pattern for pattern, _ in pv.PAPER_NOT_OUTPUTS}
    assert {f"{pv.PIECES_RESULTS}/*", f"{pv.PIECES_FIGURES}/*"} <= paper_roots
    assert {pattern for pattern, _ in pv.PIECES_NOT_OUTPUTS} == {
        f"{pv.PIECES_RESULTS}/{name}" for name in ("dvc.lock", "params.yaml",
                                                   "stage_seconds.json")}
    (tmp_path / "params.yaml").write_text("profile: quick\n")
    assert pv.main(["--repo", str(tmp_path)]) == 1  # no lock: quick and paper fail, no pieces
    assert "paper-pieces" not in capsys.readouterr().err


@needs_git
def test_the_study_in_pieces_is_what_its_lock_describes():
    """Each piece's score records are the runs' that made them (where a study is in pieces)."""
    if not (ROOT / pv.PIECES_RESULTS / "dvc.lock").is_file():
        pytest.skip("no study is being rerun in pieces")
    report = pv.check_provenance(ROOT, pv.pieces_layout(ROOT))
    assert report.ok, pv.format_report(report, ROOT)
    assert sum(map(len, report.made_at.values())) == report.entries


def test_a_reader_of_a_remade_output_is_stale_unless_it_read_that_very_output():
    """stale_readers: an entry kept from an earlier run that read a remade output under another
    hash or none, through a folder holding it, or through a file inside it is stale; one that
    read it with the hash the remade entry records, or that the same run made, is not."""
    def item(path, md5):
        return {"path": path, "hash": "md5", "md5": md5}

    fit = "results/fits/topics/collapsed_eps1.0_rep0"
    entries = pv.lock_entries({
        "infer": {"outs": [item(fit, "new.dir")]},
        "same": {"deps": [item(fit, "new.dir")]},
        "another_hash": {"deps": [item(fit, "old.dir")]},
        "folder": {"deps": [item("results/fits/topics", "all.dir")]},
        "inside": {"deps": [item(fit + "/topics.npy", "t")]},
        "unrelated": {"deps": [item("results/fits/topics/naive_eps1.0_rep0", "n.dir")]},
        "no_hash": {"deps": [{"path": fit}]},
        "made_with_it": {"deps": [item("results/fits/topics", "all.dir")]},
    }, Path("dvc.lock"))
    stale = pv.stale_readers(entries, {"infer"}, current={"infer", "made_with_it"})
    assert stale == [("another_hash", fit, "infer"), ("folder", "results/fits/topics", "infer"),
                     ("inside", fit + "/topics.npy", "infer"), ("no_hash", fit, "infer")]
    assert ("made_with_it", "results/fits/topics", "infer") in pv.stale_readers(
        entries, {"infer"})
    assert pv.stale_readers(entries, set()) == []
