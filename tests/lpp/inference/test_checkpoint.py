"""Checkpoints are verified before a chain resumes from them: digest, schedule, seed, record."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lpp.inference import RunOptions, TopicModel, fit_private
from lpp.inference.checkpoint import _digest, read_checkpoint

QUIET = {"progress": False}
RUN = {"n_iter": 12, "burn_in": 2, "thin": 2, **QUIET}


@pytest.fixture
def saved(topic_data, tmp_path):
    """``(y_tilde, alpha, path)``: the checkpoint of a chain of seed 5 at iteration 6, which a
    run of ``RUN`` continues to iteration 12."""
    _, _, y_tilde, alpha = topic_data
    path = tmp_path / "c.npz"
    fit_private(y_tilde, alpha, TopicModel(3), rng=5,
                run=RunOptions(checkpoint=path, **{**RUN, "n_iter": 6}))
    return y_tilde, alpha, path


def _rewrite(path, *, meta=None, digest=True, **arrays):
    """Rewrite a checkpoint with ``meta`` entries and arrays replaced; ``digest=True`` stores
    the digest of the new contents (a forger's file), False keeps the old one (a hand edit)."""
    with np.load(path) as z:
        content = {k: z[k] for k in z.files}
    stored = json.loads(str(content["meta"]))
    stored.update(meta or {})
    content["meta"] = np.array(json.dumps(stored))
    content.update(arrays)
    if digest:
        content["digest"] = np.array(_digest({k: v for k, v in content.items()
                                              if k != "digest"}))
    np.savez(path, **content)


def _resume(y_tilde, alpha, path, rng=None, **kwargs):
    return fit_private(y_tilde, alpha, TopicModel(3), rng=rng,
                       run=RunOptions(checkpoint=path, resume=True, **{**RUN, **kwargs}))


def test_a_verified_checkpoint_continues_the_chain_bit_for_bit(saved):
    y_tilde, alpha, path = saved
    full = fit_private(y_tilde, alpha, TopicModel(3), rng=5,
                       run=RunOptions(n_iter=12, burn_in=2, thin=2, progress=False))
    for rng in (None, 5, np.random.default_rng(0)):  # an int must be the checkpoint's seed
        resumed = _resume(y_tilde, alpha, path, rng=rng)
        assert resumed.seed == 5 and resumed.iterations_done == 12
        assert np.array_equal(resumed.mu_hat, full.mu_hat)
        assert np.array_equal(resumed.log_joint, full.log_joint)
        fit_private(y_tilde, alpha, TopicModel(3), rng=5,
                    run=RunOptions(checkpoint=path,
                                   **{**RUN, "n_iter": 6}))  # back to iteration 6 for the next rng


@pytest.mark.parametrize("edit", [
    {"iteration": 5000, "n_iter": 5000},  # would return 5000 iterations of a 6-sweep record
    {"seed": 6},                          # would continue another chain
    {"thin": 3},                          # a schedule edited to match the run
])
def test_an_edited_checkpoint_is_refused(saved, edit):
    y_tilde, alpha, path = saved
    _rewrite(path, meta=edit, digest=False)
    kwargs = {"n_iter": 5000} if "n_iter" in edit else {"thin": 3} if "thin" in edit else {}
    with pytest.raises(ValueError, match=rf"{path}.*digest.*resume=False"):
        _resume(y_tilde, alpha, path, **kwargs)


def test_edited_state_is_refused(saved):
    y_tilde, alpha, path = saved
    with np.load(path) as z:
        phi = z["state__phi"] * 2
    _rewrite(path, digest=False, state__phi=phi)
    with pytest.raises(ValueError, match="digest"):
        _resume(y_tilde, alpha, path)


@pytest.mark.parametrize("edit, match", [
    ({"iteration": 5000, "n_iter": 5000}, "does not hold the 5000 iterations"),
    ({"iteration": 7, "n_iter": 6}, "outside its schedule"),
    ({"iteration": -1}, "outside its schedule"),
])
def test_a_record_that_contradicts_its_schedule_is_refused(saved, edit, match):
    y_tilde, alpha, path = saved
    _rewrite(path, meta=edit)  # with a matching digest
    with pytest.raises(ValueError, match=match):
        _resume(y_tilde, alpha, path, n_iter=5000)


def test_saved_iterations_must_follow_burn_in_and_thin(saved):
    y_tilde, alpha, path = saved
    _rewrite(path, saved_iterations=np.array([3, 5], dtype=np.int64))
    with pytest.raises(ValueError, match="saved iterations"):
        _resume(y_tilde, alpha, path)


def test_another_seed_is_refused_saying_which(saved):
    y_tilde, alpha, path = saved
    with pytest.raises(ValueError, match=r"seed 5, not rng=6.*rng=5"):
        _resume(y_tilde, alpha, path, rng=6)


def test_n_iter_below_the_checkpoint_is_refused(saved):
    y_tilde, alpha, path = saved
    with pytest.raises(ValueError, match=r"iteration 6, past n_iter=4.*n_iter >= 6"):
        _resume(y_tilde, alpha, path, n_iter=4)
    assert _resume(y_tilde, alpha, path, n_iter=6).iterations_done == 6  # as saved


def test_a_changed_schedule_says_what_differs(saved):
    y_tilde, alpha, path = saved
    with pytest.raises(ValueError, match=r"'burn_in' \(2 != 4\)"):
        _resume(y_tilde, alpha, path, burn_in=4)


def _damaged(path, how):
    raw = path.read_bytes()
    if how == "empty":
        return b""
    if how.startswith("cut"):
        return raw[:int(len(raw) * float(how[3:]))]
    at = int(len(raw) * float(how[4:]))  # "flip<fraction>": one byte changed
    return raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1:]


