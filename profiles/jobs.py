"""Run the stages of a DVC pipeline several at a time, on this machine or on a Dask cluster,
recording each in ``dvc.lock`` as ``dvc repro`` does.

    python profiles/jobs.py --jobs 4                          # ./dvc.yaml, 4 stages at a time
    python profiles/jobs.py --repo ../lpp-paper --jobs 2 report_topics   # it and what it needs
    python profiles/jobs.py --single-item --jobs 2 report_topics report_network
    python profiles/jobs.py --cluster tcp://SCHEDULER:8786 infer_private_topics
    python profiles/jobs.py --jobs 2 --stop-after 2h45m       # stop cleanly before a job's end
    python profiles/run.py --jobs 4                           # a profile's stages (run.py)

``dvc repro`` runs one stage at a time, and two of them do not share a work tree well: each
takes the repository's lock to plan and to record a stage (a second one that cannot take it
within seconds fails) and DVC's read/write lock of a running stage's paths, which the stages
upstream of both targets share. Here the pipeline is DVC's own, read with
DVC's Python API: its stage graph (foreach members and all), each stage's commands, what is up
to date; nothing describes it a second time. A stage is *ready* when every stage it depends on
is done (up to date, or run here), and ready stages run at the same time, each as DVC runs it:
its command lines one after another through ``$SHELL -c`` in its ``wdir``, with ``DVC_ROOT``
and ``DVC_STAGE`` set (DVC's own helpers build the command), but in a process group of its own,
its output written to ``.dvc/tmp/jobs/<stage>.log`` rather than to the terminal. Everything
that reads or writes DVC's records happens in this process, one stage at a time, under the
repository's lock, with DVC's own calls in the order ``dvc repro`` makes them for a stage
(``Stage.reproduce``, ``Stage.run``):

1. when a stage is ready it is skipped if it did not change (``Stage.changed``: its command,
   params, dependencies' and outputs' hashes against its ``dvc.lock`` entry);
2. its outputs that are not ``persist`` are removed (``Stage.remove_outs``), then it is checked
   out of DVC's run cache where DVC has this very run cached, else its dependencies are hashed;
3. its command runs (beside the others'); meanwhile DVC's read/write lock holds its
   dependencies and outputs, so a ``dvc repro`` started beside this run does not touch them;
4. once it exits 0: ``Stage.save`` (the run cache too, unless an output is uncached, as
   ``dvc repro`` does), ``Stage.commit``, ``Stage.dump``, i.e. the same ``dvc.lock`` entry
   (params, command, the hashes of every dependency and output) as ``dvc repro``'s.

Step 4 is not ``dvc commit --force STAGE``, which writes the same lock entry but also puts a
stage's uncached (``cache: false``) outputs into the cache and the run cache, as ``dvc repro``
does not. The calls above are DVC 3.67's (``requirements.lock``), some of them internal
(``dvc.stage.run``'s command helpers, ``lock_repo``, ``get_active_graph``); the tests compare
a run with ``dvc repro``'s lock, cache and run cache, so a DVC that changed them fails there.

Stages with no command of their own (a ``.dvc`` data source, an import) and frozen stages are
reproduced by DVC itself in this process when they are ready (``Stage.reproduce``); they run no
command. Stages are started in the order they are named, each after what it needs.

A stage that fails is not recorded; the stages that depend on it are skipped and the others run
on (``dvc repro --keep-going``); the run then ends with :class:`StagesFailed` (exit status 1),
naming both, and the tail of the failed stage's log is printed. Ctrl-C sends SIGINT to the
process group of each running stage, what the terminal sends a stage under ``dvc repro`` (a
notebook's fit writes its checkpoint and stops), waits for them to exit (a second Ctrl-C, or
:data:`STOP_GRACE_SECONDS`, kills them), records those that finished and stops (exit status
130). A later run skips the stages that are done and reruns those cut short, whose fits
continue from their checkpoints (:mod:`study.checkpoints`: the checkpoint folder is not an
output, so removing the outputs leaves it). ``--stop-after DURATION`` does the same once that
much time has passed (exit status 124): a batch job whose allocation ends stops its stages
while their fits can still write their checkpoints, instead of being killed between two.

Threads: with ``--jobs N`` each stage gets ``NUMBA_NUM_THREADS`` (and ``OMP_NUM_THREADS``,
``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``) of ``--threads-per-job`` or, by default, this
machine's CPUs divided by N, so N stages do not each start a thread per core.

``--cluster ADDRESS`` submits each ready stage's command to the Dask scheduler at ``ADDRESS``
(one task per stage; the cluster's workers decide how many run at once, one per worker thread,
so ``--jobs`` does not apply). Only the command runs on a worker: the checks and the records
above stay in this process. The workers must see the work tree at the same path (a shared file
system; checked before anything runs) and run the same environment (the stage's ``python`` is
the worker's). A stage's threads are ``--threads-per-job`` where given, else the worker's own
``NUMBA_NUM_THREADS`` (``NUMBA_NUM_THREADS=<cores> dask worker ADDRESS --nthreads 1``, as in
docs/scale_out.md, runs one stage at a time on all of a machine's cores), else the worker's
number of threads.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# imported where they are used, not here: Dask and cloudpickle (lpp[distributed]; only
# --cluster needs them), DVC's internals and networkx (about a second to import; only the
# scheduler's runs use them, and profiles/run.py imports this module at every start, a
# serial run included)

#: the variables that size a stage's thread pools (numba's, OpenMP's, MKL's, OpenBLAS's)
THREAD_VARIABLES = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "OPENBLAS_NUM_THREADS")
#: where each stage's output goes, under the repository's ``.dvc/tmp``
LOG_FOLDER = "jobs"
#: seconds a stage may take to exit after SIGINT before its process group is killed
STOP_GRACE_SECONDS = 120.0
#: what to do after a time limit or Ctrl-C, printed by this script and by ``run.py``
CONTINUE_HINT = "run again to continue (DVC skips the stages that are done)"
#: how often a waiting loop looks at its stages, in seconds
POLL_SECONDS = 0.1
#: lines of a failed stage's log printed
TAIL_LINES = 20
#: seconds to connect to a Dask scheduler
CONNECT_SECONDS = 10
#: the exit status of a run stopped by Ctrl-C
INTERRUPTED = 130
#: the exit status of a run stopped at its time limit (``--stop-after``), as ``timeout``'s
TIME_LIMIT = 124


class StagesFailed(RuntimeError):
    """Stages failed (``failed``: stage -> why) and their dependants did not run (``skipped``:
    stage -> the failed stage it needs)."""

    def __init__(self, failed: dict[str, str], skipped: dict[str, str]):
        self.failed, self.skipped = dict(failed), dict(skipped)
        lines = [f"stage {stage} failed: {why}" for stage, why in self.failed.items()]
        if self.skipped:
            lines.append("not run, as they depend on a failed stage: " + ", ".join(
                f"{stage} (needs {needs})" for stage, needs in self.skipped.items()))
        super().__init__("\n".join(lines))


class TimeLimitReached(RuntimeError):
    """The run reached its time limit: the running stages were stopped as Ctrl-C stops them
    (their fits wrote their checkpoints), those that finished were recorded, the others did not
    start. A later run continues."""


def parse_duration(text: str) -> float:
    """Seconds in ``text``: a number of seconds (``5400``), or hours, minutes and seconds with
    their units (``2h30m``, ``90m``, ``45s``, ``1.5h``)."""
    value = str(text).strip().lower()
    try:
        seconds = float(value)
    except ValueError:
        parts = re.fullmatch(r"(?:(\d+(?:\.\d*)?)h)?(?:(\d+(?:\.\d*)?)m)?(?:(\d+(?:\.\d*)?)s)?",
                             value)
        if not value or parts is None:
            raise ValueError(f"not a duration: {text!r} (seconds, or e.g. 2h30m, 90m, 45s)") \
                from None
        hours, minutes, secs = (float(part or 0) for part in parts.groups())
        seconds = 3600 * hours + 60 * minutes + secs
    if not seconds > 0:
        raise ValueError(f"a time limit must be positive, got {text!r}")
    return seconds


def duration_argument(text: str) -> float:
    """:func:`parse_duration` for argparse (its message, not argparse's own)."""
    try:
        return parse_duration(text)
    except ValueError as bad:
        raise argparse.ArgumentTypeError(str(bad)) from None


def available_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def thread_environment(threads: int) -> dict[str, str]:
    """The variables that give a stage ``threads`` threads (:data:`THREAD_VARIABLES`)."""
    return dict.fromkeys(THREAD_VARIABLES, str(int(threads)))


def log_file(root: Path, stage: str) -> Path:
    """Where the output of ``stage`` (an address such as ``infer@a-1``) goes."""
    return Path(root) / ".dvc" / "tmp" / LOG_FOLDER / (re.sub(r"[^\w@.,=+-]", "_", stage)
                                                       + ".log")


def log_tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of a log ('' where there is none)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


# ---------------------------------------------------------------------------------------------
# one stage's command, here or on a worker
# ---------------------------------------------------------------------------------------------

def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _group_members(pgid: int):
    """``{pid: (start time, executable)}`` of the processes in process group ``pgid``, from
    ``/proc`` (None where there is no ``/proc``)."""
    members = {}
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:  # it has ended
            continue
        # after the command name: state, ppid, pgrp, ... starttime is field 22 of the line
        if int(fields[2]) == pgid and fields[0] != b"Z":
            try:  # a fork that execs later is another program: it needs its own signal
                image = os.readlink(f"/proc/{pid}/exe")
            except OSError:
                image = None
            members[int(pid)] = (int(fields[19]), image)
    return members


def _wait(proc, stop, kill, grace: float, poll: float) -> int:
    """``proc``'s exit status; SIGINT to its process group once ``stop()`` says so, SIGKILL
    once ``kill()`` does or ``grace`` seconds after SIGINT.

    A line runs as ``sh -c LINE``, and dash takes a SIGINT that arrives while it starts up
    and then starts its command all the same, which never sees the signal: so a process that
    joins the group, or execs another program, after the signal gets SIGINT of its own
    (where ``/proc`` lists the group).
    """
    interrupted_at = None
    signalled = None  # the group's processes that have had SIGINT
    while True:
        try:
            status = proc.wait(timeout=poll)
            break
        except subprocess.TimeoutExpired:
            pass
        if kill() or (interrupted_at is not None
                      and time.monotonic() - interrupted_at > grace):
            _signal_group(proc.pid, signal.SIGKILL)
        elif interrupted_at is None and stop():
            signalled = _group_members(proc.pid)
            _signal_group(proc.pid, signal.SIGINT)
            interrupted_at = time.monotonic()
        elif signalled is not None:
            for pid, process in (_group_members(proc.pid) or {}).items():
                if signalled.get(pid) != process:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGINT)
                    signalled[pid] = process
    if interrupted_at is not None:  # what the stage left running in its group goes with it
        _signal_group(proc.pid, signal.SIGKILL)
    return status


