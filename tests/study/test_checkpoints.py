"""A pipeline fit's checkpoints: keyed by what decides the chain, stale ones removed, and an
infer stage cut short continues its chains bit for bit."""
import json
from pathlib import Path

import numpy as np
import pytest

from lpp.formats.counts import write_counts
from lpp.formats.fits import load_chains, save_fit
from lpp.inference import GibbsSampler, RunOptions, TopicModel, fit_nonprivate, fit_private
from lpp.formats.privatized import load_privatized
from lpp.randomness import release_seed
from study import checkpoints
from study.notebook import main

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
#: the infer notebook's checkpoint settings, at the values the tests below run it with
SETTINGS = dict(model="topics", n_components=2, method="collapsed", burn_in=2, thin=2, seed=1,
                init="data", use_heldout=True, device="cpu")


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
    # the notebook keys its seed (1) by the release
    seed = release_seed(1, data.release_sha256)
    whole = fit_private(data.y_tilde, data.alpha, TopicModel(2),
                        run=RunOptions(n_iter=10, burn_in=2, thin=2), method="collapsed", rng=seed,
                        chains=2)
    # the interrupted run: its chains checkpointed at iteration 6
    checkpoint = checkpoints.stage_checkpoint(out, private, **{**SETTINGS, "seed": seed})
    fit_private(data.y_tilde, data.alpha, TopicModel(2),
                run=RunOptions(n_iter=6, checkpoint=checkpoint, burn_in=2, thin=2),
                method="collapsed", rng=seed, chains=2)
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


def _prepared(tmp_path):
    y = np.random.default_rng(3).poisson(1.5, (12, 9))
    write_counts(tmp_path / "prepared", y, row_ids=[f"d{i}" for i in range(12)],
                 column_ids=[f"w{j}" for j in range(9)], kind="topics", params={}, inputs={},
                 summary={})
    return tmp_path / "prepared", y


def _infer(tmp_path, notebook, data_arg, data_dir, out, n_iter, burn_in, name):
    assert main([str(NOTEBOOKS / notebook), str(tmp_path / name), "-p", data_arg, str(data_dir),
                 "-p", "out_dir", str(out), "-p", "n_components", "2", "-p", "n_iter",
                 str(n_iter), "-p", "burn_in", str(burn_in), "-p", "thin", "2",
                 "-p", "n_chains", "2"]) == 0
    return (tmp_path / name).read_text()


@pytest.mark.parametrize("private", [True, False], ids=["private", "non-private"])
def test_a_finished_fit_set_aside_runs_its_chains_on(tmp_path, private):
    """profiles/run.py --continue-chains sets a stage's fit aside; the infer notebook, run with
    more sweeps and a longer burn-in, continues its chains: the fit equals one run of the new
    settings, bit for bit, and the folder set aside goes with the checkpoints."""
    prepared, y = _prepared(tmp_path)
    kwargs = dict(n_components=2, burn_in=4, thin=2, rng=1, n_chains=2, n_iter=10)
    if private:
        assert main([str(NOTEBOOKS / "privatize.ipynb"), str(tmp_path / "p.ipynb"),
                     "-p", "counts_dir", str(prepared), "-p", "out_dir", str(tmp_path / "private"),
                     "-p", "epsilon_over_n", "1.0"]) == 0
        data_dir, notebook, data_arg = tmp_path / "private", "infer_private.ipynb", "private_dir"
        data = load_privatized(data_dir)
        # the notebook keys its seed (1) by the release
        kwargs["rng"] = release_seed(kwargs["rng"], data.release_sha256)
        whole = fit_private(np.ma.masked_array(data.y_tilde, data.heldout), data.alpha,
                            TopicModel(2), run=RunOptions(burn_in=4, thin=2, n_iter=10),
                            rng=kwargs["rng"], chains=2)
    else:
        data_dir, notebook, data_arg = prepared, "infer_nonprivate.ipynb", "counts_dir"
        whole = fit_nonprivate(y, TopicModel(2), run=RunOptions(burn_in=4, thin=2, n_iter=10),
                               rng=1, chains=2)
    out = tmp_path / "fit"
    _infer(tmp_path, notebook, data_arg, data_dir, out, 6, 2, "first.ipynb")
    aside = checkpoints.set_aside(out, data_dir=data_dir)
    assert aside == checkpoints.previous_folder(out) and not out.exists()
    text = _infer(tmp_path, notebook, data_arg, data_dir, out, 10, 4, "longer.ipynb")
    assert "continuing the chains of the earlier fit set aside" in text
    for chain, kept in zip(whole.chains, load_chains(out), strict=True):
        np.testing.assert_array_equal(kept.saved_iterations, chain.saved_iterations)
        for name in ("theta", "phi"):
            np.testing.assert_array_equal(kept.samples[name], chain.samples[name])
        np.testing.assert_array_equal(kept.mu_hat, chain.mu_hat)
        np.testing.assert_array_equal(kept.log_joint, chain.log_joint)
    assert not aside.exists() and not checkpoints.folder(out).exists()


def test_a_fit_set_aside_that_cannot_continue_says_to_delete_it(tmp_path):
    prepared, y = _prepared(tmp_path)
    out = tmp_path / "fit"
    fit = fit_nonprivate(y, TopicModel(2), run=RunOptions(n_iter=6, burn_in=2, thin=2), rng=1)
    save_fit(fit, out, data=str(prepared))
    checkpoint = checkpoints.stage_checkpoint(out, prepared, **SETTINGS)

    def make_chain(seed):
        return GibbsSampler.nonprivate(y, TopicModel(2), rng=seed, init="prior")

    go_on = dict(data_dir=prepared, burn_in=2, thin=2)
    assert not checkpoints.continue_previous(out, checkpoint, make_chain, **go_on)
    checkpoints.set_aside(out)
    with pytest.raises(ValueError, match="every 2th sweep, the continuing run every 3th.*delete"):
        checkpoints.continue_previous(out, checkpoint, make_chain, **{**go_on, "thin": 3})
    with pytest.raises(ValueError, match="burn_in=0 must be.*delete .*fit.previous"):
        checkpoints.continue_previous(out, checkpoint, make_chain, **{**go_on, "burn_in": 0})
    # a fit without a data fingerprint is continued only on the data noted when it was set
    # aside
    aside = checkpoints.previous_folder(out)
    meta = json.loads((aside / "fit.json").read_text())
    del meta["data_fingerprint"]
    (aside / "fit.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="trust_data"):
        checkpoints.continue_previous(out, checkpoint, make_chain, **go_on)
    other = _data(tmp_path / "other", 7)
    (aside / checkpoints.PREVIOUS_NOTE).write_text(json.dumps(
        {"data_digest": checkpoints._data_digest(other)}))
    with pytest.raises(ValueError, match="trust_data"):
        checkpoints.continue_previous(out, checkpoint, make_chain, **go_on)
    (aside / checkpoints.PREVIOUS_NOTE).write_text(json.dumps(
        {"data_digest": checkpoints._data_digest(prepared)}))
    assert checkpoints.continue_previous(out, checkpoint, make_chain, **go_on)
    assert checkpoints.resuming(checkpoint)
    # an interrupted continuation goes on from its checkpoint, not from the fit again
    assert not checkpoints.continue_previous(out, checkpoint, make_chain, **go_on)
