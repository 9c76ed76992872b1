"""Check that the committed results are the ones their ``dvc.lock`` describes.

    python -m study.provenance            # every profile (a study in pieces where there is one)
    python -m study.provenance quick      # dvc.lock against results/, figures/ and data/
    python -m study.provenance paper      # results/paper/dvc.lock against results/paper/ and
                                          # figures/paper/
    python -m study.provenance paper-pieces   # a study rerun in pieces: results/paper/pieces/

A lock is the record of a run: the hash of every input and output of every stage. This check
reads a lock beside the committed files and reports where the two disagree:

1. **Outputs.** Every committed file under the profile's output folders is the copy of an
   output of the lock (a file output, or a file inside a directory output) with the hash the
   lock records (DVC 3's md5 of the bytes; for a directory, the md5 of DVC's sorted listing of
   its files). Files that are not pipeline outputs are listed in :data:`QUICK_NOT_OUTPUTS` and
   :data:`PAPER_NOT_OUTPUTS`, each with its reason.
2. **Entries.** Every entry of the lock is a stage of the pipeline (``dvc.yaml`` at the
   profile's settings; for the paper profile, ``dvc.yaml`` as committed at the commit of check
   3 with the settings the run recorded) and describes something committed: one of its outputs is committed, or
   a stage whose entry describes something committed read one of its outputs. Outputs kept
   only in DVC's cache (the fits, the private data, the executed notebooks; git-ignored) are
   accounted for this way, through the stages that read them; where a stage names such an
   output exactly, the hash it read must be the one the producing entry records. In the quick
   profile an output that is not committed must be git-ignored (DVC's cache holds it).
3. **Code.** Every dependency of the lock that no entry makes (the code: ``lpp/``, ``study/``,
   ``notebooks/``, ``data_prep/``, ``bench/``, and the shipped corpus) has the hash the lock
   records at a commit of the history. In the quick profile that is one commit for the whole
   lock, which is reported (HEAD when HEAD's code is the lock's, else the commit that made the
   code what the lock records): only the commits that changed those paths are visited, newest
   first, and the search stops at the first match. In the paper profile, whose studies are
   made by runs at different commits, each entry is checked against the commit its run
   recorded for it (``revisions`` in ``results/paper/stage_seconds.json``,
   :func:`stage_commits`), and only that one: a stage whose code there differs from its
   entry, or whose commit the history does not hold, fails. The hashes of a path at a commit
   are computed from git's objects (no checkout), with the commit's ``.dvcignore`` applied as
   DVC applies it; a shallow clone gets a clear failure when a lock's code is older than what
   it holds.

The paper profile's outputs are copied out of its own work tree (``profiles/run.py``), so its
lock names work-tree paths: :func:`paper_layout` maps them to their committed copies with the
list the runner copies by (:func:`study.stages.collected_paths`).

A paper-scale study too long for the machines that run it (a topic fit is 2 GB and up to an
hour, and a machine may keep nothing between working sessions) is rerun in pieces collected
into ``results/paper/pieces/`` (``profiles/run.py --results results/paper/pieces --figures
figures/paper/pieces``): each piece's finished fits' score records, with a lock, settings and
commits of its own, checked as a profile of its own (``paper-pieces``) until the study is
whole and takes its place in ``results/paper``.
"""
from __future__ import annotations

import argparse
import fnmatch
import io
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from study.stages import collected_paths

ROOT = Path(__file__).resolve().parents[1]

#: committed files of the quick profile's output folders that no stage makes, and why
QUICK_NOT_OUTPUTS = (
    ("*.gitignore", "DVC's list of the outputs of a folder that live in its cache"),
    ("data/raw/*", "the shipped corpus: an input of the pipeline, checked as code (3.)"),
    ("results/paper/*", "the paper profile's outputs, checked against results/paper/dvc.lock"),
    ("figures/paper/*", "the paper profile's figures, checked against results/paper/dvc.lock"),
)
#: the same for the paper profile
#: where a study rerun in pieces is collected (:func:`paper_layout`, profile ``paper-pieces``)
PIECES_RESULTS, PIECES_FIGURES = "results/paper/pieces", "figures/paper/pieces"


def _run_records(results: str) -> tuple[tuple[str, str], ...]:
    """The records ``profiles/run.py`` writes beside the outputs it collects into ``results``."""
    return (
        (f"{results}/dvc.lock", "the lock itself: the record this check reads"),
        (f"{results}/params.yaml", "the settings of the last profiles/run.py, a record"),
        (f"{results}/stage_seconds.json",
         "the wall seconds of each stage and the commit its entry was made at, recorded by "
         "profiles/run.py (times differ run to run); check 3 reads the commits"),
    )