#: a command line's prefix that puts SIGINT back to its default action, then runs the line
_DEFAULT_SIGINT = (sys.executable, "-c", "import os, signal, sys; "
                   "signal.signal(signal.SIGINT, signal.SIG_DFL); "
                   "os.execvp(sys.argv[1], sys.argv[1:])")


def _hearing_sigint(argv: list[str]) -> list[str]:
    """``argv``, started so that SIGINT reaches it. A process started in the background by a
    non-interactive shell (``nohup python profiles/run.py ... &``) ignores SIGINT, and an
    ignored signal stays ignored across fork and exec: every line it started would be deaf to
    the stop, and killed at the end of the grace period instead of writing its checkpoint."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return [*_DEFAULT_SIGINT, *argv]
    return argv


def run_command(command: dict, stop=None, kill=None, grace: float = STOP_GRACE_SECONDS,
                poll: float = POLL_SECONDS) -> dict:
    """Run a stage's command lines (``command``: ``stage``, ``argvs``, ``cwd``, ``env`` the
    variables added to this process's environment, ``log``) one after another, each in a
    process group of its own, their output to the log, up to the first that fails.

    ``stop()`` and ``kill()`` are asked every ``poll`` seconds: once ``stop()`` is true the
    running line gets SIGINT (no further line starts), once ``kill()`` is true, or ``grace``
    seconds after SIGINT, SIGKILL. Returns ``rc`` (0, a line's exit status, minus the signal
    that ended it, or None when stopped before a line started), ``seconds`` and ``host``."""
    stop = stop or (lambda: False)
    kill = kill or (lambda: False)
    env = {**os.environ, **command["env"]}
    log = Path(command["log"])
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rc = 0
    with open(log, "wb") as out:
        for argv in command["argvs"]:
            if stop():
                rc = None
                break
            out.write(f"> {argv[-1]}\n".encode())
            out.flush()
            proc = subprocess.Popen(_hearing_sigint(argv), cwd=command["cwd"], env=env,
                                    stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, close_fds=True,
                                    start_new_session=True)
            rc = _wait(proc, stop, kill, grace, poll)
            if rc != 0:
                break
    return {"rc": rc, "seconds": time.perf_counter() - start, "host": socket.gethostname()}


def _run_on_worker(command: dict, stop_event: str, kill_event: str, threads) -> dict:
    """:func:`run_command` as a Dask task: Ctrl-C reaches it through two named Dask events,
    looked at once a second; ``threads`` (None: the worker's ``NUMBA_NUM_THREADS``, else its
    number of threads) sizes the stage's thread pools."""
    from dask.distributed import Event, get_worker  # noqa: PLC0415

    if threads is None and "NUMBA_NUM_THREADS" not in os.environ:
        threads = get_worker().state.nthreads
    env = {**command["env"], **(thread_environment(threads) if threads else {})}
    stop, kill = Event(stop_event), Event(kill_event)
    return run_command({**command, "env": env}, stop=stop.is_set, kill=kill.is_set, poll=1.0)


