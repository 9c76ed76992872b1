"""profiles/jobs.py: a DVC pipeline's stages several at a time, recorded as ``dvc repro`` does.

The pipeline here is a toy in a git repository of its own: a stage with a param, a foreach
group of four members after it, two independent stages (one with a persistent output, one
without the param) and a last stage with an uncached output after the group. Its stages
(``step.py``) write what they read and the param, nothing that varies between runs, so a run of
the scheduler and a serial ``dvc repro`` of a copy must leave the same ``dvc.lock``; when each
ran goes to a side folder (``times/``) that DVC does not track, and ``behaviour.json`` (not a
dependency) makes a stage slow or fail. A stage writes a checkpoint when SIGINT stops it, and
a rerun of it continues from there (records ``resumed``), as the study's fits do.
"""
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

# DVC binds its log handlers to the sys.stdout of its import: import it here, not first inside
# a test whose capsys stream is closed after it (the jobs' in-process DVC then logs into it)
import dvc  # noqa: F401
import networkx as nx
import pytest
import yaml

#: DVC's stage graph, called in-process here, warns through pygtrie (DVC 3.67, pygtrie 2.5)
pytestmark = pytest.mark.filterwarnings(
    "ignore:_NoneStep.value will soon raise:DeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = ("a", "b", "c", "d")

STEP = '''\
import json, os, signal, sys, time
from pathlib import Path

name, out, *inputs = sys.argv[1:]
behaviour = json.loads(Path("behaviour.json").read_text()).get(name, {}) \\
    if Path("behaviour.json").exists() else {}
times = Path("times")
times.mkdir(exist_ok=True)
start = time.time()
checkpoint = Path("checkpoints") / name
resumed = checkpoint.exists()
existed = Path(out).exists()

def interrupted(signum, frame):  # what a fit does on Ctrl-C: write its checkpoint, stop
    checkpoint.parent.mkdir(exist_ok=True)
    checkpoint.write_text("half way")
    sys.exit(1)

signal.signal(signal.SIGINT, interrupted)
(times / f"{name}.started").write_text(str(os.getpid()))
if behaviour.get("fail"):
    sys.exit(3)
if behaviour.get("sleep") and not resumed:
    time.sleep(behaviour["sleep"])
scale = __import__("yaml").safe_load(Path("params.yaml").read_text())["scale"]
Path(out).parent.mkdir(exist_ok=True)
Path(out).write_text(json.dumps({"name": name, "scale": scale,
                                 "inputs": [Path(i).read_text() for i in inputs]}))
(times / f"{name}.json").write_text(json.dumps({
    "start": start, "end": time.time(), "resumed": resumed, "existed": existed,
    "threads": os.environ.get("NUMBA_NUM_THREADS"), "stage": os.environ.get("DVC_STAGE")}))
'''

PIPELINE = {"stages": {
    "first": {"cmd": "python step.py first out/first.json", "deps": ["step.py"],
              "params": ["scale"], "outs": ["out/first.json"]},
    "each": {"foreach": list(MEMBERS), "do": {
        "cmd": "python step.py each-${item} out/each-${item}.json out/first.json",
        "deps": ["step.py", "out/first.json"], "outs": ["out/each-${item}.json"]}},
    "solo": {"cmd": "python step.py solo out/solo.json", "deps": ["step.py"],
             "outs": ["out/solo.json"]},
    "tally": {"cmd": "python step.py tally out/tally.json", "deps": ["step.py"],
              "params": ["scale"], "outs": [{"out/tally.json": {"persist": True}}]},
    "last": {"cmd": "python step.py last out/last.json " + " ".join(
                 f"out/each-{m}.json" for m in MEMBERS),
             "deps": ["step.py", *(f"out/each-{m}.json" for m in MEMBERS)],
             "outs": [{"out/last.json": {"cache": False}}]},
}}


def _jobs():
    spec = importlib.util.spec_from_file_location("jobs", ROOT / "profiles" / "jobs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


jobs = _jobs()


def _env():
    """The toy's stages call ``python``: the interpreter running the tests, venv or not."""
    return {**os.environ, "DVC_NO_ANALYTICS": "1", "PYTHONPATH": str(ROOT),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}


def _git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, capture_output=True)


def _dvc(repo, *args, check=True):
    return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, env=_env(),
                          capture_output=True, text=True, check=check)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The toy repository as committed, and its ``dvc.lock`` etc. after a serial ``dvc
    repro`` of a copy: ``(template, serial copy)``."""
    repo = tmp_path_factory.mktemp("toy") / "repo"
    repo.mkdir()
    (repo / "step.py").write_text(STEP)
    (repo / "dvc.yaml").write_text(yaml.safe_dump(PIPELINE, sort_keys=False))
    (repo / "params.yaml").write_text("scale: 3\n")
    (repo / ".gitignore").write_text("/times/\n/checkpoints/\n/behaviour.json\n")
    _git(repo, "init", "-q")
    _dvc(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "toy")
    serial = repo.parent / "serial"
    shutil.copytree(repo, serial, symlinks=True)
    _dvc(serial, "repro")
    return repo, serial


@pytest.fixture
def toy(template, tmp_path, monkeypatch):
    """A fresh copy of the toy repository; the stages' ``python`` is this interpreter."""
    repo = tmp_path / "repo"
    shutil.copytree(template[0], repo, symlinks=True)
    for name, value in _env().items():
        monkeypatch.setenv(name, value)
    return repo


