"""Run the case studies under another profile, beside the quick results, and collect them.

    python profiles/run.py                     # paper profile with the cuts of paper_cuts.yaml
    python profiles/run.py --no-cuts           # the paper's full design (days of CPU)
    python profiles/run.py --collect-only      # copy what an earlier run left in the work tree
    python profiles/run.py --single-item --stages report_topics   # score its fits again
    python profiles/run.py --diagnose          # then the convergence diagnosis of its fits
    python profiles/run.py --synthetic         # the synthetic figures, tables, central model
    python profiles/run.py --all --jobs 2      # every stage, claims included, from one commit
    python profiles/run.py --continue-chains   # longer chains: the finished fits' chains run on
    python profiles/run.py --jobs 4            # 4 stages at a time, the CPUs shared out
    python profiles/run.py --cluster tcp://HOST:8786   # the stages' commands on a Dask cluster
    python profiles/run.py --results results/paper/pieces --figures figures/paper/pieces \
        --stages score_private_topics@collapsed-1.0-0   # a study too long for one machine, in
                                                         # pieces (docs/paper_scale.md)
    python profiles/run.py --results results/paper/pieces --figures figures/paper/pieces \
        --restore-scores --single-item --stages prepare_topics report_topics   # the report
    python profiles/run.py --results results/paper/pieces --figures figures/paper/pieces \
        --merge-into results/paper figures/paper       # the finished pieces into the results

DVC keeps one ``dvc.lock`` per pipeline, so a second profile cannot share the checkout of the
quick one without overwriting its lock. This script runs the profile in a separate git work
tree (default ``../lpp-paper``, created at ``HEAD`` when missing) with ``params.yaml`` =
``profiles/paper.yaml`` updated by ``profiles/paper_cuts.yaml``, reproduces the case-study
stages one by one (their progress streams to the terminal) and copies back what is
committed: the score tables and figures, the settings that ran, the wall time of each stage and
the work tree's ``dvc.lock`` (the settings and hashes of every input and output), into
``--results`` and ``--figures`` (default ``results/paper`` and ``figures/paper``). Outputs of
stages that are not up to date there are left out (:func:`stale_outputs`), and the lock is
merged stage by stage (:func:`merged_lock`), so a run that remade part of the study leaves the
other tables' provenance as it was. Re-running resumes: DVC skips the stages whose inputs did
not change. With ``--continue-chains``, the inference stages that DVC would rerun on the data
their fits were made from (a longer ``n_iter`` or burn-in in the profile, newer code) run their
finished fits' chains on instead of starting them over (:func:`set_aside_fits`).

With ``--jobs N`` (N > 1) the stages whose inputs are ready run N at a time, each with the
machine's CPUs divided by N as its threads (``--threads-per-job`` to choose), and with
``--cluster ADDRESS`` as tasks of that Dask scheduler's workers (which must share the work
tree's file system; ``--jobs`` then does not apply): :mod:`jobs` (``profiles/jobs.py``) reads
the stage graph from DVC and records each stage in ``dvc.lock`` as ``dvc repro`` does. Each
stage's output goes to its log under the work tree's ``.dvc/tmp/jobs/`` (the tail is printed
when it fails), and each stage that ran gets its own wall seconds. A failed stage stops the
stages that need it, not the others (exit status 1, naming both); Ctrl-C interrupts the
running stages as it would under ``dvc repro`` (their fits write checkpoints), and a rerun
continues.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# a folder of scripts, not a package, run as ``python profiles/run.py`` or loaded from its
# path: the packages beside it (study/, bench/) are found after what the interpreter already
# finds, and its sibling jobs.py (the scheduler of --jobs and --cluster) first
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
if str(ROOT / "profiles") not in sys.path:
    sys.path.insert(0, str(ROOT / "profiles"))

import jobs as scheduler  # noqa: E402
from bench import code_revision, machine  # noqa: E402
from lpp.formats.files import atomic_write_bytes  # noqa: E402
from study import checkpoints  # noqa: E402
from study.notebook import check_settings  # noqa: E402
from study.provenance import (  # noqa: E402
    file_md5,
    first_of,
    live_stages,
    lock_entries,
    stage_commits,
    stale_readers,
)
from study.stages import (  # noqa: E402
    DIAGNOSE_STAGES,
    REFERENCE_TOPICS,
    STAGES,
    SYNTHETIC_STAGES,
    TOPIC_SCORE_STAGES,
    collected_paths,
)



def merged_settings(profile: Path, cuts: Path | None) -> dict:
    """``profile``'s settings with the keys of ``cuts`` replaced (section by section)."""
    settings = yaml.safe_load(profile.read_text())
    if cuts is None:
        return settings
    for section, values in (yaml.safe_load(cuts.read_text()) or {}).items():
        if section not in settings or not isinstance(values, dict):
            raise ValueError(f"{cuts}: {section!r} is not a section of {profile}")
        unknown = set(values) - set(settings[section])
        if unknown:
            raise ValueError(f"{cuts}: {sorted(unknown)} are not settings of {section!r}")
        settings[section].update(values)
    check_settings(settings, source="the profile's settings")
    return settings


def _work_tree(path: Path) -> Path:
    if not path.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(path), "HEAD"], cwd=ROOT,
                       check=True)
    link_cache(path)
    return path