class _Local:
    """Stages as subprocesses of this machine, ``jobs`` at a time, ``threads`` each."""

    def __init__(self, jobs: int, threads: int):
        self.slots, self.threads = jobs, threads
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="stage")
        self._stop, self._kill = threading.Event(), threading.Event()

    #: what is said of a stage handed to :meth:`submit`
    started = "start"

    def describe(self) -> str:
        return f"{self.slots} at a time, {_threads(self.threads)} each"

    def submit(self, command: dict):
        command = {**command, "env": {**command["env"], **thread_environment(self.threads)}}
        return self._pool.submit(run_command, command, self._stop.is_set, self._kill.is_set)

    def stop(self) -> None:
        self._stop.set()

    def kill(self) -> None:
        self._kill.set()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class _Cluster:
    """Stages as tasks of a Dask cluster whose workers share this work tree."""

    slots = None  # the workers' threads decide
    started = "queued on the cluster:"

    def __init__(self, address, threads, root: Path):
        from dask.distributed import Client, Event  # noqa: PLC0415

        self.threads = threads
        self.client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        try:
            token = uuid.uuid4().hex
            self._stop = Event(f"lpp-jobs-stop-{token}", client=self.client)
            self._kill = Event(f"lpp-jobs-kill-{token}", client=self.client)
            unseen = sorted(worker for worker, seen in self.client.run(
                os.path.isdir, str(root / ".dvc")).items() if not seen)
            if unseen:
                raise RuntimeError(f"the workers {unseen} do not see the work tree {root}: "
                                   "--cluster needs the workers to share its file system")
        except BaseException:
            self.client.close()
            raise

    def describe(self) -> str:
        workers = self.client.nthreads()
        threads = (f"{_threads(self.threads)} each" if self.threads else
                   "threads: the workers' NUMBA_NUM_THREADS, else their number of threads")
        return f"on the Dask cluster at {self.client.scheduler.address} " \
               f"({len(workers)} workers; {threads})"

    def submit(self, command: dict):
        return self.client.submit(_ByValue(_run_on_worker), command, self._stop.name,
                                  self._kill.name, self.threads, pure=False,
                                  key=f"stage-{command['stage']}-{uuid.uuid4().hex[:8]}")

    def stop(self) -> None:
        self._stop.set()

    def kill(self) -> None:
        self._kill.set()

    def close(self) -> None:
        self.client.close()