PAPER_NOT_OUTPUTS = _run_records("results/paper") + (
    ("results/paper/claims.*",
     "the verdicts and their diagnoses, a pure function of the committed tables regenerated "
     "by the checkout's code (python -m study.claims --results results/paper); "
     "tests/study/test_claims.py checks they are what that code computes"),
    (f"{PIECES_RESULTS}/*", f"a study rerun in pieces, checked against {PIECES_RESULTS}/dvc.lock "
     "(profile paper-pieces)"),
    (f"{PIECES_FIGURES}/*", f"a study rerun in pieces, checked against {PIECES_RESULTS}/dvc.lock "
     "(profile paper-pieces)"),
)
#: the same for a study rerun in pieces
PIECES_NOT_OUTPUTS = _run_records(PIECES_RESULTS)


@dataclass(frozen=True)
class Layout:
    """Where a profile's lock and outputs are committed.

    Attributes
    ----------
    name : str
        The profile's name, for the report.
    lock : str
        The lock, relative to the repository root.
    roots : tuple of str
        The folders whose every committed file must be an output of the lock.
    not_outputs : tuple of (str, str)
        ``(pattern, reason)``: committed files under ``roots`` that no stage makes
        (``fnmatch`` patterns on repository paths).
    settings : dict
        The settings (a params file's content) the pipeline is rendered with to list its
        stages.
    copies : dict or None
        Lock path -> committed path of the outputs that are copied out of another work tree;
        None: the outputs are committed where the lock names them.
    pipeline_at_code_commit : bool
        Whether the stages are those of ``dvc.yaml`` as committed at the commit whose code the
        lock records (a run made at a commit named for good, whatever changes after it),
        rather than of the work tree's ``dvc.yaml``.
    run_record : dict or None
        The runs' record of the commit each entry was made at (``stage_seconds.json``, read by
        :func:`stage_commits`): each entry is checked against its own commit. None: the lock
        is one run's, and one commit must hold the code of every entry.
    """

    name: str
    lock: str
    roots: tuple[str, ...]
    not_outputs: tuple[tuple[str, str], ...]
    settings: dict
    copies: dict[str, str] | None = None
    pipeline_at_code_commit: bool = False
    run_record: dict | None = None

    def committed_path(self, out: str) -> str | None:
        """Where the output ``out`` of the lock would be committed (None: nowhere)."""
        return out if self.copies is None else self.copies.get(out)

    def reason_not_output(self, path: str) -> str | None:
        """Why the committed file ``path`` is no pipeline output (None: it should be one)."""
        for pattern, reason in self.not_outputs:
            if fnmatch.fnmatch(path, pattern):
                return reason
        return None


@dataclass(frozen=True)
class Violation:
    """One disagreement between a lock and the committed files: ``where`` (a file, a stage)
    and ``what`` is wrong."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass
class CodeMatch:
    """The outcome of the code search: ``commit`` whose files have every hash the lock
    records for its code (None: no commit does), ``commits_visited``, when none matched
    ``closest`` (the commit that matched most dependencies), and the paths whose recorded
    hashes HEAD's files do not have (``differs_at_head``)."""

    commit: str | None
    commits_visited: int
    closest: str | None = None
    differs_at_head: list[str] = field(default_factory=list)


@dataclass
class Report:
    """What :func:`check_provenance` found for one layout: with a run record
    (:attr:`Layout.run_record`), ``made_at`` lists the entries of each recorded commit."""

    layout: Layout
    files_checked: int
    outputs_committed: int
    entries: int
    code: CodeMatch
    violations: list[Violation] = field(default_factory=list)
    made_at: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations


# ---- git ---------------------------------------------------------------------------------

def _git(repo: Path, *args: str, stdin: bytes | None = None, ok_codes=(0,)) -> bytes:
    done = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True)
    if done.returncode not in ok_codes:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: "
                           f"{done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def tracked_files(repo: Path) -> set[str]:
    """The files git tracks in ``repo`` (its index), as repository paths."""
    return {p for p in _git(repo, "ls-files", "-z").decode().split("\0") if p}


def git_ignored(repo: Path, paths) -> set[str]:
    """Those of ``paths`` that git ignores."""
    paths = list(paths)
    if not paths:
        return set()
    out = _git(repo, "check-ignore", "--stdin", "-z", stdin="\0".join(paths).encode() + b"\0",
               ok_codes=(0, 1))
    return {p for p in out.decode().split("\0") if p}


def is_shallow(repo: Path) -> bool:
    return _git(repo, "rev-parse", "--is-shallow-repository").decode().strip() == "true"


