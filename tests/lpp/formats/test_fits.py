from pathlib import Path

import numpy as np
import pytest

from lpp.formats.fits import DATA_FILE, load_fit, save_fit
from lpp.inference import RunOptions, TopicModel, fit_private


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(0)
    y_tilde = rng.poisson(2.0, (12, 9)) - rng.poisson(0.5, (12, 9))
    return fit_private(y_tilde, 0.4, TopicModel(2),
                       run=RunOptions(n_iter=12, burn_in=4, thin=4, save_counts=True,
                                      progress=False),
                       rng=5)


def test_round_trip(tmp_path, result):
    save_fit(result, tmp_path, data="somewhere", extra={"epsilon_over_n": 1.0})
    back = load_fit(tmp_path)
    assert np.array_equal(back.mu_hat, result.mu_hat)
    assert np.array_equal(back.log_joint, result.log_joint)
    assert set(back.samples) == {"theta", "phi"}  # sampled counts are not kept
    assert back.samples["phi"].shape == (2, 2, 9)
    assert back.seed == result.seed and back.metadata.epsilon_over_n == 1.0
    assert back.method == "collapsed" and back.n_saved == back.metadata.n_saved == 2


def test_same_fit_same_bytes(tmp_path, result):
    save_fit(result, tmp_path / "a", data="x")
    save_fit(result, tmp_path / "b", data="x")
    assert (tmp_path / "a" / DATA_FILE).read_bytes() == (tmp_path / "b" / DATA_FILE).read_bytes()