def _threads(n: int) -> str:
    return f"{n} thread{'s' if n != 1 else ''}"


class _ByValue:
    """``function``, pickled by value: this file is no installed package's module, so a
    worker could not import it by name (Dask pickles a task's function by reference where it
    can)."""

    def __init__(self, function):
        self.function = function

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def __reduce__(self):
        import cloudpickle  # noqa: PLC0415

        module = sys.modules.get(self.function.__module__)
        if module is not None and module.__name__ != "__main__":  # __main__'s go by value
            cloudpickle.register_pickle_by_value(module)
        return cloudpickle.loads, (cloudpickle.dumps(self.function),)


# ---------------------------------------------------------------------------------------------
# the schedule
# ---------------------------------------------------------------------------------------------

def plan(graph, targets, single_item: bool = False):
    """``(order, needs)``: the stages to consider, ``targets`` first to last each after the
    stages it needs (all of them, unless ``single_item``: the targets alone), and for each the
    stages of the plan it needs. ``graph`` is DVC's: an edge from a stage to one it needs."""
    import networkx as nx  # noqa: PLC0415

    order = []
    for target in targets:
        for stage in ([target] if single_item else nx.dfs_postorder_nodes(graph, target)):
            if stage not in order:
                order.append(stage)
    chosen = set(order)
    needs = {stage: {up for up in graph.successors(stage) if up in chosen} for stage in order}
    return order, needs


