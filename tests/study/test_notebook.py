"""The notebook runner, end to end on a tiny data set: privatize, then infer privately.

Also checks the privacy boundary on real outputs and runs: nothing a private method writes holds
the true counts, and the analyst's notebook opens none of their files; and, on a tiny notebook,
the terminal's progress line and a quiet kernel shutdown.
"""
import asyncio
import io
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import nbformat
import numpy as np
import pytest
import yaml
from dvc.repo import Repo
from jupyter_client import AsyncKernelManager

import study.notebook as runner
from lpp.formats.counts import write_counts
from lpp.formats.fits import load_fit
from lpp.formats.privatized import DATA_FILE, load_privatized
from study.cpu_pinning import pin_numeric_kernels
from study.notebook import (
    ProgressTerminal,
    check_fitted_copies,
    check_settings,
    collect_parameters,
    ipc_kernel_manager,
    main,
    progress_text,
    stage_label,
    stage_position,
)

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipe")
    y = np.random.default_rng(0).poisson(1.5, (15, 10))
    write_counts(root / "prepared", y, row_ids=[f"d{i}" for i in range(15)],
                 column_ids=[f"w{j}" for j in range(10)], kind="topics", params={}, inputs={},
                 summary={})
    assert main([str(NOTEBOOKS / "privatize.ipynb"), str(root / "nb" / "p.ipynb"),
                 "-p", "counts_dir", str(root / "prepared"), "-p", "out_dir", str(root / "private"),
                 "-p", "epsilon_over_n", "1.0"]) == 0
    assert main([str(NOTEBOOKS / "infer_private.ipynb"), str(root / "nb" / "i.ipynb"),
                 "-p", "private_dir", str(root / "private"), "-p", "out_dir", str(root / "fit"),
                 "-p", "n_components", "2", "-p", "n_iter", "6", "-p", "burn_in", "2",
                 "-p", "thin", "2"]) == 0
    return root, y


def test_private_outputs_hold_no_true_counts(pipeline):
    root, y = pipeline
    private = load_privatized(root / "private")
    assert private.y_tilde.shape == y.shape and not np.array_equal(private.y_tilde, y)
    assert private.meta["randomness"] == "system"  # the notebook's default: no seed to leak
    fit = load_fit(root / "fit")
    assert fit.metadata.data == str(root / "private") and fit.samples["phi"].shape == (2, 2, 10)
    with np.load(root / "fit" / "fit.npz") as npz:
        for name in npz.files:
            assert npz[name].shape != y.shape or not np.array_equal(npz[name], y), name
    with np.load(root / "private" / DATA_FILE) as npz:
        assert sorted(npz.files) == ["alpha", "y_tilde"]


#: a sitecustomize for the notebooks' kernels: every file the kernel opens, by absolute path
_OPEN_AUDIT = """
import os, sys
_log = open(os.environ["LPP_TEST_OPEN_LOG"], "a", buffering=1)
def _record(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _log.write(os.path.abspath(os.fsdecode(args[0])) + "\\n")
sys.addaudithook(_record)
"""


