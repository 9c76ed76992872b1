"""Run a parameterised notebook with papermill, taking its parameters from params.yaml.

    python -m study.notebook NOTEBOOK OUTPUT [--section NAME] [-p NAME VALUE]...

Every key of ``params.yaml``'s section ``NAME`` becomes a notebook parameter (lists and
nested values included, which DVC cannot interpolate into a command line), then each
``-p NAME VALUE`` is added or overrides it; a VALUE is read as a YAML scalar (``3`` an int,
``1.0`` a float, ``abc`` a string). Every parameter must be a variable that the notebook's
``parameters`` cell defines: a typo would otherwise be injected silently and ignored. The
kernel is ``python3``, i.e. the interpreter running this module. The output folder is
created; a failing cell makes the command exit non-zero (papermill still writes the output
notebook with the traceback).

The kernel talks to papermill over Unix domain sockets (ZeroMQ's IPC transport) in a private
temporary folder, not over TCP on localhost: the kernel and its client are always on the
same machine, nothing else can connect to the sockets, and the kernel has no reason to
warn that its traffic is unencrypted.

What the kernel prints is streamed to this process's stdout and stderr as it runs. Its
progress bars (tqdm's text frames, refreshed at most every ``TQDM_MININTERVAL`` seconds,
default here 10, which keeps the executed notebook small) become one status line per stage
instead, e.g. ``stage 12/114 infer_private_topics@topics-1.0-0 topics/collapsed 150/300
[00:40<00:40]``: the stage's number in the pipeline's stage list (``dvc.yaml`` with its
``foreach``/``matrix`` stages expanded) when ``dvc repro`` runs it, else the notebook's name.
On a terminal the line is redrawn in place; in a log (not a terminal) each update is a line of
its own. The executed notebook keeps the bars as the kernel printed them.

The kernel computes with pinned numeric kernels (:mod:`study.cpu_pinning`: NumPy's baseline
loops and OpenBLAS's Haswell kernels on x86-64), so a stage gives the same digits on any CPU.

A clean end of the kernel is quiet: jupyter_client interrupts a kernel (SIGINT) before asking
it to shut down, and a kernel still finishing its last message logs ``KeyboardInterrupt
caught in kernel`` as an ERROR. Here the shutdown request goes first; only a kernel that has
not exited within ``QUIET_SHUTDOWN_SECONDS`` (one still running a cell, as after Ctrl-C) is
interrupted, as before, and its errors are printed as they are.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import yaml

from study.cpu_pinning import pin_numeric_kernels

PARAMS_FILE = "params.yaml"
PIPELINE_FILE = "dvc.yaml"
#: how long a kernel asked to shut down may take to exit before it is interrupted: an idle
#: kernel exits at once, but on a loaded machine (a test suite beside a paper-scale run) its
#: exit took more than 3 s, and a kernel interrupted while it exits prints ZeroMQ and asyncio
#: tracebacks; Ctrl-C and profiles/run.py's --stop-after signal the kernel's process group, so
#: a kernel that is still running a cell here is rare, and waits this long at most
QUIET_SHUTDOWN_SECONDS = 15.0
#: a tqdm text frame: ``desc: 50%|#####     | 150/300 [00:20<00:20,  7.3it/s, extra]``, or
#: ``desc: 150it [00:20,  7.3it/s]`` when the total is unknown
_TQDM_FRAME = re.compile(
    r"^(?:(?P<desc>.*?): ?)?(?:\s*\d+%\|[^|]*\| ?(?P<n>\d+)/(?P<total>\d+)|(?P<count>\d+)\w*)"
    r" \[(?P<elapsed>[\d:]+)(?:<(?P<remaining>[\d:?]+))?(?:,.*)?\]$")


#: the sections whose ``replicates`` name the privatized copies a study fits: each must be a
#: subset of ``privacy.replicates``, the copies the data owners make
FITTED_COPIES = ("topics", "network", "vi_topics")


def check_fitted_copies(settings: dict, source: str = PARAMS_FILE) -> None:
    """ValueError naming the setting when a study would fit a privatized copy that is never
    made (DVC would otherwise stop at that fit, after the earlier ones have run)."""
    made = set((settings.get("privacy") or {}).get("replicates") or [])
    for section in FITTED_COPIES:
        missing = sorted(set((settings.get(section) or {}).get("replicates") or []) - made)
        if missing:
            raise ValueError(f"{source}: {section}.replicates {missing} are not in "
                             f"privacy.replicates {sorted(made)}: those privatized copies are "
                             "never made")


#: the diagnose settings that name fits of the studies: (setting, the study's setting that must
#: hold them); the diagnosis reads the pipeline's own fit of each as its first chain
DIAGNOSED_FITS = (("level", ("privacy", "levels")), ("rep", ("topics", "replicates")),
                  ("rep", ("network", "replicates")), ("topic_methods", ("topics", "methods")),
                  ("network_methods", ("network", "methods")), ("C", ("network", "C")))


def check_settings(settings: dict, source: str = PARAMS_FILE, diagnosis: bool = True) -> None:
    """ValueError naming the setting when the studies' settings disagree:
    :func:`check_fitted_copies`, and with ``diagnosis`` (the diagnosis's stages, or a whole
    profile) a ``diagnose`` section that names a level, copy, method or C whose fit the
    studies never make (DVC would run the diagnosis's extra chains first, then stop at the
    missing fit). A run that never diagnoses need not keep that section in step."""
    check_fitted_copies(settings, source)
    diagnose = (settings.get("diagnose") or {}) if diagnosis else {}
    for key, (section, field) in DIAGNOSED_FITS:
        if key not in diagnose:
            continue
        named = diagnose[key] if isinstance(diagnose[key], list) else [diagnose[key]]
        made = (settings.get(section) or {}).get(field) or []
        missing = [value for value in named if value not in made]
        if missing:
            raise ValueError(f"{source}: diagnose.{key} {missing} not in {section}.{field} "
                             f"{made}: the diagnosis reads the studies' fit of each")


def parameter_names(notebook) -> set[str]:
    """The variables assigned in the notebook's single ``parameters``-tagged cell."""
    nb = json.loads(Path(notebook).read_text())
    cells = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{notebook}: {len(cells)} cells are tagged 'parameters'; need exactly one")
    names = set()
    for node in ast.parse("".join(cells[0]["source"])).body:
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def collect_parameters(notebook, section: str | None, overrides, params_file=PARAMS_FILE,
                       raw=()) -> dict:
    """Section values of ``params_file`` updated by ``(name, text)`` overrides (read as YAML
    scalars) and ``raw`` ones (kept as strings: a label such as ``"Mail: 2001"`` stays text),
    validated."""
    parameters = {}
    if section is not None:
        params = yaml.safe_load(Path(params_file).read_text()) or {}
        if section not in params or not isinstance(params[section], dict):
            raise ValueError(f"{params_file} has no section {section!r}")
        parameters.update(params[section])
    for name, text in overrides:
        parameters[name] = yaml.safe_load(text)
    for name, text in raw:
        parameters[name] = text
    unknown = set(parameters) - parameter_names(notebook)
    if unknown:
        raise ValueError(f"{notebook} has no parameter(s) {sorted(unknown)} in its parameters cell")
    return parameters