class _Dvc:
    """The DVC side of a run: every call under the repository lock, one at a time."""

    def __init__(self, root: Path):
        from dvc.repo import Repo  # noqa: PLC0415

        self.repo = Repo(str(root), _wait_for_lock=True)  # as `dvc --wait-for-lock`
        self._held = {}

    def close(self) -> None:
        for stage in list(self._held):
            self.release(stage)
        self.repo.close()

    def locked(self):
        from dvc.repo import lock_repo  # noqa: PLC0415

        return lock_repo(self.repo)

    def graph_and_targets(self, targets):
        """DVC's stage graph (frozen stages cut from what they need, as ``dvc repro`` does)
        and the stages ``targets`` name (a foreach group names its members; none: all)."""
        from dvc.repo.reproduce import get_active_graph  # noqa: PLC0415

        with self.locked():
            graph = get_active_graph(self.repo.index.graph)
            nodes = {stage: stage for stage in graph}
            named = {stage.addressing: stage for stage in graph}
            chosen = []
            for target in targets or named:
                # a stage's or a group's name is looked up here (DVC's collect parses the
                # pipeline again for each target, over half a second each in the study's)
                stages = ([named[target]] if target in named else
                          [stage for name, stage in named.items()
                           if name.startswith(target + "@")]
                          or [nodes.get(stage, stage) for stage in self.repo.stage.collect(target)])
                chosen.extend(stage for stage in stages if stage not in chosen)
        return graph, chosen

    @staticmethod
    def runs_here(stage) -> bool:
        """Whether DVC reproduces ``stage`` in this process (no command of its own, frozen,
        an import) instead of its command running as a job."""
        return not stage.cmd or stage.frozen or stage.is_import

    def reproduce(self, stage, upstream) -> bool:
        """``dvc repro --single-item`` of ``stage`` in this process; whether it changed."""
        with self.locked():
            done = stage.reproduce(upstream=upstream)
            if done:
                stage.dump(update_pipeline=False)
        return bool(done)

    def changed(self, stage, upstream) -> bool:
        with self.locked():
            return stage.changed(upstream=upstream)

    def prepare(self, stage):
        """Make ready to run ``stage``: hold its paths, remove its outputs, check it out of
        the run cache where DVC has this run cached. The command to run, or None where the
        run cache restored it (then :meth:`record` it)."""
        from dvc.stage.cache import RunCacheNotFoundError  # noqa: PLC0415
        from dvc.stage.run import (  # noqa: PLC0415
            _enforce_cmd_list,
            _make_cmd,
            get_executable,
            prepare_kwargs,
        )

        with self.locked():
            self.hold(stage)
            stage.remove_outs(ignore_remove=False, force=False)
            try:
                self.repo.stage_cache.restore(stage)
                return None
            except RunCacheNotFoundError:
                stage.save_deps()
            kwargs = prepare_kwargs(stage)
        env = {key: value for key, value in kwargs["env"].items()
               if os.environ.get(key) != value}  # DVC_ROOT, DVC_STAGE
        argvs = [_make_cmd(get_executable(), line) for line in _enforce_cmd_list(stage.cmd)]
        return {"stage": stage.addressing, "argvs": argvs, "cwd": kwargs["cwd"], "env": env,
                "log": str(log_file(self.repo.root_dir, stage.addressing))}

    def record(self, stage) -> None:
        """What ``dvc repro`` does once a stage's command succeeded: save it (the run cache
        unless an output is uncached), commit its outputs to the cache, write its lock entry."""
        with self.locked():
            no_cache_outs = any(not out.use_cache for out in stage.outs
                                if not (out.is_metric or out.is_plot))
            stage.save(allow_missing=False, run_cache=not no_cache_outs)
            stage.commit(allow_missing=False)
            stage.dump(update_pipeline=False)
        self.release(stage)

    def hold(self, stage) -> None:
        """Take DVC's read/write lock of ``stage``'s dependencies and outputs, as ``dvc
        repro`` holds it while a stage runs (with the same owner, this process and its command
        line, so that DVC's own calls on the stage pass)."""
        from dvc.dependency.db import AbstractDependency  # noqa: PLC0415
        from dvc.dependency.repo import RepoDependency  # noqa: PLC0415
        from dvc.rwlock import rwlock  # noqa: PLC0415

        held = contextlib.ExitStack()
        held.enter_context(rwlock(
            self.repo.tmp_dir, self.repo.fs, " ".join(sys.argv),
            [dep.fs_path for dep in stage.deps
             if not isinstance(dep, (RepoDependency, AbstractDependency))],
            [out.fs_path for out in stage.outs],
            self.repo.config["core"].get("hardlink_lock", False)))
        self._held[stage] = held

    def release(self, stage) -> None:
        held = self._held.pop(stage, None)
        if held is not None:
            held.close()


