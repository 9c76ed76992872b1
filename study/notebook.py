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

What the kernel prints (progress bars included) is streamed to this process's stdout and
stderr as it runs, so a long stage under ``dvc repro`` reports its progress in the terminal;
progress bars refresh at most every ``TQDM_MININTERVAL`` seconds (default here: 10), which
keeps the executed notebook small.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import tempfile
from pathlib import Path

import yaml

PARAMS_FILE = "params.yaml"


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


def collect_parameters(notebook, section: str | None, overrides, params_file=PARAMS_FILE) -> dict:
    """Section values of ``params_file`` updated by ``(name, text)`` overrides, validated."""
    parameters = {}
    if section is not None:
        params = yaml.safe_load(Path(params_file).read_text()) or {}
        if section not in params or not isinstance(params[section], dict):
            raise ValueError(f"{params_file} has no section {section!r}")
        parameters.update(params[section])
    for name, text in overrides:
        parameters[name] = yaml.safe_load(text)
    unknown = set(parameters) - parameter_names(notebook)
    if unknown:
        raise ValueError(f"{notebook} has no parameter(s) {sorted(unknown)} in its parameters cell")
    return parameters


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

    return IPCKernelManager


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m study.notebook", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook")
    parser.add_argument("output")
    parser.add_argument("--section", help=f"a section of {PARAMS_FILE} to pass as parameters")
    parser.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="one more parameter (YAML scalar); repeatable")
    args = parser.parse_args(argv)
    parameters = collect_parameters(args.notebook, args.section, args.p)

    import papermill  # imported late: it is slow, and --help should not wait for it

    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TQDM_MININTERVAL", "10")  # read by tqdm in the kernel it inherits to
    with tempfile.TemporaryDirectory(prefix="lpp-kernel-") as socket_dir:
        try:
            papermill.execute_notebook(args.notebook, args.output, parameters=parameters,
                                       kernel_name="python3", progress_bar=False,
                                       stdout_file=sys.stdout, stderr_file=sys.stderr,
                                       kernel_manager_class=ipc_kernel_manager(socket_dir))
        except papermill.PapermillExecutionError as err:
            print(f"{args.notebook} failed; see {args.output}\n{err}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