def commit_title(repo: Path, commit: str, width: int = 60) -> str:
    """``<short hash> <date> "<subject>"`` of ``commit``, the subject cut to ``width``."""
    short, date, subject = _git(repo, "log", "-1", "--format=%h%n%cs%n%s",
                                commit).decode().strip().split("\n", 2)
    if len(subject) > width:
        subject = subject[:width - 3] + "..."
    return f'{short} {date} "{subject}"'


class GitObjects:
    """Objects of a git repository, read by two long-running ``git cat-file`` processes (one
    call per object would cost a process each). Use as a context manager."""

    def __init__(self, repo: Path):
        self.repo = repo
        self._check = subprocess.Popen(["git", "cat-file", "--batch-check"], cwd=repo,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._read = subprocess.Popen(["git", "cat-file", "--batch"], cwd=repo,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def __enter__(self) -> GitObjects:
        return self

    def __exit__(self, *exc) -> None:
        for process in (self._check, self._read):
            process.stdin.close()
            process.wait()
            process.stdout.close()

    def lookup(self, name: str) -> tuple[str, str] | None:
        """``(object id, type)`` of ``name`` (``<commit>:<path>``, an id), None if absent."""
        self._check.stdin.write(name.encode() + b"\n")
        self._check.stdin.flush()
        fields = self._check.stdout.readline().decode().split()
        if len(fields) != 3:   # "<name> missing" (or ambiguous)
            return None
        return fields[0], fields[1]

    def blob(self, oid: str) -> bytes:
        """The content of the blob ``oid``."""
        self._read.stdin.write(oid.encode() + b"\n")
        self._read.stdin.flush()
        header = self._read.stdout.readline().decode().split()
        if len(header) != 3 or header[1] != "blob":
            raise RuntimeError(f"{self.repo}: {oid} is not a blob of the repository")
        data = self._read.stdout.read(int(header[2]))
        self._read.stdout.read(1)   # the newline after the content
        return data

    def tree_files(self, oid: str) -> list[tuple[str, str]]:
        """``(path inside the tree, blob id)`` of every file under the tree ``oid``."""
        files = []
        for line in _git(self.repo, "ls-tree", "-r", "-z", oid).split(b"\0"):
            if not line:
                continue
            meta, path = line.split(b"\t", 1)
            _, kind, blob = meta.decode().split()
            if kind == "blob":   # a submodule's commit holds no files here
                files.append((path.decode(), blob))
        return files


# ---- DVC's hashes ------------------------------------------------------------------------

def bytes_md5(data: bytes) -> str:
    """DVC 3's hash of a file with content ``data`` (``hash: md5``)."""
    from dvc_data.hashfile.hash import fobj_md5

    return fobj_md5(io.BytesIO(data))


def file_md5(path: Path) -> str:
    """DVC 3's hash of the file ``path``."""
    from dvc_data.hashfile.hash import fobj_md5

    with open(path, "rb") as fh:
        return fobj_md5(fh)


def directory_md5(listing: dict[str, str]) -> str:
    """DVC's hash of a directory whose files (paths inside it) have the md5s ``listing``:
    the md5 of its sorted JSON listing, with ``.dir`` appended."""
    from dvc_data.hashfile.tree import Tree

    tree = Tree.from_list([{"relpath": relpath, "md5": md5} for relpath, md5 in listing.items()])
    tree.digest()
    return tree.hash_info.value


def dvcignore_patterns(text: str):
    """The patterns of a root ``.dvcignore`` file with content ``text``, read by DVC's own
    matcher (the repository root is ``/`` to it): ``patterns.matches("/" + folder, name)``
    says whether DVC leaves the file out of a hash."""
    from dvc.ignore import DvcIgnorePatterns

    lines = [line for line in map(str.strip, text.splitlines())
             if line and not line.startswith("#")]   # as DvcIgnorePatterns.from_file reads
    return DvcIgnorePatterns(lines, "/", "/")


def _dvc_ignores(patterns, path: str) -> bool:
    folder, _, name = f"/{path}".rpartition("/")
    return patterns.matches(folder or "/", name)


class CodeHashes:
    """DVC's hash of any path at any commit, from git's objects, with the commit's
    ``.dvcignore`` applied (results cached by object id: a file or folder that did not change
    between two commits is hashed once)."""

    def __init__(self, objects: GitObjects):
        self.objects = objects
        self._blobs: dict[str, str] = {}
        self._trees: dict[tuple[str, str | None], str] = {}
        self._ignores: dict[str | None, object] = {}

    def at(self, commit: str, path: str) -> str | None:
        """DVC's md5 of ``path`` at ``commit`` (``.dir`` for a folder), None if absent."""
        found = self.objects.lookup(f"{commit}:{path}")
        if found is None:
            return None
        oid, kind = found
        if kind == "blob":
            return self._blob_md5(oid)
        if kind != "tree":
            return None
        ignore = self.objects.lookup(f"{commit}:.dvcignore")
        ignore_oid = ignore[0] if ignore else None
        key = (oid, ignore_oid)
        if key not in self._trees:
            ignored = self._ignore_patterns(ignore_oid)
            listing = {relpath: self._blob_md5(blob)
                       for relpath, blob in self.objects.tree_files(oid)
                       if ignored is None or not _dvc_ignores(ignored, f"{path}/{relpath}")}
            self._trees[key] = directory_md5(listing)
        return self._trees[key]

    def _blob_md5(self, oid: str) -> str:
        if oid not in self._blobs:
            self._blobs[oid] = bytes_md5(self.objects.blob(oid))
        return self._blobs[oid]

    def _ignore_patterns(self, oid: str | None):
        if oid not in self._ignores:
            self._ignores[oid] = None if oid is None else \
                dvcignore_patterns(self.objects.blob(oid).decode())
        return self._ignores[oid]


# ---- the lock ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Recorded:
    """A path of a lock entry with its recorded hash (None: the lock gives none)."""

    stage: str
    path: str
    md5: str | None


def read_lock(path: Path) -> dict[str, dict]:
    """The stages of the lock file ``path``: ``{stage: {"deps": [...], "outs": [...]}}``
    with :class:`Recorded` items. ValueError naming the file when it is not a DVC 3 lock."""
    if not path.is_file():
        raise ValueError(f"{path}: no such lock file")
    try:
        lock = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not YAML ({error})") from None
    stages = lock.get("stages") if isinstance(lock, dict) else None
    if not isinstance(stages, dict):
        raise ValueError(f"{path}: no `stages` mapping: not a dvc.lock")
    return lock_entries(stages, path)


def lock_entries(stages: dict, lock: Path) -> dict[str, dict]:
    """A lock's ``stages`` mapping as :func:`read_lock` gives it; ``lock`` names the file in
    errors."""
    return {stage: {kind: [_recorded(lock, stage, item) for item in record.get(kind) or []]
                    for kind in ("deps", "outs")}
            for stage, record in stages.items()}


def _recorded(lock: Path, stage: str, item) -> Recorded:
    if not isinstance(item, dict) or "path" not in item:
        raise ValueError(f"{lock}: stage {stage!r} has an item without a path: {item!r}")
    if item.get("hash", "md5") != "md5" or ("md5" in item and "hash" not in item):
        raise ValueError(f"{lock}: stage {stage!r}, {item['path']}: not hashed with DVC 3's "
                         "`hash: md5` (a lock of DVC 2 or another algorithm)")
    return Recorded(stage, item["path"], item.get("md5"))


def pipeline_stages(repo: Path, settings: dict, profile: str,
                    commit: str | None = None) -> set[str]:
    """The stage names of ``repo``'s ``dvc.yaml`` (as committed at ``commit``, when given)
    rendered by DVC with ``settings`` (the ``profile``'s) as its ``params.yaml``, matrix and
    foreach stages expanded, in a scratch copy (the repository's own lock and settings are
    left alone)."""
    from dvc.repo import Repo

    dvc_yaml = repo / "dvc.yaml"
    if commit is not None:
        dvc_yaml = f"{commit[:12]}:dvc.yaml"
        shown = subprocess.run(["git", "show", dvc_yaml], cwd=repo, capture_output=True,
                               text=True)
        if shown.returncode != 0:
            raise ValueError(f"{dvc_yaml}: no pipeline file at that commit")
        text = shown.stdout
    elif not dvc_yaml.is_file():
        raise ValueError(f"{dvc_yaml}: no pipeline file")
    else:
        text = dvc_yaml.read_text()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / ".dvc").mkdir()
        (work / ".dvc" / "config").write_text("[core]\n    no_scm = true\n")
        (work / "dvc.yaml").write_text(text)
        (work / "params.yaml").write_text(yaml.safe_dump(settings or {}, sort_keys=False))
        try:
            with Repo(str(work)) as dvc_repo:
                return {s.addressing.split(":")[-1] for s in dvc_repo.index.stages}
        except Exception as error:   # DVC's own error types vary with the fault
            raise ValueError(f"{dvc_yaml} cannot be rendered with the {profile} profile's "
                             f"settings: {error}") from None


def _related(dep: str, out: str) -> bool:
    """Whether reading ``dep`` reads (part of) the output ``out``."""
    return dep == out or out.startswith(dep + "/") or dep.startswith(out + "/")


# ---- the checks --------------------------------------------------------------------------

def check_outputs(repo: Path, layout: Layout, entries, tracked: set[str]):
    """Checks 1 and the committed half of 2: ``(violations, committed outputs, files
    checked)``, the committed outputs as ``{lock path: committed path}``."""
    violations = []
    committed = {}
    for stage, entry in entries.items():
        for out in entry["outs"]:
            where = layout.committed_path(out.path)
            if where is None:
                continue
            files = _committed_under(where, tracked)
            if not files:
                continue
            committed[out.path] = where
            found = file_md5(repo / where) if files == [where] else directory_md5(
                {f[len(where) + 1:]: file_md5(repo / f) for f in files})
            if found != out.md5:
                violations.append(Violation(where, f"md5 {found}, but stage {stage} of "
                                                   f"{layout.lock} records {out.md5}"))
    under_roots = sorted(f for f in tracked if any(f.startswith(r + "/") for r in layout.roots))
    named = set(committed.values())
    for path in under_roots:
        if layout.reason_not_output(path) is None and not any(
                path == c or path.startswith(c + "/") for c in named):
            violations.append(Violation(path, f"named by no output of {layout.lock}"))
    return violations, committed, len(under_roots)


def _committed_under(path: str, tracked: set[str]) -> list[str]:
    """``[path]`` if git tracks that file, else the tracked files inside the folder ``path``."""
    if path in tracked:
        return [path]
    return sorted(f for f in tracked if f.startswith(path + "/"))


def check_entries(repo: Path, layout: Layout, entries, committed: dict[str, str],
                  code_commit: str | dict | None = None):
    """Check 2: every entry is a stage of the pipeline and describes something committed
    (:func:`live_stages`); in the quick profile, every output not committed is git-ignored.
    The pipeline is ``dvc.yaml`` at ``code_commit`` where the layout asks for it
    (:attr:`Layout.pipeline_at_code_commit`) and a commit matched, else the work tree's;
    ``code_commit`` may name each entry's own commit (``{stage: commit}``), and an entry whose
    commit the history does not hold is left to check 3."""
    commit_of = code_commit if isinstance(code_commit, dict) else \
        dict.fromkeys(entries, code_commit)
    at_of = {stage: commit_of.get(stage) if layout.pipeline_at_code_commit else None
             for stage in entries}
    held = {c for c in set(at_of.values()) if c is None or _is_commit(repo, c)}
    violations, stages_at, unknown = [], {}, set()
    for stage, at in at_of.items():
        if at not in held:
            continue
        if at not in stages_at:
            stages_at[at] = pipeline_stages(repo, layout.settings, layout.name, at)
        if stage not in stages_at[at]:
            unknown.add(stage)
            where = f"dvc.yaml at {at[:7]}" if at else "dvc.yaml"
            violations.append(Violation(f"{layout.lock}: {stage}", "no such stage in the "
                                        f"pipeline ({where} at the {layout.name} profile's "
                                        "settings)"))
    current = {stage: entry for stage, entry in entries.items() if stage not in unknown}
    live, mismatches = live_stages(current, committed)
    violations += [Violation(f"{layout.lock}: {reader}", what) for reader, what in mismatches]
    violations += [Violation(f"{layout.lock}: {stage}", "describes no committed output, and "
                             "no stage whose entry does read its outputs")
                   for stage in current if stage not in live]
    if layout.copies is None:
        uncommitted = [out.path for entry in entries.values() for out in entry["outs"]
                       if out.path not in committed]
        violations += [Violation(path, f"an output of {layout.lock} that is neither committed "
                                       "nor git-ignored (kept in DVC's cache)")
                       for path in sorted(set(uncommitted) - git_ignored(repo, uncommitted))]
    return violations


def live_stages(entries, committed: dict[str, str]) -> tuple[set[str], list[tuple[str, str]]]:
    """The entries that describe something committed: those with a committed output, and
    those whose outputs such an entry read (a dependency naming the output, a folder holding
    it, or a file inside it), transitively. Also ``(reader, what)`` for every dependency that
    names an output exactly but records another hash than the output's entry: the reader
    read another run's output."""
    producers = [out for entry in entries.values() for out in entry["outs"]]
    live = {stage for stage, entry in entries.items()
            if any(out.path in committed for out in entry["outs"])}
    mismatches = []
    pending = sorted(live)
    while pending:
        reader = pending.pop()
        for dep in entries[reader]["deps"]:
            for out in producers:
                if not _related(dep.path, out.path):
                    continue
                if dep.path == out.path and dep.md5 != out.md5:
                    mismatches.append((reader, f"read {dep.path} with md5 {dep.md5}, but stage "
                                               f"{out.stage} records {out.md5} (another run)"))
                if out.stage not in live:
                    live.add(out.stage)
                    pending.append(out.stage)
    return live, mismatches


def stale_readers(entries, remade, current=None) -> list[tuple[str, str, str]]:
    """``(reader, dependency, maker)`` for each entry not in ``current`` (the stages a run made,
    consistent with each other; ``remade`` by default) that read an output of an entry in
    ``remade`` (those of them that replaced an output) other than as that entry records it:
    the output itself with another hash or none, or a folder holding it or a file inside it,
    whose hash a lock cannot compare with the output's. The reader's entry describes what it
    read before the run replaced it, so it must be remade too. :func:`live_stages` catches the
    first kind in any lock; the folder kind is seen only where one knows which entries a run
    replaced (a merge of pieces, a collect)."""
    current = set(remade if current is None else current)
    found = []
    for reader, entry in entries.items():
        if reader in current:
            continue
        for dep in entry["deps"]:
            for maker in sorted(remade):
                for out in entries.get(maker, {}).get("outs", ()):
                    if _related(dep.path, out.path) and not (
                            dep.path == out.path and dep.md5 is not None
                            and dep.md5 == out.md5):
                        found.append((reader, dep.path, maker))
    return found


def source_dependencies(entries) -> dict[tuple[str, str | None], list[str]]:
    """``{(path, recorded md5): [stages]}`` of the dependencies no entry of the lock makes."""
    outs = [out.path for entry in entries.values() for out in entry["outs"]]
    sources = defaultdict(list)
    for stage, entry in entries.items():
        for dep in entry["deps"]:
            if not any(_related(dep.path, out) for out in outs):
                sources[(dep.path, dep.md5)].append(stage)
    return dict(sources)


def unmade_outputs(repo: Path, sources):
    """Those of ``sources`` (:func:`source_dependencies`) that git ignores: outputs of a
    stage that has no entry in the lock, not code."""
    ignored = git_ignored(repo, {path for path, _ in sources})
    return {pair: stages for pair, stages in sources.items() if pair[0] in ignored}


def find_code_commit(repo: Path, wanted: dict[tuple[str, str | None], list[str]]):
    """Check 3: the newest commit (HEAD first, then the commits that changed the paths of
    ``wanted``, newest first) at which every ``(path, md5)`` of ``wanted`` holds.

    Returns
    -------
    match : CodeMatch
    newest : dict
        ``{(path, md5): commit}``, the newest visited commit where each pair holds (all
        pairs met on the way; complete when no commit matched).
    hashes_at_closest : dict
        ``{path: md5 or None}`` at ``match.closest`` (empty when a commit matched).
    """
    paths = sorted({path for path, _ in wanted})
    head = _git(repo, "rev-parse", "HEAD").decode().strip()
    touching = _git(repo, "log", "--full-history", "--format=%H", "HEAD", "--",
                    *paths).decode().split() if paths else []
    newest, best, best_score, best_hashes = {}, None, -1, {}
    visited, at_head = 0, []
    with GitObjects(repo) as objects:
        hashes = CodeHashes(objects)
        for commit in dict.fromkeys([head, *touching]):
            visited += 1
            found = {path: hashes.at(commit, path) for path in paths}
            holding = [pair for pair in wanted if found[pair[0]] == pair[1]]
            if commit == head:
                at_head = sorted({path for path, md5 in wanted if found[path] != md5})
            for pair in holding:
                newest.setdefault(pair, commit)
            if len(holding) == len(wanted):
                return CodeMatch(commit, visited, differs_at_head=at_head), newest, {}
            score = sum(len(wanted[pair]) for pair in holding)
            if score > best_score:
                best, best_score, best_hashes = commit, score, found
    return CodeMatch(None, visited, best, at_head), newest, best_hashes


def code_violations(repo: Path, layout: Layout, wanted, match: CodeMatch, newest,
                    at_closest) -> list[Violation]:
    """What :func:`find_code_commit` found wrong, one violation per recorded version."""
    if match.commit is not None:
        return []
    shallow = " (this clone's history is shallow: `git fetch --unshallow` and check again)" \
        if is_shallow(repo) else ""
    closest = commit_title(repo, match.closest) if match.closest else "none"
    violations = [Violation(layout.lock, f"no commit has the code every entry records "
                            f"({match.commits_visited} commits visited){shallow}; the closest "
                            f"is {closest}")]
    for (path, md5), stages in sorted(wanted.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        if at_closest.get(path) == md5:
            continue
        there = newest.get((path, md5))
        origin = f"as at {commit_title(repo, there)}" if there else \
            ("in no commit" + (" of this shallow history" if shallow else ""))
        violations.append(Violation(
            f"{layout.lock}: {path}", f"md5 {md5} ({origin}) for {_stage_list(stages)}; "
            f"the closest commit has {at_closest.get(path) or 'no such path'}"))
    return violations


def first_of(items, shown: int = 3, separator: str = ", ") -> str:
    """The first ``shown`` of ``items`` and how many more, for an error message."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return separator.join(str(item) for item in items[:shown]) + more


def _stage_list(stages: list[str], shown: int = 3) -> str:
    return ("stage " if len(stages) == 1 else "stages ") + first_of(stages, shown)


def stage_commits(record: dict | None, stages) -> dict[str, str | None]:
    """The commit each of ``stages`` (a lock's entries) was made at, by the runs' record
    (``stage_seconds.json`` of ``profiles/run.py``): its ``revisions`` (``{stage: commit}``);
    a record without them is one run's, every stage made at its machine's ``revision``. None
    for a stage the record gives no commit."""
    record = record or {}
    revisions = record.get("revisions")
    if revisions is None:
        one = (record.get("machine") or {}).get("revision")
        return dict.fromkeys(stages, one)
    return {stage: revisions.get(stage) for stage in stages}


def _is_commit(repo: Path, commit: str) -> bool:
    done = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=repo,
                          capture_output=True)
    return done.returncode == 0


def check_stage_code(repo: Path, layout: Layout, wanted, commits: dict[str, str | None]):
    """Check 3 against each entry's own commit: ``(made_at, violations)``, ``made_at`` the
    entries of each recorded commit. ``wanted`` is :func:`source_dependencies` (the code each
    entry read), ``commits`` :func:`stage_commits`. An entry without a commit, with a commit
    the history does not hold (a revision with ``+changes``: a run of uncommitted code), or
    whose code at its commit is not what it records, is a violation."""
    made_at, violations = defaultdict(list), []
    for stage, commit in commits.items():
        made_at[commit].append(stage)
    lock = layout.lock
    for stage in made_at.pop(None, []):
        violations.append(Violation(f"{lock}: {stage}", "the run record names no commit for "
                                    "this entry (revisions in stage_seconds.json)"))
    shallow = " (this clone's history is shallow: `git fetch --unshallow` and check again)" \
        if is_shallow(repo) else ""
    for commit in [c for c in made_at if not _is_commit(repo, c)]:
        for stage in made_at.pop(commit):
            violations.append(Violation(f"{lock}: {stage}", f"made at {commit}, a commit this "
                                        f"repository does not hold{shallow}"))
    with GitObjects(repo) as objects:
        hashes = CodeHashes(objects)
        for commit, stages in made_at.items():
            mine = set(stages)
            for (path, md5), readers in sorted(wanted.items(),
                                               key=lambda kv: (kv[0][0], str(kv[0][1]))):
                readers = [r for r in readers if r in mine]
                found = hashes.at(commit, path) if readers else md5
                if found != md5:
                    violations.append(Violation(
                        f"{lock}: {path}", f"md5 {md5} for {_stage_list(readers)}, but their "
                        f"commit {commit_title(repo, commit)} has {found or 'no such path'}"))
    return dict(made_at), violations


def check_provenance(repo: Path, layout: Layout) -> Report:
    """Checks 1-3 of the module's docstring.

    Parameters
    ----------
    repo : Path
        The root of a git work tree holding the pipeline (``dvc.yaml``) and the lock.
    layout : Layout
        Which lock, which committed folders, which settings (:func:`quick_layout`,
        :func:`paper_layout`).

    Returns
    -------
    Report
        The counts, the commit whose code the lock records, and every violation.

    Raises
    ------
    ValueError
        When the lock or the pipeline cannot be read (the message names the file).
    """
    repo = Path(repo)
    entries = read_lock(repo / layout.lock)
    tracked = tracked_files(repo)
    violations, committed, files_checked = check_outputs(repo, layout, entries, tracked)
    wanted = source_dependencies(entries)
    unmade = unmade_outputs(repo, wanted)
    wanted = {pair: stages for pair, stages in wanted.items() if pair not in unmade}
    made_at = {}
    if layout.run_record is None:
        match, newest, at_closest = find_code_commit(repo, wanted)
        violations += check_entries(repo, layout, entries, committed, match.commit)
    else:
        commits = stage_commits(layout.run_record, entries)
        made_at, code_problems = check_stage_code(repo, layout, wanted, commits)
        violations += check_entries(repo, layout, entries, committed, commits)
        only = set(made_at) if len(made_at) == 1 and not code_problems else {None}
        match = CodeMatch(next(iter(only)), len(made_at))
    violations += [Violation(f"{layout.lock}: {path}", f"read by {_stage_list(stages)}, but no "
                             "entry makes it (a git-ignored pipeline output, not code)")
                   for (path, _), stages in sorted(unmade.items())]
    if layout.run_record is None:
        violations += code_violations(repo, layout, wanted, match, newest, at_closest)
    else:
        violations += code_problems
    return Report(layout, files_checked, len(committed), len(entries), match, violations,
                  made_at)


# ---- the two profiles --------------------------------------------------------------------

def quick_layout(repo: Path = ROOT) -> Layout:
    """The quick profile: ``dvc.lock`` and ``params.yaml`` at the root, outputs in place."""
    params = Path(repo) / "params.yaml"
    if not params.is_file():
        raise ValueError(f"{params}: no settings file")
    return Layout("quick", "dvc.lock", ("results", "figures", "data"), QUICK_NOT_OUTPUTS,
                  yaml.safe_load(params.read_text()) or {})


def paper_layout(repo: Path = ROOT, *, results: str = "results/paper",
                 figures: str = "figures/paper", name: str = "paper",
                 not_outputs=PAPER_NOT_OUTPUTS) -> Layout:
    """The paper profile: ``results/paper/dvc.lock``, its outputs copied to ``results/paper``
    and ``figures/paper`` as ``profiles/run.py`` copies them, each entry checked against the
    commit its run recorded for it (``results/paper/stage_seconds.json``) and against the
    stages of ``dvc.yaml`` at that commit, with the settings the run recorded
    (``results/paper/params.yaml``): the check holds whatever the pipeline or the profiles
    become after the runs, and each study is its own run's. ``results`` and ``figures`` name
    other folders the runner collected into (:func:`pieces_layout`)."""
    repo = Path(repo)
    recorded = repo / results / "params.yaml"
    if not recorded.is_file():
        raise ValueError(f"{recorded}: no settings of a paper-scale run")
    record = repo / results / "stage_seconds.json"
    if not record.is_file():
        raise ValueError(f"{record}: no record of the commits the paper-scale runs were made at")
    settings = yaml.safe_load(recorded.read_text()) or {}
    try:
        tables, figure_paths = collected_paths(settings)
    except ValueError as error:
        raise ValueError(f"{recorded}: {error}") from None
    copies = {source: f"{results}/{target}" for source, target in tables.items()}
    copies.update({source: f"{figures}/{Path(source).name}" for source in figure_paths})
    return Layout(name, f"{results}/dvc.lock", (results, figures), not_outputs, settings,
                  copies, pipeline_at_code_commit=True,
                  run_record=json.loads(record.read_text()))


def pieces_layout(repo: Path = ROOT) -> Layout:
    """A paper-scale study rerun in pieces (:data:`PIECES_RESULTS`): checked as the paper
    profile is, against its own lock, settings and commits."""
    return paper_layout(repo, results=PIECES_RESULTS, figures=PIECES_FIGURES,
                        name="paper-pieces", not_outputs=PIECES_NOT_OUTPUTS)


LAYOUTS = {"quick": quick_layout, "paper": paper_layout, "paper-pieces": pieces_layout}


def format_report(report: Report, repo: Path) -> str:
    """The report as text: a summary line per check, then one line per violation."""
    layout = report.layout
    lines = [f"{layout.name} profile: {layout.lock}, {report.entries} entries; "
             f"{report.files_checked} committed files under {', '.join(layout.roots)}, "
             f"{report.outputs_committed} of them the lock's outputs"]
    if report.made_at:
        lines += [f"  code of {len(stages)} {'entry' if len(stages) == 1 else 'entries'}: as at "
                  f"{commit_title(repo, commit)}, the commit their run recorded"
                  for commit, stages in sorted(report.made_at.items(),
                                               key=lambda kv: -len(kv[1]))]
    elif report.code.commit is not None:
        differs = report.code.differs_at_head
        where = f"; HEAD's differs in {', '.join(differs)}" if differs else " (HEAD's too)"
        lines.append(f"  code: as at {commit_title(repo, report.code.commit)}{where}")
    if report.ok:
        lines.append("  OK: every committed output is the lock's, every entry describes one")
    else:
        lines.append(f"  {len(report.violations)} violations:")
        lines += [f"  - {v}" for v in report.violations]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m study.provenance",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("profiles", nargs="*", metavar="PROFILE",
                        help=f"the profiles to check: {', '.join(LAYOUTS)} (default: all)")
    parser.add_argument("--repo", type=Path, default=ROOT, help="the repository's root")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.profiles) - set(LAYOUTS))
    if unknown:
        parser.error(f"no profile {', '.join(unknown)}: choose from {', '.join(LAYOUTS)}")
    failed = False
    # by default every profile, a study in pieces where one is under way
    chosen = args.profiles or [name for name in LAYOUTS if name != "paper-pieces"
                               or (args.repo / PIECES_RESULTS / "dvc.lock").is_file()]
    for name in chosen:
        try:
            report = check_provenance(args.repo, LAYOUTS[name](args.repo))
        except (ValueError, RuntimeError) as error:
            print(f"{name} profile: {error}", file=sys.stderr)
            failed = True
            continue
        print(format_report(report, args.repo))
        failed |= not report.ok
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