@pytest.mark.parametrize("how", ["empty", "cut0.01", "cut0.5", "cut0.99", "flip0.3",
                                 "flip0.6"])
def test_a_damaged_file_is_named_in_a_clear_error(saved, how):
    y_tilde, alpha, path = saved
    path.write_bytes(_damaged(path, how))
    with pytest.raises(ValueError, match=rf"checkpoint {path}.*delete it, or pass resume=False"):
        _resume(y_tilde, alpha, path)
    # starting over overwrites it
    assert fit_private(y_tilde, alpha, TopicModel(3),
                       run=RunOptions(checkpoint=path, n_iter=12, burn_in=2, thin=2,
                                      progress=False),
                       rng=5).iterations_done == 12
    assert _resume(y_tilde, alpha, path).iterations_done == 12


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_damage_is_caught_or_harmless(saved, data):
    """A file cut anywhere or with any byte changed either reads as the same checkpoint (a
    byte zip ignores) or raises a ValueError naming the file; never another exception."""
    _, _, path = saved
    raw = path.read_bytes()
    expected = read_checkpoint(path)
    at = data.draw(st.integers(0, len(raw) - 1))
    cut = data.draw(st.booleans())
    damaged = path.with_name("damaged.npz")
    damaged.write_bytes(raw[:at] if cut else
                        raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))])
                        + raw[at + 1:])
    try:
        meta, groups, extra = read_checkpoint(damaged)
    except ValueError as exc:
        assert str(damaged) in str(exc) and "resume=False" in str(exc)
        return
    assert meta == expected[0]
    for got, want in zip((groups["state"], groups["aux"], groups["samples"], extra),
                         (*expected[1].values(), expected[2])):
        assert got.keys() == want.keys() and all(np.array_equal(got[k], want[k]) for k in got)


def test_a_checkpoint_names_its_format(saved):
    meta, _, _ = read_checkpoint(saved[2])
    assert meta["format"] == "lpp.checkpoint" and meta["version"] == 3


def test_a_checkpoint_that_names_no_format_still_continues_the_chain_bit_for_bit(saved):
    """Checkpoints written before they named their format (their metadata without it, its
    digest over that metadata) are read and continued as before."""
    y_tilde, alpha, path = saved
    with np.load(path) as z:
        content = {k: z[k] for k in z.files}
    stored = json.loads(str(content["meta"]))
    del stored["format"]
    content["meta"] = np.array(json.dumps(stored))
    content["digest"] = np.array(_digest({k: v for k, v in content.items() if k != "digest"}))
    np.savez(path, **content)
    assert "format" not in read_checkpoint(path)[0]
    resumed = _resume(y_tilde, alpha, path)
    whole = fit_private(y_tilde, alpha, TopicModel(3), rng=5, run=RunOptions(**RUN))
    assert np.array_equal(resumed.mu_hat, whole.mu_hat)
    assert np.array_equal(resumed.samples["phi"], whole.samples["phi"])


def test_a_checkpoint_of_another_format_is_refused(saved):
    y_tilde, alpha, path = saved
    _rewrite(path, meta={"format": "mine"})
    with pytest.raises(ValueError, match=rf"checkpoint {path} records format 'mine'"):
        read_checkpoint(path)
    # and a run neither resumes from it nor overwrites it
    with pytest.raises(ValueError, match="is an existing file that is not a checkpoint"):
        _resume(y_tilde, alpha, path)


def test_a_saved_fit_is_not_read_as_a_checkpoint(topic_data, tmp_path):
    from lpp.formats.fits import DATA_FILE

    _, _, y_tilde, alpha = topic_data
    fit_private(y_tilde, alpha, TopicModel(3), rng=5, run=RunOptions(**RUN)).save(
        tmp_path / "fit", data="d")
    with pytest.raises(ValueError, match=rf"{tmp_path / 'fit' / DATA_FILE} is a saved fit "
                                         r"\(format 'lpp.fit'\), not a checkpoint"):
        read_checkpoint(tmp_path / "fit" / DATA_FILE)