#: how the work tree's DVC cache gives back its outputs: a hard link, a copy only where the
#: file system has none. DVC's default copies, which holds every output twice: a topic fit at
#: the paper's scale is 2.2 GB, and the profile's fits with their copies outgrow the free space
#: of a 250 GB disk. Hard links rather than reflinks first: DVC cannot tell a reflink from a
#: copy, so with ``reflink`` first it takes a copy for one and, on a file system without
#: reflinks (ext4), copies every output. The stages never edit an output in place (DVC removes
#: them before a stage runs, and notebooks replace their files whole), so a link cannot change
#: what the cache holds.
CACHE_TYPE = "hardlink,copy"
#: the type this runner set before it took :data:`CACHE_TYPE`: replaced, not kept as a choice
#: of the user's, since under it DVC copies on ext4
_COPYING_CACHE_TYPE = "reflink,hardlink,copy"


def link_cache(work: Path) -> None:
    """Set ``cache.type`` to :data:`CACHE_TYPE` in the work tree's local DVC config
    (``.dvc/config.local``, untracked), unless another one is set there already. Outputs
    committed as copies before stay copies (DVC accepts a copy under ``copy``); to link them,
    ``dvc checkout --relink STAGE...`` under ``cache.type hardlink`` alone."""
    dvc = [sys.executable, "-m", "dvc", "config", "--local", "cache.type"]
    current = subprocess.run(dvc, cwd=work, capture_output=True, text=True)
    if current.returncode == 0 and current.stdout.strip() not in ("", _COPYING_CACHE_TYPE):
        return
    subprocess.run([*dvc, CACHE_TYPE], cwd=work, check=True)


def continuable_fits(status: dict, lock: dict, stages) -> dict[str, tuple[str, list[str]]]:
    """``(data folder, fit folders)`` by stage: the inference stages among ``stages`` (a
    foreach group's name selects its members) that DVC would rerun on the data their fits were
    made from, with the folder their notebook reads (``private_dir`` or ``counts_dir`` in the
    command that made the fits) and their outputs under ``results/fits/``. ``status`` is
    ``dvc status --json`` of the work tree, ``lock`` its ``dvc.lock``: a stage qualifies when
    no dependency under ``data/`` changed and no output was modified (a changed command or code
    is what a longer run is)."""
    chosen = {}
    for stage, changes in status.items():
        if not stage.startswith("infer_") or not any(
                stage == name or stage.startswith(name + "@") for name in stages):
            continue
        deps, outs = {}, {}
        for change in changes:
            if isinstance(change, dict):
                deps.update(change.get("changed deps", {}))
                outs.update(change.get("changed outs", {}))
        if any(path.startswith("data/") for path in deps) or "modified" in outs.values():
            continue
        entry = ((lock or {}).get("stages") or {}).get(stage) or {}
        fits = [out["path"] for out in entry.get("outs", [])
                if out["path"].startswith("results/fits/")]
        data = re.search(r"-p (?:private_dir|counts_dir) (\S+)", entry.get("cmd", ""))
        if fits and data:
            chosen[stage] = (data.group(1), fits)
    return chosen


def set_aside_fits(work: Path, stages) -> list[str]:
    """Set aside (:func:`study.checkpoints.set_aside`) the fits of :func:`continuable_fits`, so
    that the stages' notebooks run their chains on; the folders set aside."""
    status = _dvc_status(work)
    moved = []
    lock = _read_yaml(work / "dvc.lock")
    for stage, (data, fits) in continuable_fits(status, lock, stages).items():
        for fit in fits:
            aside = checkpoints.set_aside(work / fit, data_dir=work / data)
            if aside is not None:
                print(f"{stage}: {fit} set aside, its chains run on", flush=True)
                moved.append(str(aside.relative_to(work)))
    return moved


#: the work tree's record of each stage's wall seconds, written as each stage finishes, so the
#: times of a run that was killed part way survive for a later ``--collect-only``
STAGE_TIMES = "stage_seconds.json"
#: the seconds a stage ran before a run stopped it (Ctrl-C, ``--stop-after``), summed over such
#: pieces: the run that finishes the stage (a fit continued from its checkpoints) adds them to
#: its time. A process killed outright (SIGKILL, a lost machine) records no piece.
STOPPED_TIMES = "stage_seconds_stopped.json"


def stage_items(names, stages) -> list[str]:
    """``stages`` with each foreach group expanded into its members (DVC's ``names``, in their
    order), so that each fit gets its own time; a plain stage stays as it is. ``None``: every
    stage of the pipeline (``names``)."""
    if stages is None:
        return list(names)
    items = []
    for stage in stages:
        members = [name for name in names if name.startswith(stage + "@")]
        items.extend(members or [stage])
    return items


def record_stage_seconds(work: Path, stage: str, seconds: float) -> None:
    """Record the wall seconds of a stage that finished in the work tree's :data:`STAGE_TIMES`
    (atomically): ``seconds`` plus the pieces of it that earlier runs stopped
    (:data:`STOPPED_TIMES`, which no longer holds them). A later run of the stage replaces
    the time."""
    pieces = _read_json(work / STOPPED_TIMES)
    earlier = pieces.pop(stage, 0.0)
    record = _read_json(work / STAGE_TIMES)
    record[stage] = round(earlier + seconds, 1)
    _write_json(work / STAGE_TIMES, record)
    if earlier:
        _write_json(work / STOPPED_TIMES, pieces)


