"""A pipeline fit's checkpoints: keyed by what decides the chain, stale ones removed, and an
infer stage cut short continues its chains bit for bit."""
from pathlib import Path

import numpy as np
import pytest

from lpp.counts import write_counts
from lpp.fits import load_chains
from lpp.inference import fit_private
from lpp.privatized import load_privatized
from study import checkpoints
from study.notebook import main

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SETTINGS = dict(model="topics", n_components=2, method="collapsed", burn_in=2, thin=2, seed=1,
                init="data", use_heldout=True)  # the infer notebook's, at the values below


def _data(folder: Path, value: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.bin").write_bytes(bytes([value]) * 64)
    return folder


def test_the_key_follows_the_settings_and_the_data(tmp_path):
    data = _data(tmp_path / "data", 1)
    out = tmp_path / "fits" / "a"
    first = checkpoints.stage_checkpoint(out, data, **SETTINGS)
    assert first.parent == tmp_path / "fits" / "a.checkpoints"
    assert checkpoints.stage_checkpoint(out, data, **SETTINGS) == first
    assert not checkpoints.resuming(first)
    first.write_bytes(b"x")
    first.with_name(first.stem + ".chain1.npz").write_bytes(b"x")
    assert checkpoints.resuming(first)
    # the same key keeps its chains' files
    assert checkpoints.stage_checkpoint(out, data, **SETTINGS) == first and first.exists()
    assert first.with_name(first.stem + ".chain1.npz").exists()
    # another setting: another key, and the old files are removed, never resumed
    other = checkpoints.stage_checkpoint(out, data, **{**SETTINGS, "seed": 2})
    assert other != first and sorted(first.parent.iterdir()) == []
    other.write_bytes(b"x")
    _data(tmp_path / "data", 2)  # the same folder, other bytes
    moved = checkpoints.stage_checkpoint(out, data, **{**SETTINGS, "seed": 2})
    assert moved != other and not other.exists()
    checkpoints.clear(out)
    assert not first.parent.exists()


def test_a_missing_data_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing"):
        checkpoints.stage_checkpoint(tmp_path / "fit", tmp_path / "missing", **SETTINGS)


def test_a_stage_cut_short_continues_its_chains_bit_for_bit(tmp_path):
    y = np.random.default_rng(3).poisson(1.5, (12, 9))
    write_counts(tmp_path / "prepared", y, row_ids=[f"d{i}" for i in range(12)],
                 column_ids=[f"w{j}" for j in range(9)], kind="topics", params={}, inputs={},
                 summary={})
    assert main([str(NOTEBOOKS / "privatize.ipynb"), str(tmp_path / "p.ipynb"),
                 "-p", "counts_dir", str(tmp_path / "prepared"),
                 "-p", "out_dir", str(tmp_path / "private"), "-p", "epsilon_over_n", "1.0"]) == 0
    private, out = tmp_path / "private", tmp_path / "fit"
    data = load_privatized(private)
    kwargs = dict(method="collapsed", n_components=2, burn_in=2, thin=2, rng=1, n_chains=2)
    whole = fit_private(data.y_tilde, data.alpha, "topics", n_iter=10, **kwargs)
    # the interrupted run: its chains checkpointed at iteration 6
    checkpoint = checkpoints.stage_checkpoint(out, private, **SETTINGS)
    fit_private(data.y_tilde, data.alpha, "topics", n_iter=6, checkpoint=checkpoint, **kwargs)
    assert checkpoints.resuming(checkpoint)
    assert main([str(NOTEBOOKS / "infer_private.ipynb"), str(tmp_path / "i.ipynb"),
                 "-p", "private_dir", str(private), "-p", "out_dir", str(out),
                 "-p", "n_components", "2", "-p", "n_iter", "10", "-p", "burn_in", "2",
                 "-p", "thin", "2", "-p", "n_chains", "2"]) == 0
    assert "continuing the chains of an interrupted run" in (tmp_path / "i.ipynb").read_text()
    saved = load_chains(out)
    assert len(saved) == 2
    for chain, kept in zip(whole.chains, saved):
        np.testing.assert_array_equal(kept.saved_iterations, chain.saved_iterations)
        for name in ("theta", "phi"):
            np.testing.assert_array_equal(kept.samples[name], chain.samples[name])
        np.testing.assert_array_equal(kept.mu_hat, chain.mu_hat)
    assert not checkpoints.folder(out).exists()  # removed once the fit is saved