def stage_position(stage: str, root) -> tuple[int, int] | None:
    """The 1-based position of ``stage`` among the stages of ``root``'s ``dvc.yaml`` (its
    ``foreach``/``matrix`` stages expanded, in file order) and their number; None when DVC,
    the file or the stage cannot be read (a run outside the pipeline).

    Reading the stage list needs no lock, so a stage of a running ``dvc repro`` may call it.
    """
    try:
        from dvc.parsing import DataResolver
        from dvc.repo import Repo

        with Repo(os.fspath(root)) as repo:
            definition = yaml.safe_load(Path(repo.root_dir, PIPELINE_FILE).read_text())
            # the resolver alone: expanding the names is all that is needed, a fraction of
            # what resolving every stage (load_file(...).stages) costs
            names = list(DataResolver(repo, repo.root_dir, definition).get_keys())
    except Exception:  # noqa: BLE001 - the position is a nicety, never a reason to fail
        return None
    if stage not in names:
        return None
    return names.index(stage) + 1, len(names)


def stage_label(notebook, environ=os.environ) -> str:
    """``stage k/N name`` for a stage that ``dvc repro`` runs (``DVC_STAGE``, ``DVC_ROOT``),
    ``name`` alone if its position is unknown, else the notebook's file name."""
    stage = environ.get("DVC_STAGE")
    if not stage:
        return Path(notebook).name
    position = stage_position(stage, environ.get("DVC_ROOT", "."))
    return stage if position is None else f"stage {position[0]}/{position[1]} {stage}"