def test_a_checkpoint_is_not_loaded_as_a_fit(saved):
    from lpp.formats.fits import load_fit
    from lpp.inference import checkpoints_from_fit

    path = saved[2]
    message = rf"{path} is a checkpoint of a chain \(format 'lpp.checkpoint'\), not a saved fit"
    with pytest.raises(ValueError, match=message):
        load_fit(path)
    with pytest.raises(ValueError, match=message):
        checkpoints_from_fit(path, lambda seed: None, path.with_name("next.npz"))


def test_a_checkpoint_of_another_layout_is_refused(saved):
    y_tilde, alpha, path = saved
    _rewrite(path, meta={"version": 2})
    with pytest.raises(ValueError, match="layout version 2"):
        _resume(y_tilde, alpha, path)


def test_a_killed_write_leaves_nothing_the_next_run_keeps(saved):
    y_tilde, alpha, path = saved
    # a writer SIGKILLed mid-write cannot remove its temporary file
    code = textwrap.dedent(f"""
        import os, signal
        from lpp.formats.files import atomic_writer
        with atomic_writer({str(path)!r}) as handle:
            handle.write(b"half a checkpoint")
            handle.flush()
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    root = Path(__import__("lpp").__file__).parents[1]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == -9
    stale = [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert len(stale) == 1 and stale[0].name.startswith(f".{path.name}.")
    other = path.parent / f".{path.name}.bak.abcd1234.tmp"  # another file's ("c.npz.bak")
    other.write_bytes(b"")
    assert _resume(y_tilde, alpha, path).iterations_done == 12  # the checkpoint is intact
    assert sorted(p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")) == [
        other.name]


# ---- a forger who recomputes the digest: the content is checked all the same ------------------



@pytest.mark.parametrize("name", ["state__theta", "log_joint", "samples__phi", "mu_sum"])
def test_nan_in_a_checkpoint_with_a_matching_digest_is_refused(saved, name):
    y_tilde, alpha, path = saved
    with np.load(path) as z:
        value = z[name].copy()
    value.flat[0] = np.nan
    _rewrite(path, **{name: value})  # the digest recomputed
    with pytest.raises(ValueError, match=rf"checkpoint {path}: array '{name}' holds NaN"):
        _resume(y_tilde, alpha, path)


@pytest.mark.parametrize("arrays, match", [
    ({"mu_sum": np.ones(751)}, "do not fit its model"),
    ({"mu_sum": np.ones((2, 2, 2))}, "do not fit its model"),
    ({"mu_sum": np.ones((31, 25))}, "is not that of its model"),
    ({"samples__theta": np.ones((2, 2, 2))}, "saved draws of 'theta' have shape"),
    ({"state__phi": np.ones((3, 26))}, "saved draws of 'phi' have shape"),
    ({"evil__x": np.ones(2)}, "array 'evil__x' is not part of a checkpoint"),
    ({"iter_seconds": np.full(6, np.inf)}, "infinite seconds"),
    ({"state__theta": np.full((30, 3), "x")}, "'state__theta' has dtype"),
])
def test_arrays_of_the_wrong_shape_or_kind_are_refused_though_the_digest_matches(saved, arrays,
                                                                                  match):
    y_tilde, alpha, path = saved
    _rewrite(path, **arrays)
    with pytest.raises(ValueError, match=rf"checkpoint {path}: .*{match}"):
        _resume(y_tilde, alpha, path)


@pytest.mark.parametrize("arrays, match", [
    ({"aux__lam_plus": np.ones((2, 2))}, "arrays of the data's shape disagree"),
    ({"aux__lam_minus": np.full((30, 25), np.inf)}, "'aux__lam_minus' holds NaN"),
])
def test_a_forged_auxiliary_state_is_refused(topic_data, tmp_path, arrays, match):
    _, _, y_tilde, alpha = topic_data
    path = tmp_path / "b.npz"
    fit_private(y_tilde, alpha, TopicModel(3), method="bessel", rng=5,
                run=RunOptions(checkpoint=path, **{**RUN, "n_iter": 6}))
    _rewrite(path, **arrays)
    with pytest.raises(ValueError, match=rf"checkpoint {path}: .*{match}"):
        fit_private(y_tilde, alpha, TopicModel(3), method="bessel",
                    run=RunOptions(checkpoint=path, resume=True, n_iter=12, burn_in=2, thin=2,
                                   progress=False))


def test_a_forged_seed_is_refused(saved):
    y_tilde, alpha, path = saved
    _rewrite(path, meta={"seed": "five"})
    with pytest.raises(ValueError, match=rf"checkpoint {path}: its seed 'five'"):
        _resume(y_tilde, alpha, path)


def test_a_timing_not_booked_is_no_fault(saved):
    """An iteration interrupted before its time was booked records NaN seconds: resumable."""
    y_tilde, alpha, path = saved
    with np.load(path) as z:
        seconds = z["iter_seconds"].copy()
    seconds[-1] = np.nan
    _rewrite(path, iter_seconds=seconds)
    assert _resume(y_tilde, alpha, path).iterations_done == 12
