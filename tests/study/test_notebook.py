"""The notebook runner, end to end on a tiny data set: privatize, then infer privately.

Also checks the privacy boundary on real outputs: nothing a private method writes holds
the true counts.
"""
import json
from pathlib import Path

import numpy as np
import pytest

from lpp.counts import write_counts
from lpp.fits import load_fit
from study.notebook import collect_parameters, ipc_kernel_manager, main
from lpp.privatized import DATA_FILE, load_privatized

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
    assert fit.meta["data"] == str(root / "private") and fit.samples["phi"].shape == (2, 2, 10)
    with np.load(root / "fit" / "fit.npz") as npz:
        for name in npz.files:
            assert npz[name].shape != y.shape or not np.array_equal(npz[name], y), name
    with np.load(root / "private" / DATA_FILE) as npz:
        assert sorted(npz.files) == ["alpha", "y_tilde"]


def test_executed_notebook_records_the_parameters(pipeline):
    root, _ = pipeline
    nb = json.loads((root / "nb" / "i.ipynb").read_text())
    assert nb["metadata"]["papermill"]["parameters"]["n_iter"] == 6


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