def test_corrupt_file_is_refused(tmp_path, result):
    save_fit(result, tmp_path, data="x")
    path = tmp_path / DATA_FILE
    payload = bytearray(path.read_bytes())
    payload[len(payload) // 2] ^= 0xFF
    path.write_bytes(bytes(payload))
    with pytest.raises(ValueError, match="sha256"):
        load_fit(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_fit(tmp_path / "nowhere")


# ---- nothing on disk is trusted: a forger who recomputes the sha256 is still refused ----------

@pytest.mark.parametrize("change, match", [
    ({"drop": ("mu_hat",)}, "'mu_hat' is missing"),
    ({"arrays": {"mu_hat": np.full((12, 9), np.nan)}}, "'mu_hat' holds NaN"),
    ({"arrays": {"mu_hat": np.full((12, 9), "x")}}, "'mu_hat' has dtype"),
    ({"arrays": {"samples__phi": np.full((2, 2, 9), np.inf)}}, "'samples__phi' holds NaN"),
    ({"arrays": {"samples__phi": np.ones((3, 2, 9))}}, "one draw per saved iteration"),
    ({"arrays": {"log_joint": np.ones(5)}}, "'log_joint' has shape (5,)"),
    ({"arrays": {"saved_iterations": np.array([8.0, 12.0])}}, "'saved_iterations' has dtype"),
    ({"arrays": {"saved_iterations": np.array([12, 8])}}, "rise strictly"),
    ({"arrays": {"iter_seconds": np.full(12, -1.0)}}, "negative seconds"),
    ({"payload": b"\x00" * 10}, "not a readable .npz"),
    ({"meta": {"data_file": "/etc/passwd"}}, "'data_file' must name a file inside"),
    ({"meta": {"method": ...}}, "'method' is missing"),
    ({"meta": {"model": "topics"}}, "'model' must be an object"),
    ({"meta": {"n_saved": 3}}, "'n_saved' is 3"),
])
def test_a_forged_fit_is_named_in_a_clear_error(tmp_path, result, forge, change, match):
    save_fit(result, tmp_path, data="x")
    forge(tmp_path, data_file=DATA_FILE, meta_file="fit.json", sha_key="data_sha256", **change)
    with pytest.raises(ValueError) as info:
        load_fit(tmp_path)
    assert str(tmp_path) in str(info.value) and match in str(info.value), str(info.value)


@pytest.fixture(scope="module")
def two_chains():
    y_tilde = np.random.default_rng(1).poisson(2.0, (6, 5))
    return fit_private(y_tilde, 0.4, TopicModel(2),
                       run=RunOptions(n_iter=4, burn_in=2, progress=False), rng=5, chains=2)


@pytest.mark.parametrize("meta, match", [
    ({"chains": ...}, "'chains' is missing"),
    ({"chains": "ab"}, "'chains' must be a non-empty list of objects"),
    ({"n_chains": 3}, "'n_chains' is 3"),
    ({"chains": [{"seed": 1}, {"seed": 2}]}, "'iterations_done' is missing"),
])
def test_a_forged_fit_of_several_chains_is_named_in_a_clear_error(tmp_path, two_chains, forge,
                                                                   meta, match):
    save_fit(two_chains, tmp_path, data="x")
    assert load_fit(tmp_path).n_chains == 2
    forge(tmp_path, data_file=DATA_FILE, meta_file="fit.json", sha_key="data_sha256", meta=meta)
    with pytest.raises(ValueError) as info:
        load_fit(tmp_path)
    assert str(tmp_path) in str(info.value) and match in str(info.value), str(info.value)


# ---- a rewrite is all or nothing --------------------------------------------------------------

def _fail_on(monkeypatch, name, *, after=False):
    """Make the rename that puts ``name`` in place raise KeyboardInterrupt (Ctrl-C between the
    writes), before it or, with ``after``, just after it."""
    from lpp.formats import files
    real = files.os.replace

    def replace(src, dst):
        if Path(dst).name == name:
            if after:
                real(src, dst)
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)


@pytest.mark.parametrize("failing", [DATA_FILE, "fit.json"])
def test_a_rewrite_cut_short_leaves_the_previous_fit(tmp_path, result, two_chains, monkeypatch,
                                                     failing, snapshot):
    out = tmp_path / "fit"
    save_fit(result, out, data="old")
    (out / "notes.txt").write_text("someone else's")
    before = snapshot(out)
    _fail_on(monkeypatch, failing)
    with pytest.raises(KeyboardInterrupt):
        save_fit(two_chains, out, data="new")
    assert snapshot(out) == before  # no temporary or kept file is left either
    old = load_fit(out)
    assert old.metadata.data == "old" and np.array_equal(old.mu_hat, result.mu_hat)


def test_ctrl_c_just_after_the_last_rename_keeps_the_new_fit(tmp_path, result, two_chains,
                                                              monkeypatch):
    """The new fit.json is in place: its fit.npz is not rolled back under it."""
    out = tmp_path / "fit"
    save_fit(result, out, data="old")
    _fail_on(monkeypatch, "fit.json", after=True)
    with pytest.raises(KeyboardInterrupt):
        save_fit(two_chains, out, data="new")
    assert load_fit(out).metadata.data == "new"
    assert sorted(p.name for p in out.iterdir()) == sorted([DATA_FILE, "fit.json"])


def test_a_rewrite_replaces_the_fit_and_leaves_other_files(tmp_path, result, two_chains):
    out = tmp_path / "fit"
    save_fit(result, out, data="old")
    (out / "notes.txt").write_text("someone else's")
    save_fit(two_chains, out, data="new")
    new = load_fit(out)
    assert new.metadata.data == "new" and new.n_chains == 2
    assert sorted(p.name for p in out.iterdir()) == sorted([DATA_FILE, "fit.json", "notes.txt"])


@pytest.mark.parametrize("extra", [{"e": object()}, {"e": {1, 2}}, [("epsilon", 1.0)]])
def test_extra_that_json_cannot_hold_is_refused_naming_it(tmp_path, result, extra):
    with pytest.raises(TypeError, match="extra must"):
        save_fit(result, tmp_path / "f", data="x", extra=extra)
    assert not (tmp_path / "f").exists()