def _lock(repo):
    return yaml.safe_load((repo / "dvc.lock").read_text())


def _times(repo):
    return {path.stem: json.loads(path.read_text())
            for path in sorted((repo / "times").glob("*.json"))}


def _cache_files(repo):
    """The files of DVC's cache (objects and run cache) by path."""
    cache = repo / ".dvc" / "cache"
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())


def _assert_as_serial(repo, serial, cache=True):
    """``repo`` is recorded as the serial ``dvc repro`` recorded ``serial`` (and its cache,
    run cache included, holds the same, unless ``cache`` is false)."""
    assert _lock(repo) == _lock(serial)  # as parsed YAML: the entries' order may differ
    for ignore in ("out/.gitignore",):
        assert set((repo / ignore).read_text().split()) == set(
            (serial / ignore).read_text().split())
    if cache:
        assert _cache_files(repo) == _cache_files(serial)
    assert "up to date" in _dvc(repo, "status").stdout


def _behave(repo, **behaviour):
    (repo / "behaviour.json").write_text(json.dumps(behaviour))


def test_the_plan_puts_each_stage_after_what_it_needs():
    graph = nx.DiGraph([("last", "each@a"), ("last", "each@b"), ("each@a", "first"),
                        ("each@b", "first"), ("other", "first")])
    graph.add_node("solo")
    order, needs = jobs.plan(graph, ["last", "solo"])
    assert order == ["first", "each@a", "each@b", "last", "solo"]
    assert needs["last"] == {"each@a", "each@b"} and needs["first"] == set()
    order, needs = jobs.plan(graph, ["last", "each@a"], single_item=True)
    assert order == ["last", "each@a"] and needs == {"last": {"each@a"}, "each@a": set()}