class _Run:
    """One run of the scheduler: what is pending, running, done, failed."""

    def __init__(self, dvc: _Dvc, runner, order, needs, graph, on_done, out, deadline=None,
                 on_stopped=None):
        self.dvc, self.runner, self.graph = dvc, runner, graph
        self.deadline = deadline  # time.monotonic() at which to stop, or None
        self.timed_out = False
        self.needs = needs
        self.on_done, self.on_stopped, self.out = on_done, on_stopped, out
        self.pending = list(order)
        self.done = set()
        self.running = {}  # future -> (stage, command)
        self.failed, self.skipped, self.seconds = {}, {}, {}
        self.up_to_date = []
        self.stopping = False

    # -- launching --------------------------------------------------------------------------
    def launch_ready(self) -> None:
        progress = True
        while progress and not self.stopping:
            progress = False
            for stage in list(self.pending):
                if self.stopping:
                    return
                if not self.needs[stage] <= self.done:
                    continue
                if self.runner.slots is not None and len(self.running) >= self.runner.slots:
                    return
                progress = True
                self.pending.remove(stage)
                try:
                    self._start(stage)
                except Exception as exc:  # noqa: BLE001 (DVC refused: like a failed command)
                    self.dvc.release(stage)
                    self._fail(stage, f"{type(exc).__name__}: {exc}")

    def _start(self, stage) -> None:
        name = stage.addressing
        upstream = list(self.graph.successors(stage))
        if self.dvc.runs_here(stage):
            if self.dvc.reproduce(stage, upstream):
                self.out(f"reproduced by DVC: {name}")
            else:
                self.up_to_date.append(name)
            self.done.add(stage)
            return
        if not self.dvc.changed(stage, upstream):
            self.up_to_date.append(name)
            self.out(f"up to date: {name}")
            self.done.add(stage)
            return
        command = self.dvc.prepare(stage)
        if command is None:
            self.dvc.record(stage)
            self.out(f"restored from DVC's run cache: {name}")
            self.done.add(stage)
            return
        future = self.runner.submit(command)
        self.running[future] = (stage, command)
        self.out(f"{self.runner.started} {name} (log {os.path.relpath(command['log'])})")

    # -- finishing --------------------------------------------------------------------------
    def collect_finished(self) -> bool:
        finished = [future for future in self.running if future.done()]
        for future in finished:
            stage, command = self.running.pop(future)
            self._finish(stage, command, future)
        return bool(finished)

    def _finish(self, stage, command, future) -> None:
        name = stage.addressing
        try:
            result = future.result()
        except Exception as exc:  # noqa: BLE001 (the task failed: a lost worker, no folder)
            self.dvc.release(stage)
            self._fail(stage, f"{type(exc).__name__}: {exc}")
            return
        rc, seconds = result["rc"], result["seconds"]
        if rc == 0:
            try:
                self.dvc.record(stage)
            except Exception as exc:  # noqa: BLE001 (reported as the stage's failure)
                self.dvc.release(stage)
                self._fail(stage, f"its command succeeded but DVC did not record it: "
                                  f"{type(exc).__name__}: {exc}")
                return
            self.done.add(stage)
            self.seconds[name] = seconds
            self.out(f"done {name}: {seconds:.1f} s (exit 0)")
            if self.on_done is not None:
                self.on_done(name, seconds)
            return
        self.dvc.release(stage)
        if rc is None:
            self.out(f"not started: {name}")
            return
        why = f"exit {rc}" if rc > 0 else f"signal {signal.Signals(-rc).name}"
        if self.stopping:
            self.out(f"stopped {name} after {seconds:.1f} s ({why})")
            if self.on_stopped is not None:
                self.on_stopped(name, seconds)
            return
        tail = log_tail(command["log"])
        self.out(f"FAILED {name}: {seconds:.1f} s ({why}); the end of {command['log']}:\n"
                 + "\n".join("    " + line for line in tail.splitlines()))
        self._fail(stage, f"{why}, log {command['log']}")

    def _fail(self, stage, why: str) -> None:
        import networkx as nx  # noqa: PLC0415

        self.failed[stage.addressing] = why
        dependants = nx.ancestors(self.graph, stage)  # edges point at what a stage needs
        for other in list(self.pending):
            if other in dependants:
                self.pending.remove(other)
                self.skipped[other.addressing] = stage.addressing
                self.out(f"skipped {other.addressing}: it needs {stage.addressing}")

    # -- the loop ---------------------------------------------------------------------------
    def loop(self) -> None:
        """Start the ready stages and record the finished ones until none is left to run,
        or until Ctrl-C or the deadline (then :meth:`stop`)."""
        while not self.stopping:
            if self.deadline is not None and time.monotonic() >= self.deadline:
                self.stopping = self.timed_out = True
                return
            self.launch_ready()
            if not self.running:
                return
            if not self.collect_finished():
                time.sleep(POLL_SECONDS)

    def stop(self, kill: bool = False) -> None:
        """Ctrl-C: SIGINT to the running stages (SIGKILL with ``kill``); wait for them (a
        second Ctrl-C kills them)."""
        self.stopping = True
        self.runner.stop()
        if kill:
            self.runner.kill()
        names = ", ".join(stage.addressing for stage, _ in self.running.values())
        if names:
            why = "time limit reached" if self.timed_out else "interrupted"
            self.out(f"{why}: {'SIGKILL' if kill else 'SIGINT'} sent to {names}; "
                     "waiting for them to stop" + ("" if kill else " (Ctrl-C again kills them)"))
        try:
            while self.running:
                if not self.collect_finished():
                    time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            self.out("killing the running stages")
            self.runner.kill()
            while self.running:
                if not self.collect_finished():
                    time.sleep(POLL_SECONDS)