def record_stopped_piece(work: Path, stage: str, seconds: float) -> None:
    """Add the seconds a stage ran before a run stopped it to :data:`STOPPED_TIMES`."""
    pieces = _read_json(work / STOPPED_TIMES)
    pieces[stage] = round(pieces.get(stage, 0.0) + seconds, 1)
    _write_json(work / STOPPED_TIMES, pieces)


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def _write_json(path: Path, record: dict) -> None:
    atomic_write_bytes(path, (json.dumps(record, indent=1) + "\n").encode())


def _lock_entry(work: Path, stage: str):
    return (((_read_yaml(work / "dvc.lock") or {}).get("stages")) or {}).get(stage)


def run_stages(work: Path, stages=STAGES, single: bool = False, jobs: int = 1,
               cluster: str | None = None, threads_per_job: int | None = None,
               stop_after: float | None = None) -> None:
    """``dvc repro`` each of ``stages`` (a group member by member) in ``work``, recording the
    wall seconds of each that ran in the work tree as it finishes (a stage that runs after
    another it needs includes that one's time). With ``jobs`` > 1, a ``cluster`` or a time
    limit ``stop_after`` (seconds), the scheduler runs them instead (:func:`run_parallel`)."""
    items = stage_items(pipeline_stages(work), stages)
    if jobs > 1 or cluster or stop_after is not None:
        run_parallel(work, items, single, jobs, cluster, threads_per_job, stop_after)
        return
    for stage in items:
        print(f"=== {stage}", flush=True)
        before = _lock_entry(work, stage)
        start = time.perf_counter()
        try:
            subprocess.run(["dvc", "repro", *(["--single-item"] if single else []), stage],
                           cwd=work, check=True)
        except KeyboardInterrupt:
            record_stopped_piece(work, stage, round(time.perf_counter() - start, 1))
            raise
        # a stage DVC skipped (its lock entry unchanged) gets no time: it would overwrite the
        # time of the run that made it
        if _lock_entry(work, stage) != before:
            seconds = round(time.perf_counter() - start, 1)
            record_stage_seconds(work, stage, seconds)
            print(f"=== {stage}: {seconds:.0f} s", flush=True)


def run_parallel(work: Path, items, single: bool = False, jobs: int = 2,
                 cluster: str | None = None, threads_per_job: int | None = None,
                 stop_after: float | None = None) -> None:
    """Reproduce ``items`` (and what they need, unless ``single``) in ``work`` ``jobs`` at a
    time or on the Dask cluster at ``cluster`` (:func:`jobs.run_pipeline`), recording the wall
    seconds of each stage that ran, its own, as it is recorded in ``dvc.lock``, and those of
    each stage it stopped (:func:`record_stopped_piece`). Raises
    ``jobs.StagesFailed`` after a failed stage, KeyboardInterrupt after Ctrl-C,
    ``jobs.TimeLimitReached`` once ``stop_after`` seconds have passed."""
    scheduler.run_pipeline(work, items, single_item=single, jobs=jobs, cluster=cluster,
                           threads_per_job=threads_per_job, stop_after=stop_after,
                           on_done=lambda stage, s: record_stage_seconds(work, stage, s),
                           on_stopped=lambda stage, s: record_stopped_piece(work, stage, s))


def _run_in_parallel(work: Path, stages, single: bool, jobs: int, cluster, threads,
                     stop_after=None) -> int:
    """:func:`run_stages` by the scheduler; the exit status: 0, 1 after a failed stage (named
    with the stages it stopped), 130 after Ctrl-C, 124 at the time limit ``stop_after``."""
    try:
        run_stages(work, stages, single, jobs, cluster, threads, stop_after)
    except scheduler.StagesFailed as failed:
        print(f"{failed}\nnothing collected (--collect-only copies what is up to date)",
              file=sys.stderr, flush=True)
        return 1
    except scheduler.TimeLimitReached as stopped:
        print(f"{stopped}: {scheduler.CONTINUE_HINT}; nothing collected", file=sys.stderr,
              flush=True)
        return scheduler.TIME_LIMIT
    except KeyboardInterrupt:
        print(f"interrupted: {scheduler.CONTINUE_HINT}", file=sys.stderr, flush=True)
        return scheduler.INTERRUPTED
    return 0


def recorded_stage_seconds(work: Path, up_to_date) -> dict[str, float]:
    """The work tree's recorded stage times (:data:`STAGE_TIMES`) of the stages that are up to
    date there: the times of what :func:`collect` copies."""
    times = work / STAGE_TIMES
    record = json.loads(times.read_text()) if times.exists() else {}
    return {stage: value for stage, value in record.items() if up_to_date(work, stage)}