def test_a_parallel_run_records_what_a_serial_dvc_repro_records(template, toy):
    ran = []
    seconds = jobs.run_pipeline(toy, jobs=2, on_done=lambda stage, s: ran.append(stage))
    stages = ["first", *(f"each@{m}" for m in MEMBERS), "solo", "tally", "last"]
    assert sorted(seconds) == sorted(ran) == sorted(stages)
    _assert_as_serial(toy, template[1])
    times = _times(toy)
    # each stage after what it needs; DVC's variables and the threads of a job set
    for member in MEMBERS:
        assert times["first"]["end"] <= times[f"each-{member}"]["start"]
        assert times[f"each-{member}"]["end"] <= times["last"]["start"]
    assert times["each-a"]["stage"] == "each@a"
    assert {t["threads"] for t in times.values()} == {str(max(1, jobs.available_cpus() // 2))}
    assert (toy / ".dvc" / "tmp" / "jobs" / "each@a.log").exists()
    # up-to-date stages are not rerun; a changed param reruns what depends on it
    assert jobs.run_pipeline(toy, jobs=2) == {}
    assert _times(toy) == times
    (toy / "params.yaml").write_text("scale: 4\n")
    assert set(jobs.run_pipeline(toy, jobs=2)) == set(stages) - {"solo"}
    assert _times(toy)["solo"] == times["solo"]
    # DVC removed the outputs before the stages ran, except the persistent one
    assert not _times(toy)["first"]["existed"] and _times(toy)["tally"]["existed"]
    assert "up to date" in _dvc(toy, "status").stdout
    # back to the first param: DVC's run cache has those runs, which are checked out, not run;
    # the stages with an uncached or a persistent output (no run cache) run
    (toy / "params.yaml").write_text("scale: 3\n")
    again = _times(toy)
    assert set(jobs.run_pipeline(toy, jobs=2)) == {"last", "tally"}
    assert {name: t for name, t in _times(toy).items() if name not in ("last", "tally")} == {
        name: t for name, t in again.items() if name not in ("last", "tally")}
    _assert_as_serial(toy, template[1], cache=False)  # which also has the runs of scale 4


def test_independent_stages_overlap_and_no_more_than_the_jobs_run(toy):
    _behave(toy, **{f"each-{m}": {"sleep": 1.0} for m in MEMBERS})
    jobs.run_pipeline(toy, ["each"], jobs=2, threads_per_job=1)
    spans = [(t["start"], t["end"]) for name, t in _times(toy).items()
             if name.startswith("each-")]
    assert len(spans) == 4
    # the most that run at any moment (the start of one of them): two of the four
    assert max(sum(s <= moment < e for s, e in spans) for moment, _ in spans) == 2
    assert set(_lock(toy)["stages"]) == {"first", *(f"each@{m}" for m in MEMBERS)}


def test_a_failed_stage_stops_its_dependants_only(toy, capsys):
    _behave(toy, **{"each-b": {"fail": True}})
    with pytest.raises(jobs.StagesFailed) as failed:
        jobs.run_pipeline(toy, jobs=2)
    assert set(failed.value.failed) == {"each@b"} and "exit 3" in failed.value.failed["each@b"]
    assert failed.value.skipped == {"last": "each@b"}
    assert "each@b" in str(failed.value) and "last (needs each@b)" in str(failed.value)
    assert "FAILED each@b" in capsys.readouterr().out
    lock = _lock(toy)["stages"]
    assert set(lock) == {"first", "each@a", "each@c", "each@d", "solo", "tally"}
    assert (toy / "out" / "solo.json").exists() and (toy / "out" / "each-a.json").exists()
    status = json.loads(_dvc(toy, "status", "--json").stdout)
    assert set(status) == {"each@b", "last"}
    # the command line's exit status says so too; what is done is not run again
    assert jobs.main(["--repo", str(toy), "--jobs", "2"]) == 1
    assert "stage each@b failed: exit 3" in capsys.readouterr().err
    # mended, the next run makes only what is missing
    _behave(toy)
    assert set(jobs.run_pipeline(toy, jobs=2)) == {"each@b", "last"}
    assert "up to date" in _dvc(toy, "status").stdout


def test_single_item_runs_only_the_named_stages(toy):
    with pytest.raises(jobs.StagesFailed, match="each@a"):  # its input is not there
        jobs.run_pipeline(toy, ["each@a"], single_item=True, jobs=2)
    assert set(jobs.run_pipeline(toy, ["first", "each@a"], single_item=True, jobs=2)) == {
        "first", "each@a"}


def test_ctrl_c_stops_the_running_stages_and_the_next_run_continues(toy):
    _behave(toy, **{"each-a": {"sleep": 60}})
    scheduler = subprocess.Popen(
        [sys.executable, str(ROOT / "profiles" / "jobs.py"), "--repo", str(toy), "--jobs", "2"],
        env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    started = toy / "times" / "each-a.started"
    # generous: on a loaded machine DVC takes tens of seconds to start and run the first stage
    deadline = time.monotonic() + 180
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "each@a did not start within 180 s"
    stage_pid = int(started.read_text())
    scheduler.send_signal(signal.SIGINT)
    output, _ = scheduler.communicate(timeout=150)
    assert scheduler.returncode == jobs.INTERRUPTED, output
    assert "SIGINT sent to each@a" in output
    assert (toy / "checkpoints" / "each-a").read_text() == "half way"  # it got the signal
    with pytest.raises(ProcessLookupError):
        os.kill(stage_pid, 0)
    assert "each@a" not in _lock(toy)["stages"]
    # the next run reruns the interrupted stage, which continues from its checkpoint
    ran = jobs.run_pipeline(toy, jobs=2)
    assert "each@a" in ran and "first" not in ran
    assert _times(toy)["each-a"]["resumed"] is True
    assert "up to date" in _dvc(toy, "status").stdout


def test_a_time_limit_stops_the_running_stages_as_ctrl_c_does_and_the_next_run_continues(toy):
    """A batch job's limit: once ``--stop-after`` has passed no stage starts, the running ones
    get SIGINT (their checkpoints written) and the run exits 124; the next run continues."""
    # the limit leaves a loaded machine time to start DVC and run the first stage before it
    _behave(toy, **{"each-a": {"sleep": 600}})
    scheduler = subprocess.Popen(
        [sys.executable, str(ROOT / "profiles" / "jobs.py"), "--repo", str(toy), "--jobs", "2",
         "--stop-after", "45s"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    output, _ = scheduler.communicate(timeout=400)
    assert scheduler.returncode == jobs.TIME_LIMIT, output
    assert "time limit reached: SIGINT sent to each@a" in output
    assert "stopped at the time limit" in output and "not started" in output
    assert (toy / "checkpoints" / "each-a").read_text() == "half way"
    lock = _lock(toy)["stages"]
    assert "each@a" not in lock and "last" not in lock and "first" in lock
    ran = jobs.run_pipeline(toy, jobs=2)
    assert "each@a" in ran and "first" not in ran
    assert _times(toy)["each-a"]["resumed"] is True
    assert "up to date" in _dvc(toy, "status").stdout


def test_a_stopped_stage_reports_the_seconds_it_ran_and_a_failed_one_does_not():
    """The piece of a stage that a stop (Ctrl-C, the time limit) cut short goes to
    ``on_stopped``, so that the run that finishes the stage can count it; a stage that failed
    on its own is not a piece of a later run."""
    class Stage:
        addressing = "fit@a"

    class Done:
        def __init__(self, rc):
            self.rc = rc

        def result(self):
            return {"rc": self.rc, "seconds": 41.5, "host": "here"}

    class Dvc:
        def release(self, stage):
            pass

    stopped, lines = [], []
    run = jobs._Run(Dvc(), None, [], {}, None, on_done=None, out=lines.append,
                    on_stopped=lambda stage, s: stopped.append((stage, s)))
    run.stopping = True
    run._finish(Stage(), {"log": "unused"}, Done(-signal.SIGINT))
    assert stopped == [("fit@a", 41.5)] and lines == ["stopped fit@a after 41.5 s (signal SIGINT)"]
    run._finish(Stage(), {"log": "unused"}, Done(None))  # stopped before its command started
    assert stopped == [("fit@a", 41.5)]


@pytest.mark.parametrize("text,seconds", [("5400", 5400), ("2h30m", 9000), ("90m", 5400),
                                          ("45s", 45), ("1.5h", 5400), ("1h0m30s", 3630)])
def test_durations_read_as_seconds(text, seconds):
    assert jobs.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "2x", "h", "0", "-5m", "nan"])
def test_a_bad_duration_is_refused(text):
    with pytest.raises(ValueError, match="not a duration|must be positive"):
        jobs.parse_duration(text)


def test_a_bad_time_limit_is_refused_naming_the_option(tmp_path):
    with pytest.raises(ValueError, match="stop_after"):
        jobs.run_pipeline(tmp_path, stop_after=0)
    for script in ("jobs.py", "run.py"):
        done = subprocess.run([sys.executable, str(ROOT / "profiles" / script), "--stop-after",
                               "2x"], capture_output=True, text=True, env=_env())
        assert done.returncode == 2, done.stderr
        assert "--stop-after: not a duration: '2x'" in done.stderr


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local:
        yield local


def test_a_run_on_a_dask_cluster_records_what_dvc_repro_records(template, toy, cluster):
    seconds = jobs.run_pipeline(toy, cluster=cluster.scheduler_address, threads_per_job=3)
    assert len(seconds) == 8
    _assert_as_serial(toy, template[1])
    assert {t["threads"] for t in _times(toy).values()} == {"3"}
    with pytest.raises(ValueError, match="exclude each other"):
        jobs.run_pipeline(toy, jobs=2, cluster=cluster.scheduler_address)


def test_the_runs_of_a_command_line_and_its_interruption(tmp_path):
    log = tmp_path / "log"
    command = {"stage": "s", "cwd": str(tmp_path), "env": {"X": "1"}, "log": str(log),
               "argvs": [["sh", "-c", "echo $X"], ["sh", "-c", "exit 4"], ["sh", "-c", "echo no"]]}
    result = jobs.run_command(command)
    assert result["rc"] == 4 and log.read_text() == "> echo $X\n1\n> exit 4\n"
    assert jobs.log_tail(log, 1) == "> exit 4"
    stops = iter([False, True])
    command["argvs"] = [["sh", "-c", "sleep 30"]]
    start = time.monotonic()
    result = jobs.run_command(command, stop=lambda: next(stops, True), poll=0.05)
    assert result["rc"] == -signal.SIGINT and time.monotonic() - start < 5
    assert jobs.run_command(command, stop=lambda: True)["rc"] is None
    # a command deaf to SIGINT is killed after the grace period, or at once when asked
    command["argvs"] = [["sh", "-c", "trap '' INT; sleep 30"]]
    stops = iter([False, True])
    result = jobs.run_command(command, stop=lambda: next(stops, True), grace=0.3, poll=0.05)
    assert result["rc"] == -signal.SIGKILL and result["seconds"] < 5
    kills = iter([False, True])
    result = jobs.run_command(command, kill=lambda: next(kills, True), poll=0.05)
    assert result["rc"] == -signal.SIGKILL and result["seconds"] < 5


def test_a_stop_reaches_the_lines_of_a_process_that_ignores_sigint(tmp_path):
    """A runner started in the background by a non-interactive shell (``nohup ... &``)
    inherits SIGINT ignored, and so would every line it starts: they still stop on SIGINT."""
    command = {"stage": "s", "cwd": str(tmp_path), "env": {}, "log": str(tmp_path / "log"),
               "argvs": [["sh", "-c", "sleep 30"]]}
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        stops = iter([False])  # the line starts, then the stop is sent at the first look
        result = jobs.run_command(command, stop=lambda: next(stops, True), grace=20, poll=0.05)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result["rc"] == -signal.SIGINT and result["seconds"] < 10
    assert (tmp_path / "log").read_text() == "> sleep 30\n"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_stop_sent_while_the_shell_starts_up_reaches_its_command(tmp_path):
    """dash takes a SIGINT that arrives while it starts up, then forks its command all the
    same (measured: 11 and 16 of 200 stops sent at once were lost so, under load); the command
    gets a SIGINT of its own."""
    command = {"stage": "s", "cwd": str(tmp_path), "env": {}, "log": str(tmp_path / "log"),
               "argvs": [["sh", "-c", "sleep 30"]]}
    ends = []
    for _ in range(100):
        stops = iter([False])  # the line starts, then the stop is sent at the first look
        ends.append(jobs.run_command(command, stop=lambda: next(stops, True), grace=5,
                                     poll=0)["rc"])
    assert ends == [-signal.SIGINT] * 100


def test_the_profile_runner_runs_its_stages_with_jobs_or_on_a_cluster(toy, cluster):
    """profiles/run.py --cluster and --jobs: the stages it names (a group member by member) and
    what they need run through profiles/jobs.py, imported as run.py imports it (its functions
    travel to the workers by value), and each stage's own seconds are recorded."""
    spec = importlib.util.spec_from_file_location("profile_runner",
                                                  ROOT / "profiles" / "run.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    runner.run_stages(toy, ["last"], cluster=cluster.scheduler_address)
    made = {"first", *(f"each@{m}" for m in MEMBERS), "last"}
    assert set(_lock(toy)["stages"]) == made
    seconds = runner.recorded_stage_seconds(toy, lambda tree, stage: True)
    assert set(seconds) == made and all(value >= 0 for value in seconds.values())
    runner.run_stages(toy, ["solo", "tally"], jobs=2)
    assert set(runner.recorded_stage_seconds(toy, lambda tree, stage: True)) == made | {
        "solo", "tally"}
    assert "up to date" in _dvc(toy, "status").stdout