@contextlib.contextmanager
def _first_interrupt_sets(flag_owner):
    """While inside: the first SIGINT sets ``flag_owner.stopping`` (so that DVC's calls of
    the moment finish), the next raises KeyboardInterrupt. Only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if flag_owner.stopping:
            raise KeyboardInterrupt
        flag_owner.stopping = True

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_pipeline(root, targets=None, *, single_item: bool = False, jobs: int = 1,
                 cluster=None, threads_per_job: int | None = None, on_done=None,
                 out=None, stop_after: float | None = None,
                 on_stopped=None) -> dict[str, float]:
    """Reproduce ``targets`` (stage names, a foreach group's name for all its members, DVC
    file paths; none: the whole pipeline) in the DVC repository ``root`` and what they need
    (only them with ``single_item``), ``jobs`` stages at a time or on the Dask cluster at
    ``cluster`` (a scheduler's address, or a Cluster). ``on_done(stage, seconds)`` is called as
    each stage's run is recorded, ``on_stopped(stage, seconds)`` as a running stage is stopped
    (Ctrl-C, the time limit) so that a later run can add that piece to its time; ``out(line)``
    prints progress. Returns the seconds of each stage that ran. Raises :class:`StagesFailed`
    after a failure, KeyboardInterrupt after Ctrl-C (once the running stages stopped).

    ``stop_after`` (seconds from the call) is a time limit, e.g. a batch job's: once it has
    passed no stage starts, the running ones are stopped as Ctrl-C stops them and
    :class:`TimeLimitReached` is raised once they have (they get up to
    :data:`STOP_GRACE_SECONDS`, so leave that much and the time to write a checkpoint before
    the job's end)."""
    deadline = None if stop_after is None else time.monotonic() + stop_after
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if cluster is not None and jobs != 1:
        raise ValueError("jobs and cluster exclude each other: a cluster's workers decide how "
                         "many stages run at once")
    if threads_per_job is not None and threads_per_job < 1:
        raise ValueError(f"threads_per_job must be at least 1, got {threads_per_job}")
    if stop_after is not None and not stop_after > 0:
        raise ValueError(f"stop_after must be a positive number of seconds, got {stop_after}")
    out = out or (lambda line: print(line, flush=True))
    root = Path(root).resolve()
    with contextlib.chdir(root):  # DVC names stages and reads targets relative to it
        return _run_pipeline(root, targets, single_item, jobs, cluster, threads_per_job,
                             on_done, out, deadline, on_stopped)


def _run_pipeline(root, targets, single_item, jobs, cluster, threads_per_job, on_done, out,
                  deadline, on_stopped=None):
    dvc = _Dvc(root)
    runner = None
    try:
        graph, chosen = dvc.graph_and_targets(list(targets or []))
        order, needs = plan(graph, chosen, single_item)
        if cluster is not None:
            address = getattr(cluster, "scheduler_address", cluster)
            runner = _Cluster(address, threads_per_job, root)
        else:
            runner = _Local(jobs, threads_per_job or max(1, available_cpus() // jobs))
        run = _Run(dvc, runner, order, needs, graph, on_done, out, deadline, on_stopped)
        out(f"{len(order)} stages, {runner.describe()}")
        with dvc.repo.scm_context(), _first_interrupt_sets(run):
            twice = False
            try:
                run.loop()
            except KeyboardInterrupt:  # the handler raises on a second Ctrl-C only
                twice, run.stopping = run.stopping, True
            except BaseException:  # no stage is left running unattended
                run.stop()
                raise
            if run.stopping:
                run.stop(kill=twice)
    finally:
        if runner is not None:
            runner.close()
        dvc.close()
    ran = len(run.seconds)
    out(f"{ran} stages ran, {len(run.up_to_date)} were up to date"
        + (f", {len(run.failed)} failed, {len(run.skipped)} skipped" if run.failed else "")
        + (f", {len(run.pending)} not started" if run.stopping else ""))
    if run.failed:
        raise StagesFailed(run.failed, run.skipped)
    if run.timed_out:
        raise TimeLimitReached(f"stopped at the time limit; {len(run.pending)} stages did not "
                               "start")
    if run.stopping:
        raise KeyboardInterrupt
    return run.seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="stages (a foreach group: its members); "
                        "none: every stage")
    parser.add_argument("--repo", type=Path, default=Path.cwd(),
                        help="the DVC repository (default: the working directory)")
    parser.add_argument("--single-item", action="store_true",
                        help="only the targets, not the stages they need")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="stages at a time")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the stages' commands on this Dask scheduler's workers")
    parser.add_argument("--threads-per-job", type=int, default=None)
    parser.add_argument("--stop-after", type=duration_argument, default=None, metavar="DURATION",
                        help="stop the running stages as Ctrl-C does once this much time has "
                             "passed (seconds, or e.g. 2h30m): a batch job's limit less "
                             f"{STOP_GRACE_SECONDS:.0f} s for them to stop")
    args = parser.parse_args(argv)
    if args.cluster and args.jobs != 1:
        parser.error("--cluster and --jobs exclude each other: the cluster's workers decide "
                     "how many stages run at once")
    try:
        run_pipeline(args.repo, args.targets, single_item=args.single_item, jobs=args.jobs,
                     cluster=args.cluster, threads_per_job=args.threads_per_job,
                     stop_after=args.stop_after)
    except StagesFailed as failed:
        print(failed, file=sys.stderr, flush=True)
        return 1
    except TimeLimitReached as stopped:
        print(f"{stopped}: {CONTINUE_HINT}", file=sys.stderr, flush=True)
        return TIME_LIMIT
    except KeyboardInterrupt:
        print(f"interrupted: {CONTINUE_HINT}", file=sys.stderr, flush=True)
        return INTERRUPTED
    return 0


if __name__ == "__main__":
    sys.exit(main())