def test_the_private_notebook_opens_no_true_count_file(pipeline, tmp_path, monkeypatch):
    """What the kernels of the analyst's notebooks (Gibbs and VI) open, file by file (Python's
    audit hook), with the true counts beside the private folder: nothing of them, whatever code
    path the library takes. The owners' notebook, audited the same way, opens them (the
    check's power)."""
    root, _ = pipeline
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(_OPEN_AUDIT)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(tmp_path / "hook"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    prepared = (root / "prepared").resolve()

    def opened(notebook, *params):
        log = tmp_path / f"{notebook}.opened"
        monkeypatch.setenv("LPP_TEST_OPEN_LOG", str(log))
        assert main([str(NOTEBOOKS / notebook), str(tmp_path / notebook), *params]) == 0
        return {Path(line).resolve() for line in log.read_text().splitlines()}

    owners = opened("privatize.ipynb", "-p", "counts_dir", str(root / "prepared"),
                    "-p", "out_dir", str(tmp_path / "private"), "-p", "epsilon_over_n", "1.0")
    assert any(prepared in path.parents for path in owners)
    analysts = {
        "infer_private.ipynb": ("-p", "n_iter", "4", "-p", "burn_in", "2", "-p", "thin", "2"),
        "infer_vi.ipynb": ()}
    for notebook, settings in analysts.items():
        analyst = opened(notebook, "-p", "private_dir", str(root / "private"), "-p", "out_dir",
                         str(tmp_path / "fits" / notebook), "-p", "n_components", "2", *settings)
        assert any((root / "private").resolve() in path.parents for path in analyst), notebook
        assert not [path for path in analyst if prepared == path or prepared in path.parents], \
            notebook


def test_executed_notebook_records_the_parameters(pipeline):
    root, _ = pipeline
    nb = json.loads((root / "nb" / "i.ipynb").read_text())
    assert nb["metadata"]["papermill"]["parameters"]["n_iter"] == 6


@pytest.mark.cuda
def test_the_device_parameter_reaches_the_topic_fits(pipeline, tmp_path):
    """``-p device cuda`` (the pipeline's ``topics.device``) runs the private and the
    non-private topic fit on the GPU engines, here in numba-cuda's simulator (the kernel
    inherits NUMBA_ENABLE_CUDASIM from tests/conftest.py); the saved fits record it."""
    root, _ = pipeline
    runs = {"private": ("infer_private.ipynb", "private_dir", root / "private", "cuda-sparse"),
            "nonprivate": ("infer_nonprivate.ipynb", "counts_dir", root / "prepared",
                           "cuda-known")}
    for name, (notebook, data_arg, data_dir, engine) in runs.items():
        out = tmp_path / name
        assert main([str(NOTEBOOKS / notebook), str(tmp_path / f"{name}.ipynb"),
                     "-p", data_arg, str(data_dir), "-p", "out_dir", str(out),
                     "-p", "n_components", "2", "-p", "n_iter", "4", "-p", "burn_in", "2",
                     "-p", "thin", "1", "-p", "device", "cuda"]) == 0
        meta = load_fit(out).metadata
        assert (meta.engine, meta.device) == (engine, "numba-cuda's simulator"), name
    # the default runs on the CPU, and a CPU fit's record names no device
    assert load_fit(root / "fit").metadata.device == "cpu"
    assert "device" not in json.loads((root / "fit" / "fit.json").read_text())


def test_a_failing_notebook_exits_non_zero(tmp_path, capsys):
    assert main([str(NOTEBOOKS / "infer_private.ipynb"), str(tmp_path / "o.ipynb"),
                 "-p", "private_dir", str(tmp_path / "missing")]) == 1
    assert "failed" in capsys.readouterr().err and (tmp_path / "o.ipynb").is_file()


def test_section_parameters_and_overrides(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("synthetic_topics:\n  seeds: [4]\n  alpha0_levels: [0.1, 0.5]\n")
    got = collect_parameters(NOTEBOOKS / "synthetic_topics.ipynb", "synthetic_topics",
                             [("n_iter", "10"), ("figure", "x.png")], params_file=params)
    assert got == {"seeds": [4], "alpha0_levels": [0.1, 0.5], "n_iter": 10, "figure": "x.png"}
    with pytest.raises(ValueError, match="no section"):
        collect_parameters(NOTEBOOKS / "synthetic_topics.ipynb", "nope", [], params_file=params)


def test_a_raw_parameter_stays_a_string():
    """A label with ``: `` is a mapping to YAML; ``-r`` passes it as the text it is."""
    notebook = NOTEBOOKS / "report_network.ipynb"
    label = "Enron emails, held out: rows and columns"
    assert collect_parameters(notebook, None, [("dataset_label", label)]) == {
        "dataset_label": {"Enron emails, held out": "rows and columns"}}
    assert collect_parameters(notebook, None, [], raw=[("dataset_label", label)]) == {
        "dataset_label": label}


def test_kernels_run_over_ipc_sockets_without_the_tcp_warning(tmp_path, capfd):
    manager = ipc_kernel_manager(tmp_path)(kernel_name="python3")
    assert manager.transport == "ipc" and manager.ip == str(tmp_path / "kernel")
    assert main([str(NOTEBOOKS / "infer_private.ipynb"), str(tmp_path / "o.ipynb"),
                 "-p", "private_dir", str(tmp_path / "missing")]) == 1
    assert "running over TCP" not in capfd.readouterr().err
    assert not list(Path.cwd().glob("kernel-ipc*")), "IPC sockets left in the working directory"


def test_a_bad_privacy_level_fails_with_lpps_message(pipeline, tmp_path, capsys):
    root, _ = pipeline
    assert main([str(NOTEBOOKS / "privatize.ipynb"), str(tmp_path / "p.ipynb"),
                 "-p", "counts_dir", str(root / "prepared"), "-p", "out_dir", str(tmp_path / "out"),
                 "-p", "epsilon_over_n", "-1"]) == 1
    err = capsys.readouterr().err
    assert "epsilon_over_n (the privacy level epsilon / N) must be positive" in err
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- terminal progress

def _tiny_notebook(path, body):
    """A notebook of a ``parameters`` cell (``n``, ``delay``) and one cell of ``body``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    parameters = nbformat.v4.new_code_cell("n = 3\ndelay = 0.0")
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [parameters, nbformat.v4.new_code_cell(body)]
    nbformat.write(nb, path)
    return path


SWEEPS = ("import time\nfrom tqdm import tqdm\nprint('before')\n"
          "for _ in tqdm(range(n), desc='sweep', mininterval=0):\n    time.sleep(delay)\n"
          "print('after')\n")


def test_progress_text_reads_tqdm_frames():
    assert progress_text("sweep:  50%|#####     | 150/300 [00:20<00:20,  7.3it/s]") == \
        "sweep 150/300 [00:20<00:20]"
    frame = "topics/collapsed: 100%|██████████| 6/6 [01:02<00:00, 1.2s/it, ll=[-3.2]]"
    assert progress_text(frame) == "topics/collapsed 6/6 [01:02<00:00]"
    assert progress_text("  0%|          | 0/20 [00:00<?, ?it/s]") == "0/20 [00:00<?]"
    assert progress_text("fits: 12it [00:03, 3.9it/s]") == "fits 12 [00:03]"
    for text in ("hello", "15 x 10 privatized counts", "", "ratio 1/2 [see notes]"):
        assert progress_text(text) is None, text


def test_bars_become_one_status_line_and_other_text_passes():
    out, err = io.StringIO(), io.StringIO()
    terminal = ProgressTerminal("stage 2/3 run@x", out, err, live=False)
    terminal.start()
    terminal.stderr_file.write("\rsweep:   0%|          | 0/2 [00:00<?, ?it/s]")
    terminal.stderr_file.write("\rsweep:  50%|#####     | 1/2 [00:01<00:01, 1.0it/s]")
    terminal.stdout_file.write("a line from the ")
    terminal.stdout_file.write("kernel\nan unfinished line")
    terminal.stderr_file.write("\r" + " " * 40 + "\r")  # tqdm clearing its bar (leave=False)
    terminal.stderr_file.write("a warning\n")
    terminal.close()
    assert out.getvalue() == "a line from the kernel\nan unfinished line\n"
    assert err.getvalue() == ("stage 2/3 run@x\nstage 2/3 run@x sweep 0/2 [00:00<?]\n"
                              "stage 2/3 run@x sweep 1/2 [00:01<00:01]\na warning\n")
    live = io.StringIO()
    terminal = ProgressTerminal("nb.ipynb", io.StringIO(), live, live=True)
    terminal.start()
    terminal.stderr_file.write("\rsweep:  50%|#####     | 1/2 [00:01<00:01, 1.0it/s]")
    terminal.stderr_file.write("note\n")
    terminal.close()
    assert live.getvalue() == ("\rnb.ipynb\x1b[K\rnb.ipynb sweep 1/2 [00:01<00:01]\x1b[K"
                               "\r\x1b[Knote\n\rnb.ipynb sweep 1/2 [00:01<00:01]\x1b[K\n")


def test_a_stage_of_the_pipeline_reports_its_number_and_its_sweeps(tmp_path, monkeypatch):
    """The runner, as DVC starts it (its own process: a thread left by another test could
    write into this one's stderr), prints the stage's number and its sweeps, nothing else."""
    Repo.init(str(tmp_path), no_scm=True).close()
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  first:\n    cmd: echo\n  run:\n    foreach: [a, b]\n    do:\n"
        "      cmd: echo ${item}\n  last:\n    cmd: echo\n")
    assert stage_position("run@b", tmp_path) == (3, 4)
    assert stage_position("nope", tmp_path) is None
    assert stage_position("run@b", tmp_path / "no-repo") is None
    notebook = _tiny_notebook(tmp_path / "tiny.ipynb", SWEEPS)
    monkeypatch.setenv("DVC_STAGE", "run@b")
    monkeypatch.setenv("DVC_ROOT", str(tmp_path))
    run = subprocess.run([sys.executable, "-m", "study.notebook", str(notebook),
                          str(tmp_path / "out.ipynb"), "-p", "n", "4"],
                         cwd=Path(__file__).resolve().parents[2], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    out, err = run.stdout, run.stderr
    assert out == "before\nafter\n"
    lines = err.splitlines()
    assert lines[0] == "stage 3/4 run@b" and lines[-1].startswith("stage 3/4 run@b sweep 4/4 [")
    assert all(line.startswith("stage 3/4 run@b") for line in lines), err
    assert "KeyboardInterrupt" not in err and "ERROR" not in err
    executed = json.loads((tmp_path / "out.ipynb").read_text())
    stderr = "".join("".join(o["text"]) for o in executed["cells"][-1]["outputs"]
                     if o.get("name") == "stderr")
    assert "| 4/4 [" in stderr  # the notebook keeps the bar as the kernel drew it
    monkeypatch.delenv("DVC_STAGE")
    assert stage_label(notebook) == "tiny.ipynb"


def test_the_kernel_computes_with_the_pinned_kernels(tmp_path, monkeypatch):
    """study.cpu_pinning: the runner pins the numeric kernels before it starts the kernel,
    which inherits the pins."""
    for name in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES"):
        monkeypatch.delenv(name, raising=False)
    expected = pin_numeric_kernels({})
    notebook = _tiny_notebook(tmp_path / "env.ipynb",
                              "import os\nprint(os.environ.get('OPENBLAS_CORETYPE'), "
                              "os.environ.get('NPY_DISABLE_CPU_FEATURES'))")
    assert main([str(notebook), str(tmp_path / "out.ipynb")]) == 0
    executed = json.loads((tmp_path / "out.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for o in executed["cells"][-1]["outputs"])
    assert printed == f"{expected['OPENBLAS_CORETYPE']} {expected['NPY_DISABLE_CPU_FEATURES']}\n"


def test_a_clean_shutdown_sends_no_interrupt_and_a_busy_kernel_gets_one(tmp_path,
                                                                        monkeypatch):
    interrupts = []
    original = AsyncKernelManager._async_interrupt_kernel

    async def counted(self):
        # where the interrupt came from, and how the kernel stood, for a failure to explain
        interrupts.append(f"shutting_down={self.shutting_down} has_kernel={self.has_kernel}\n"
                          + "".join(traceback.format_stack(limit=12)))
        await original(self)

    monkeypatch.setattr(AsyncKernelManager, "_async_interrupt_kernel", counted)
    # a loaded machine may take seconds to end even an idle kernel: the bound here is for a
    # kernel that ignores the request, not a slow one that honours it
    monkeypatch.setattr(runner, "QUIET_SHUTDOWN_SECONDS", 120.0)
    notebook = _tiny_notebook(tmp_path / "tiny.ipynb", SWEEPS)
    assert main([str(notebook), str(tmp_path / "out.ipynb")]) == 0
    assert interrupts == [], "\n\n".join(interrupts)  # the shutdown request alone ended it

    monkeypatch.setattr(runner, "QUIET_SHUTDOWN_SECONDS", 1.0)

    async def busy_kernel_shutdown():
        manager = ipc_kernel_manager(tmp_path)(kernel_name="python3")
        await manager.start_kernel()
        client = manager.client()
        client.start_channels()
        await client.wait_for_ready(timeout=60)
        client.execute("import time\nwhile True:\n    time.sleep(0.1)")
        await asyncio.sleep(1.0)
        start = time.perf_counter()
        await manager.shutdown_kernel()
        client.stop_channels()
        return time.perf_counter() - start, await manager.is_alive()

    seconds, alive = asyncio.run(busy_kernel_shutdown())
    assert len(interrupts) == 1 and not alive and seconds < 30


def test_a_study_fitting_a_copy_that_is_never_made_is_refused_before_any_stage_runs(
        tmp_path, monkeypatch, capsys):
    """topics.replicates, network.replicates and vi_topics.replicates must be subsets of
    privacy.replicates: the runner names the setting at once, before its notebook runs,
    rather than let DVC stop at the first fit of a missing copy."""
    settings = {"privacy": {"replicates": [0, 1]}, "topics": {"replicates": [0, 1]},
                "network": {"replicates": [0]}, "vi_topics": {"replicates": [0]}}
    check_fitted_copies(settings)
    for section, copies in (("topics", [0, 2]), ("network", [3]), ("vi_topics", [1, 2])):
        wrong = {**settings, section: {"replicates": copies}}
        with pytest.raises(ValueError, match=rf"{section}\.replicates \[\d(, \d)*\] are not in "
                                             r"privacy\.replicates \[0, 1\]"):
            check_fitted_copies(wrong)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(
        "privacy:\n  replicates: [0]\ntopics:\n  replicates: [0, 1]\n")
    assert main([str(NOTEBOOKS / "privatize.ipynb"), str(tmp_path / "never.ipynb")]) == 2
    assert "params.yaml: topics.replicates [1]" in capsys.readouterr().err
    assert not (tmp_path / "never.ipynb").exists()


@pytest.mark.parametrize("key, value, section", [
    ("level", 2.0, "privacy.levels"), ("rep", 1, "topics.replicates"),
    ("topic_methods", ["collapsed", "bessel"], "topics.methods"),
    ("network_methods", ["naive"], "network.methods"), ("C", 10, "network.C")])
def test_a_diagnosis_of_a_fit_the_studies_never_make_is_refused(tmp_path, monkeypatch, capsys,
                                                                key, value, section):
    """The diagnosis reads the studies' own fit of its level, copy, methods and C as the
    first chain: naming one they never make is refused by the diagnosis's stages (its extra
    chains, its notebook), naming the setting; DVC would otherwise run the extra chains, then
    stop at the missing fit. Stages of a run that never diagnoses are not held up."""
    settings = {"privacy": {"levels": [1.0], "replicates": [0, 1]},
                "topics": {"methods": ["collapsed"], "replicates": [0]},
                "network": {"methods": ["collapsed"], "replicates": [0, 1], "C": [5]},
                "diagnose": {"level": 1.0, "rep": 0, "topic_methods": ["collapsed"],
                             "network_methods": ["collapsed"], "C": 5}}
    check_settings(settings)
    wrong = {**settings, "diagnose": {**settings["diagnose"], key: value}}
    with pytest.raises(ValueError, match=rf"diagnose\.{key} .* not in {section}"):
        check_settings(wrong)
    check_settings(wrong, diagnosis=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(wrong))
    chain = tmp_path / "results" / "notebooks" / "chains" / "never.ipynb"
    assert main([str(NOTEBOOKS / "infer_private.ipynb"), str(chain)]) == 2
    assert f"diagnose.{key}" in capsys.readouterr().err
    assert main([str(NOTEBOOKS / "diagnose.ipynb"), str(tmp_path / "never.ipynb"),
                 "--section", "diagnose"]) == 2
    assert f"diagnose.{key}" in capsys.readouterr().err
    assert not chain.exists() and not (tmp_path / "never.ipynb").exists()