def made_in_work_tree(work: Path, work_lock: dict | None, up_to_date) -> set[str]:
    """The stages of the work tree's lock whose outputs its runs made: those up to date there
    with a recorded time (:data:`STAGE_TIMES`, written as each stage finishes), and the up-to-date
    stages whose outputs they read, transitively (a stage whose settings are the same in both
    profiles, such as a data set's preparation: its entry, the one the work tree's commit
    recorded, describes the data the run's fits read). An up-to-date stage that no run of the
    work tree made or read is left out: its output is the one the commit holds, the quick
    profile's (a benchmark without settings, say), not this profile's."""
    stages = (work_lock or {}).get("stages") or {}
    ran = {stage for stage in _read_json(work / STAGE_TIMES)
           if stage in stages and up_to_date(work, stage)}
    outputs = {out["path"] for stage in ran for out in stages[stage].get("outs") or []}
    read, _ = live_stages(lock_entries(stages, work / "dvc.lock"), dict.fromkeys(outputs))
    return {stage for stage in read | ran if up_to_date(work, stage)}


def stale_outputs(work: Path, paths, up_to_date) -> set[str]:
    """Those of ``paths`` that no up-to-date stage of the work tree's ``dvc.lock`` made: their
    producing stage's inputs changed since it ran, or the file is not the one it made (git
    checks out the quick profile's committed tables over the work tree's own when the tree
    moves to another commit), or the lock names no stage that produces them (a quick-profile
    table the commit holds, whose entry the work tree's lock does not keep). :func:`collect`
    leaves them out rather than copy a quick-profile table under ``results/paper``.
    ``up_to_date(work, stage)`` says whether a stage is up to date."""
    lock_file = work / "dvc.lock"
    lock = yaml.safe_load(lock_file.read_text()) if lock_file.exists() else None
    owner = {out["path"]: stage for stage, record in ((lock or {}).get("stages") or {}).items()
             for out in record.get("outs", [])}
    stages = {owner[p] for p in paths if p in owner}
    fresh = {stage for stage in sorted(stages) if up_to_date(work, stage)}
    return {p for p in paths if owner.get(p) not in fresh}


def pipeline_stages(work: Path) -> list[str]:
    """The names of the stages of ``work``'s pipeline at its settings (DVC's order)."""
    return _dvc(work, "stage", "list", "--name-only").split()


def _status_once(work: Path, pipeline: set[str]):
    """``up_to_date(tree, stage)`` from one ``dvc status --json`` of the whole work tree (a
    call per stage costs seconds each, and the lock has over a hundred stages). A stage the
    pipeline no longer has (a lock entry left from other settings, e.g. another profile's
    replicates) is not up to date."""
    changed = set(_dvc_status(work))
    return lambda tree, stage: stage in pipeline and stage not in changed


def _dvc(work: Path, *args) -> str:
    """What ``dvc ARGS`` prints in ``work``."""
    return subprocess.run(["dvc", *args], cwd=work, capture_output=True, text=True,
                          check=True).stdout


def _dvc_status(work: Path) -> dict:
    """``dvc status --json`` of the whole work tree: the stages that are not up to date, with
    what changed."""
    return json.loads(_dvc(work, "status", "--json") or "{}")


def merged_lock(work_lock: dict | None, committed_lock: dict | None, fresh: set[str],
                pipeline: set[str] | None = None) -> dict:
    """The committed lock with the entries of the ``fresh`` stages (up to date in the work
    tree) taken from the work tree's lock. Every other stage keeps the entry of the run that
    made what is committed for it, so each entry's params and hashes describe the outputs
    beside it even when a run remade only part of the study (the network, say). With
    ``pipeline`` (the stage names of the profile's pipeline), entries of stages it does not have
    (another profile's replicates or levels) are dropped: they describe no collected output."""
    stages = dict((committed_lock or {}).get("stages") or {})
    for stage, entry in ((work_lock or {}).get("stages") or {}).items():
        if stage in fresh:
            stages[stage] = entry
    if pipeline is not None:
        stages = {stage: entry for stage, entry in stages.items() if stage in pipeline}
    base = work_lock or committed_lock or {"schema": "2.0"}
    return {**base, "stages": stages}


#: what :func:`study.stages.collected_paths` names beside the outputs: the run's settings and
#: lock, written by :func:`collect` itself
RUN_RECORDS = ("dvc.lock", "params.yaml")


def held_outputs(tables: dict, figure_paths, results: Path, figures: Path) -> set[str]:
    """The work-tree paths of the outputs among :func:`study.stages.collected_paths`
    (``tables``, ``figure_paths``) that ``results`` and ``figures`` hold."""
    held = {source for source, target in tables.items()
            if source not in RUN_RECORDS and (results / target).exists()}
    return held | {source for source in figure_paths if (figures / Path(source).name).exists()}


def describing_entries(stages: dict, held, lock: Path) -> dict:
    """The entries of ``stages`` (a lock's mapping) that describe an output the results hold
    (``held``: work-tree paths): those that made one and, transitively, those whose outputs
    such an entry read (:func:`study.provenance.live_stages`). The others describe nothing
    the results hold — a privatized copy that no collected fit read, say — so the collected
    lock leaves them out. ``lock`` names the file in errors."""
    live, _ = live_stages(lock_entries(stages, lock), dict.fromkeys(held, None))
    return {stage: entry for stage, entry in stages.items() if stage in live}


#: heads the collected params.yaml: it is the last run's, which need not have made every table
PARAMS_HEADER = ("# The settings of the last profiles/run.py. A table that run did not remake "
                 "keeps the\n# settings it was made with in dvc.lock beside this file (each "
                 "stage's params).\n")