def progress_text(frame: str) -> str | None:
    """What a tqdm text frame says, shortly (``desc n/total [elapsed<remaining]``), or None
    for text that is no tqdm frame."""
    match = _TQDM_FRAME.match(frame.strip())
    if match is None:
        return None
    parts = [match["desc"]] if match["desc"] else []
    parts.append(f"{match['n']}/{match['total']}" if match["total"] else match["count"])
    timing = match["elapsed"] + (f"<{match['remaining']}" if match["remaining"] else "")
    return " ".join(parts) + f" [{timing}]"


class ProgressTerminal:
    """Where the kernel's output goes: text to this process's stdout and stderr, progress
    bars to one status line ``<label> <progress>`` (module docstring).

    ``stdout_file`` and ``stderr_file`` are the file-like objects to hand to papermill.
    """

    def __init__(self, label: str, stdout=None, stderr=None, *, live: bool | None = None):
        self.label = label
        self._out = stdout if stdout is not None else sys.stdout
        self._err = stderr if stderr is not None else sys.stderr
        self._live = self._err.isatty() if live is None else live
        self._shown = ""  # the status line on the screen (live mode)
        self._last = None
        self._pending = {"out": "", "err": ""}
        self._after_frame = {"out": False, "err": False}
        self.stdout_file = _KernelStream(self, "out")
        self.stderr_file = _KernelStream(self, "err")

    def start(self) -> None:
        self._status(self.label)

    def write(self, name: str, text: str) -> None:
        """Kernel text of stream ``name`` (``out`` or ``err``): whole lines pass through,
        tqdm frames (ended by ``\r`` or a line break, or complete as they stand) update the
        status line."""
        buffer = self._pending[name] + text
        passed = []
        pieces = re.split(r"(\r\n|\r|\n)", buffer)
        tail = pieces.pop()  # the text after the last line end: a frame, or an unfinished line
        for piece, end in zip(pieces[::2], pieces[1::2]):
            progress = progress_text(piece)
            if progress is not None:
                self._flush_passed(name, passed)
                self._status(f"{self.label} {progress}")
                self._after_frame[name] = True
            elif piece.strip():
                passed.append(piece + ("\n" if end != "\r" else ""))
                self._after_frame[name] = False
            elif end != "\r" and not self._after_frame[name]:
                passed.append("\n")  # an empty line; the line end of a bar (leave=True) and
                # tqdm's clearing of its bar (blanks and \r) are dropped
        progress = progress_text(tail)
        if progress is not None:
            self._flush_passed(name, passed)
            self._status(f"{self.label} {progress}")
            self._after_frame[name] = True
            tail = ""
        self._pending[name] = tail
        self._flush_passed(name, passed)

    def close(self) -> None:
        """Pass what is left of an unfinished line, and end the status line."""
        for name, rest in self._pending.items():
            if rest:
                self._flush_passed(name, [rest + "\n"])
        self._pending = {"out": "", "err": ""}
        if self._live and self._shown:
            self._err.write("\n")
            self._err.flush()
            self._shown = ""

    def _status(self, line: str) -> None:
        if line == self._last:
            return
        self._last = line
        if self._live:
            self._err.write(f"\r{line}\x1b[K")
            self._shown = line
        else:
            self._err.write(line + "\n")
        self._err.flush()

    def _flush_passed(self, name: str, passed: list) -> None:
        if not passed:
            return
        stream = self._out if name == "out" else self._err
        if self._live and self._shown:
            self._err.write("\r\x1b[K")  # clear the status line, print, then draw it again
            self._err.flush()
        stream.write("".join(passed))
        stream.flush()
        passed.clear()
        if self._live and self._shown:
            self._err.write(f"\r{self._shown}\x1b[K")
            self._err.flush()


class _KernelStream(io.TextIOBase):
    """A write-only text stream of one kernel stream into a :class:`ProgressTerminal`."""

    def __init__(self, terminal: ProgressTerminal, name: str):
        super().__init__()
        self._terminal, self._name = terminal, name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._terminal.write(self._name, text)
        return len(text)


def ipc_kernel_manager(socket_dir):
    """A ``jupyter_client`` kernel manager class whose kernels listen on IPC sockets.

    Parameters
    ----------
    socket_dir : path-like
        An existing folder for the kernel's socket files (short: Unix socket paths are
        limited to about 100 characters).

    Returns
    -------
    type
        A subclass of :class:`jupyter_client.AsyncKernelManager` (what nbclient expects).
    """
    from jupyter_client import AsyncKernelManager

    prefix = str(Path(socket_dir) / "kernel")

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            # the default IPC prefix is relative to the working directory (the repository)
            super().__init__(transport="ipc", ip=prefix, **kwargs)

        async def _async_interrupt_kernel(self) -> None:
            # jupyter_client interrupts every kernel before its shutdown request; a kernel
            # that is done with its cells exits on the request alone (module docstring)
            if self.shutting_down and self.has_kernel:
                await self._async_request_shutdown()
                try:
                    await asyncio.wait_for(self._async_wait(pollinterval=0.05),
                                           timeout=QUIET_SHUTDOWN_SECONDS)
                    return
                except asyncio.TimeoutError:
                    pass
            await super()._async_interrupt_kernel()

    return IPCKernelManager


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m study.notebook", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook")
    parser.add_argument("output")
    parser.add_argument("--section", help=f"a section of {PARAMS_FILE} to pass as parameters")
    parser.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="one more parameter (YAML scalar); repeatable")
    parser.add_argument("-r", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="one more parameter kept as a string (labels); repeatable")
    args = parser.parse_args(argv)
    if Path(PARAMS_FILE).is_file():
        try:
            # the diagnosis's stages: its notebook, and the extra chains it writes under chains/
            check_settings(yaml.safe_load(Path(PARAMS_FILE).read_text()) or {},
                           diagnosis=(args.section == "diagnose"
                                      or "chains" in Path(args.output).parts))
        except ValueError as err:
            print(err, file=sys.stderr)
            return 2
    parameters = collect_parameters(args.notebook, args.section, args.p, raw=args.r)

    import papermill  # imported late: it is slow, and --help should not wait for it

    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TQDM_MININTERVAL", "10")  # read by tqdm in the kernel it inherits to
    pin_numeric_kernels()  # the kernel then computes the same digits on every x86-64 CPU
    terminal = ProgressTerminal(stage_label(args.notebook))
    terminal.start()
    with tempfile.TemporaryDirectory(prefix="lpp-kernel-") as socket_dir:
        try:
            papermill.execute_notebook(args.notebook, args.output, parameters=parameters,
                                       kernel_name="python3", progress_bar=False,
                                       stdout_file=terminal.stdout_file,
                                       stderr_file=terminal.stderr_file,
                                       kernel_manager_class=ipc_kernel_manager(socket_dir))
        except papermill.PapermillExecutionError as err:
            terminal.close()
            print(f"{args.notebook} failed; see {args.output}\n{err}", file=sys.stderr)
            return 1
        finally:
            terminal.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