def collect(work: Path, results: Path, figures: Path, up_to_date=None,
            pipeline: set[str] | None = None) -> None:
    """Copy the up-to-date tables and figures of ``work`` to ``results`` and ``figures``; merge
    its ``dvc.lock`` into the committed one (:func:`merged_lock`, keeping only the stages of
    ``pipeline`` whose entries describe what the results hold: :func:`describing_entries`)
    and its recorded stage times into ``stage_seconds.json``.
    ``up_to_date(tree, stage)`` asks DVC once for the whole work tree by default, and
    ``pipeline`` is the work tree's stage list by default."""
    if pipeline is None:
        pipeline = set(pipeline_stages(work))
    up_to_date = up_to_date or _status_once(work, pipeline)
    work_lock = _read_yaml(work / "dvc.lock")
    made = made_in_work_tree(work, work_lock, up_to_date)
    made_here = lambda tree, stage: stage in made  # noqa: E731
    tables, figure_paths = collected_paths(yaml.safe_load((work / "params.yaml").read_text()))
    outputs = [path for path in [*tables, *figure_paths]
               if path not in RUN_RECORDS]
    stale = stale_outputs(work, outputs, made_here)
    for path in sorted(stale):
        print(f"not collected: {path} (no run in {work} made it: its stage is not up to date "
              "there, or its output is the one the work tree's commit holds)", flush=True)
    for source, target in tables.items():
        if source in RUN_RECORDS or not (work / source).exists() \
                or source in stale:
            continue
        (results / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(work / source, results / target)
    results.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(results / "params.yaml",
                       (PARAMS_HEADER + (work / "params.yaml").read_text()).encode())
    committed = _read_yaml(results / "dvc.lock")
    lock = merged_lock(work_lock, committed, made, pipeline)
    figures.mkdir(parents=True, exist_ok=True)
    for source in figure_paths:
        if (work / source).exists() and source not in stale:
            shutil.copyfile(work / source, figures / Path(source).name)
    # what results/ and figures/ hold now, this run's copies and earlier runs' alike
    held = held_outputs(tables, figure_paths, results, figures)
    remade = replaced_stages(lock["stages"], (committed or {}).get("stages") or {}, made)
    for (reader, dependency), makers in stale_entries(lock["stages"], remade, made,
                                                      results / "dvc.lock").items():
        if lock["stages"].pop(reader, None) is not None:
            print(f"stale: {reader} (an earlier run's entry) read {dependency}, which this run "
                  f"remade ({first_of(makers, 1)}): its entry is dropped, so `python -m "
                  f"study.provenance` fails on its output until {reader} runs again",
                  flush=True)
    lock["stages"] = describing_entries(lock["stages"], held, results / "dvc.lock")
    atomic_write_bytes(results / "dvc.lock", yaml.safe_dump(lock, sort_keys=False).encode())
    collect_stage_seconds(results / "stage_seconds.json",
                          recorded_stage_seconds(work, made_here), lock["stages"], work, made)


def replaced_stages(stages: dict, earlier: dict, among) -> set[str]:
    """Those of the stages ``among`` whose entry in ``stages`` (a lock's mapping) records other
    outputs than their entry in ``earlier`` (the lock before a collect or merge), or that
    ``earlier`` lacks: a stage made again to the same bytes replaced nothing."""
    def outputs(entry):
        return sorted((out.get("path"), out.get("md5")) for out in (entry or {}).get("outs") or [])

    return {stage for stage in among if stage in stages
            and (stage not in earlier or outputs(stages[stage]) != outputs(earlier[stage]))}


def stale_entries(stages: dict, remade, current, lock: Path) -> dict[tuple[str, str], list[str]]:
    """``{(reader, dependency): [makers]}``: the entries of ``stages`` (a lock's mapping; ``lock``
    names it in errors), other than the ``current`` ones, that read an output of the ``remade``
    stages other than as their entries record it (:func:`study.provenance.stale_readers`),
    with the stages that remade it."""
    stale = defaultdict(list)
    for reader, dependency, maker in stale_readers(lock_entries(stages, lock), remade, current):
        stale[reader, dependency].append(maker)
    return dict(stale)


def collect_stage_seconds(path: Path, seconds: dict[str, float], described, work: Path,
                          fresh=frozenset()) -> None:
    """Merge a run's stage times and commits into the committed record at ``path``, keeping
    those of the stages ``described`` (those of the collected ``dvc.lock``) and nothing else: a
    time of a stage the lock no longer records, or any other note of an earlier run, would
    describe no committed output. The record names the machine that collects (where the stages
    ran, unless on a ``--cluster``) and the work tree's revision (:func:`run_machine`), and
    under ``revisions`` the commit each described stage's entry was made at: the work tree's
    revision for the ``fresh`` stages (their entries taken from the work tree's lock, their
    code that of its checkout), the earlier record's for the others
    (:func:`study.provenance.stage_commits`), so each study is checked against the commit
    that made it (``python -m study.provenance paper``)."""
    earlier = json.loads(path.read_text()) if path.exists() else {}
    kept = {stage: t for stage, t in {**earlier.get("stages", {}), **seconds}.items()
            if stage in described}
    if not kept and not path.exists():
        return
    machine = run_machine(work)
    made_at = {**stage_commits(earlier, described),
               **{stage: machine["revision"] for stage in described if stage in fresh}}
    record = {"machine": machine, "stages": kept,
              "revisions": {stage: made_at[stage] for stage in described if made_at[stage]}}
    atomic_write_bytes(path, (json.dumps(record, indent=1, ensure_ascii=False) + "\n").encode())


def differing_settings(settings: dict, other: dict) -> list[str]:
    """The top-level keys of two ``params.yaml`` contents whose values differ, sorted."""
    return sorted(key for key in {*settings, *other} if settings.get(key) != other.get(key))


def restore_scores(work: Path, results: Path) -> list[str]:
    """Copy the topic fits' score records and reference topics collected under ``results`` (a
    study run in pieces: ``results/paper/pieces``) back to their places in the work tree, for
    stages run ``--single-item`` on a machine that holds none of the earlier pieces' fits: a
    private fit's score stage then reads the non-private fit's reference topics without the
    non-private fit, and ``report_topics`` reads every record without any fit. The work-tree
    paths restored, under the settings of the work tree's ``params.yaml``.

    What is restored is each output that the pieces' lock records for a score stage
    (:data:`TOPIC_SCORE_STAGES`), checked against the hash recorded there; a file in its place
    with those bytes already stays. Another file there is unlinked first, not written over (a
    DVC output may be a hard link to DVC's cache, :data:`CACHE_TYPE`, which writing would
    change), unless the work tree's own run made it (its stage timed in :data:`STAGE_TIMES`,
    the file the one its lock records): that is refused, for the pieces do not hold it yet
    (``--collect-only`` first). Everything is checked before anything is copied.
    FileNotFoundError when the work tree would lack the reference topics, which every private
    fit's score stage reads."""
    settings = _read_yaml(work / "params.yaml")
    collected = _read_yaml(results / "params.yaml")
    if collected is None:
        raise FileNotFoundError(f"{results / 'params.yaml'}: no collected settings; "
                                "--results names the folder the pieces were collected into")
    if differ := differing_settings(settings, collected):
        raise ValueError(f"{work / 'params.yaml'}: the work tree runs under other settings than "
                         f"the pieces collected under {results} ({', '.join(differ)}): their "
                         "records and reference topics are not this run's")
    pieces_lock = results / "dvc.lock"
    if not pieces_lock.is_file():
        raise FileNotFoundError(f"{pieces_lock}: no collected lock, which names the records to "
                                "restore and their hashes")
    kept_entries = lock_entries((_read_yaml(pieces_lock) or {}).get("stages") or {}, pieces_lock)
    timed = _read_json(work / STAGE_TIMES)
    own_stages = {stage: entry for stage, entry in
                  ((_read_yaml(work / "dvc.lock") or {}).get("stages") or {}).items()
                  if stage in timed}
    own = {out.path: out.md5 for entry in lock_entries(own_stages, work / "dvc.lock").values()
           for out in entry["outs"]}

    def md5_at(path: str) -> str | None:
        return file_md5(work / path) if (work / path).is_file() else None

    def made_by_own_run(path: str, md5: str | None) -> bool:
        return md5 is not None and own.get(path) == md5

    tables, _ = collected_paths(settings)
    wanted, copies = set(), []
    for stage, entry in kept_entries.items():
        if stage.split("@")[0] not in TOPIC_SCORE_STAGES:
            continue
        for out in entry["outs"]:
            if out.path not in tables:
                continue
            kept = results / tables[out.path]
            if not kept.is_file() or file_md5(kept) != out.md5:
                raise ValueError(f"{kept}: {'changed since' if kept.is_file() else 'missing, but'}"
                                 f" {pieces_lock} records it ({stage}'s output {out.path}, md5 "
                                 f"{out.md5}): check it out from git as it was collected")
            wanted.add(out.path)
            destination = work / out.path
            found = md5_at(out.path)
            if found == out.md5:
                continue
            if made_by_own_run(out.path, found):
                raise ValueError(f"{destination}: the work tree's own run made it, and the pieces "
                                 f"under {results} hold another (md5 {out.md5}): collect the "
                                 "work tree first (--collect-only), or remove the file to take "
                                 "the pieces' copy")
            copies.append((kept, destination, out.path))
    reference = f"results/eval/{settings['prepare_topics']['dataset']}_topics/{REFERENCE_TOPICS}"
    if (reference in tables and reference not in wanted
            and not made_by_own_run(reference, md5_at(reference))):
        raise FileNotFoundError(f"{pieces_lock}: the pieces record no {REFERENCE_TOPICS} and no "
                                f"run of the work tree made {reference}, which the private fits' "
                                "score stages read: collect it first (--collect-only in the work "
                                "tree that made the non-private fit) or make that fit again "
                                "without --restore-scores")
    for kept, destination, _ in copies:
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.unlink(missing_ok=True)
        shutil.copyfile(kept, destination)
    return [path for _, _, path in copies]


def merge_pieces(pieces: Path, pieces_figures: Path, results: Path, figures: Path) -> None:
    """Merge a study collected in pieces (``pieces`` and ``pieces_figures``, the
    ``--results``/``--figures`` its runs collected into) into the results it completes
    (``results``, ``figures``: ``results/paper``, ``figures/paper``), and remove the pieces.

    Every collected output the pieces hold (:func:`study.stages.collected_paths`) replaces the
    one of the same name; their lock entries replace the same stages' entries
    (:func:`merged_lock`), and the entries that then describe nothing the results hold are
    dropped (:func:`describing_entries`: the earlier run's fits of the
    study, say); their stage times and commits replace the same stages' in
    ``stage_seconds.json`` (a replaced entry keeps no earlier time). The two must have run
    under the same settings (``params.yaml``): each entry is checked against the pipeline at
    them. Merge once the pieces hold the whole study, its report and diagnosis included: a
    merge that would keep an entry which read an output the pieces replaced (the earlier
    report reading the fits' folder, :func:`study.provenance.stale_readers`) is refused, as
    are pieces holding a file that is no collected output (the merge removes the pieces)."""
    pieces, pieces_figures, results, figures = (Path(path).resolve() for path in (
        pieces, pieces_figures, results, figures))
    for folder in (pieces, pieces_figures):
        # pieces inside the results are the usual place (results/paper/pieces); results
        # inside the pieces (the two folders swapped) would go with the pieces' removal
        for into in (results, figures):
            if folder == into or folder in into.parents:
                raise ValueError(f"merge {folder} into {into}: the results must not be the "
                                 "pieces or lie inside them, which the merge removes (--results "
                                 "and --figures name the pieces, --merge-into the results)")
    pieces_lock = _read_yaml(pieces / "dvc.lock")
    if not pieces_lock or not pieces_lock.get("stages"):
        raise FileNotFoundError(f"{pieces / 'dvc.lock'}: no collected stages to merge")
    lock_entries(pieces_lock["stages"], pieces / "dvc.lock")  # a malformed entry named here
    if not (pieces / "params.yaml").exists() or not (results / "params.yaml").exists():
        raise FileNotFoundError(f"{pieces / 'params.yaml'} and {results / 'params.yaml'}: both "
                                "are needed, the settings the pieces and the results ran under")
    # the results' other studies are checked against the pipeline at the results' settings,
    # the pieces' stages at the pieces': merged, they must be the same
    settings, earlier_settings = (_read_yaml(pieces / "params.yaml"),
                                  _read_yaml(results / "params.yaml"))
    if differ := differing_settings(settings, earlier_settings):
        raise ValueError(f"{pieces / 'params.yaml'}: the pieces ran under other settings than "
                         f"{results / 'params.yaml'} ({', '.join(differ)}): the merged lock would "
                         "describe one of them under the other's pipeline; rerun the pieces' "
                         "stages or the results' under one profile")
    # everything is worked out before anything is written: a refused merge changes nothing
    tables, figure_paths = collected_paths(settings)
    copies = [(pieces / target, results / target) for source, target in tables.items()
              if source not in RUN_RECORDS and (pieces / target).is_file()]
    copies += [(pieces_figures / Path(source).name, figures / Path(source).name)
               for source in figure_paths if (pieces_figures / Path(source).name).is_file()]
    records = {pieces / name for name in (*RUN_RECORDS, STAGE_TIMES)}
    named = {source for source, _ in copies} | records
    strays = [path for folder in (pieces, pieces_figures) if folder.exists()
              for path in sorted(folder.rglob("*")) if path.is_file() and path not in named]
    if strays:
        raise ValueError(f"{first_of(strays, 1)}: not an output the pieces' settings collect, "
                         "and the merge removes the pieces: move it out of them first")
    held = (held_outputs(tables, figure_paths, results, figures)
            | held_outputs(tables, figure_paths, pieces, pieces_figures))
    fresh = set(pieces_lock["stages"])
    earlier_lock = _read_yaml(results / "dvc.lock")
    lock = merged_lock(pieces_lock, earlier_lock, fresh)
    lock["stages"] = describing_entries(lock["stages"], held, results / "dvc.lock")
    remade = replaced_stages(lock["stages"], (earlier_lock or {}).get("stages") or {}, fresh)
    if stale := stale_entries(lock["stages"], remade, fresh, results / "dvc.lock"):
        raise ValueError(f"{results / 'dvc.lock'}: " + first_of(
            [f"{reader} read {dependency}, which the pieces remade ({first_of(makers, 1)})"
             for (reader, dependency), makers in stale.items()], separator="; ")
            + ": their entries would describe what the pieces replaced; make those stages in "
            "a piece too before the merge")
    earlier, merged = _read_json(results / STAGE_TIMES), _read_json(pieces / STAGE_TIMES)
    described = lock["stages"]
    made_at = {**stage_commits(earlier, described), **stage_commits(merged, fresh)}
    record = {"machine": merged.get("machine") or earlier.get("machine"),
              # a replaced entry's earlier time described the earlier run's output
              "stages": {stage: t for source, mine in ((earlier, False), (merged, True))
                         for stage, t in source.get("stages", {}).items()
                         if (stage in fresh) == mine and stage in described},
              "revisions": {stage: made_at[stage] for stage in described if made_at.get(stage)}}
    for source, target in copies:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    atomic_write_bytes(results / "dvc.lock", yaml.safe_dump(lock, sort_keys=False).encode())
    atomic_write_bytes(results / STAGE_TIMES,
                       (json.dumps(record, indent=1, ensure_ascii=False) + "\n").encode())
    shutil.rmtree(pieces)
    if pieces_figures.exists():
        shutil.rmtree(pieces_figures)


def run_machine(work: Path) -> dict:
    """This machine as the benchmarks record it (``bench.machine``: cores, CPU model,
    library versions), less the numba thread count (each stage sets its own), with the
    revision of the work tree's code instead of this checkout's."""
    record = machine()
    record.pop("numba_threads")
    record["revision"] = code_revision(work)
    return record


def _read_yaml(path: Path):
    return yaml.safe_load(path.read_text()) if path.exists() else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", type=Path, default=ROOT / "profiles" / "paper.yaml")
    parser.add_argument("--cuts", type=Path, default=ROOT / "profiles" / "paper_cuts.yaml")
    parser.add_argument("--no-cuts", action="store_true", help="run the profile as it is")
    parser.add_argument("--work-tree", type=Path, default=ROOT.parent / "lpp-paper")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "paper")
    parser.add_argument("--figures", type=Path, default=ROOT / "figures" / "paper")
    parser.add_argument("--stages", nargs="+", default=list(STAGES))
    parser.add_argument("--single-item", action="store_true",
                        help="run only the named stages, not what they depend on (e.g. to score "
                             "an earlier run's fits again after the evaluation code changed)")
    parser.add_argument("--diagnose", action="store_true",
                        help="run the convergence diagnosis (its extra chains and the diagnose "
                             "stage) of an earlier run's fits instead of the case studies")
    parser.add_argument("--all", action="store_true",
                        help="run every stage of the pipeline at the profile's settings: the case "
                             "studies, their diagnosis, the synthetic experiments, the central "
                             "model and the claims (a rerun of the whole study from one commit)")
    parser.add_argument("--synthetic", action="store_true",
                        help="run the papers' synthetic experiments (Figs. 1 and 3, the VI "
                             "paper's Fig. 1 and appendix E table) and the central-model "
                             "comparison (Foulds et al.) instead of the case studies")
    parser.add_argument("--jobs", "-j", type=int, default=1,
                        help="stages run at a time, each with the CPUs divided by this many "
                             "threads (default 1: one dvc repro after another)")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the stages' commands on the workers of this Dask scheduler "
                             "(they must share the work tree's file system)")
    parser.add_argument("--threads-per-job", type=int, default=None,
                        help="threads of each stage of --jobs or --cluster")
    parser.add_argument("--stop-after", type=scheduler.duration_argument, default=None,
                        metavar="DURATION",
                        help="stop the running stages as Ctrl-C does (their fits write their "
                             "checkpoints) once this much time has passed, e.g. 2h45m: a batch "
                             f"job's limit less {scheduler.STOP_GRACE_SECONDS:.0f} s for them to "
                             "stop; a later run continues")
    parser.add_argument("--collect-only", action="store_true")
    parser.add_argument("--restore-scores", action="store_true",
                        help="first copy the topic score records and reference topics collected "
                             "under --results back into the work tree, for stages run with "
                             "--single-item on a machine without the earlier pieces' fits")
    parser.add_argument("--merge-into", nargs=2, type=Path, metavar=("RESULTS", "FIGURES"),
                        help="merge the study collected in pieces under --results and --figures "
                             "into these (e.g. results/paper figures/paper) and remove the "
                             "pieces; nothing runs")
    parser.add_argument("--continue-chains", action="store_true",
                        help="inference stages rerun on their fits' own data (more sweeps, a "
                             "longer burn-in, newer code) continue the fits' chains instead of "
                             "starting them over")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.cluster and args.jobs != 1:
        parser.error("--cluster and --jobs exclude each other: the cluster's workers decide how "
                     "many stages run at once")

    if args.merge_into:
        if args.results == parser.get_default("results") \
                or args.figures == parser.get_default("figures"):
            parser.error("--merge-into: name the pieces with --results and --figures "
                         "(e.g. results/paper/pieces figures/paper/pieces)")
        try:
            merge_pieces(args.results, args.figures, *args.merge_into)
        except (OSError, ValueError, yaml.YAMLError) as error:
            parser.error(f"--merge-into: {error}")
        return 0
    work = args.work_tree.resolve()
    if not args.collect_only:
        settings = merged_settings(args.profile, None if args.no_cuts else args.cuts)
        _work_tree(work)
        (work / "params.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
        if args.restore_scores:
            try:
                restored = restore_scores(work, args.results)
            except (OSError, ValueError, yaml.YAMLError) as error:
                parser.error(f"--restore-scores: {error}")
            for path in restored:
                print(f"restored {path} from {args.results}", flush=True)
        stages, single = args.stages, args.single_item
        if args.diagnose:  # only these stages: the fits they diagnose are the earlier run's
            stages, single = list(DIAGNOSE_STAGES), True
        elif args.synthetic:
            stages = list(SYNTHETIC_STAGES)
        elif args.all:
            stages = None
        if args.continue_chains:
            set_aside_fits(work, stages)
        if args.jobs > 1 or args.cluster or args.stop_after is not None:
            status = _run_in_parallel(work, stages, single, args.jobs, args.cluster,
                                      args.threads_per_job, args.stop_after)
            if status:
                return status
        else:
            run_stages(work, stages, single)
    collect(work, args.results, args.figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
