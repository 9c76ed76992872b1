"""A saved fit and a chain's checkpoint are told apart by the format each names."""
import json

import numpy as np
import pytest

from lpp.formats.files import npz_bytes
from lpp.formats.kinds import CHECKPOINT_FORMAT, FIT_FORMAT, file_kind, wrong_kind


def _checkpoint(path, meta):
    np.savez(path, meta=np.array(json.dumps(meta)), state__theta=np.ones((2, 2)))
    return path


def _fit(folder, first="mu_hat"):
    folder.mkdir()
    (folder / "fit.npz").write_bytes(npz_bytes({first: np.ones(2), "log_joint": np.ones(1)}))
    (folder / "fit.json").write_text(json.dumps({"format": "lpp.fit", "data_file": "fit.npz"}))
    return folder


def test_a_fit_is_known_by_its_record_and_its_data_file_by_its_record_or_its_rates(tmp_path):
    fit = _fit(tmp_path / "fit")
    assert file_kind(fit) == file_kind(fit / "fit.json") == file_kind(fit / "fit.npz") == FIT_FORMAT
    # on its own, a fit's data file starts with its rates (chain 0's in a fit of several)
    for first in ("mu_hat", "chain0__mu_hat"):
        lone = tmp_path / f"{first}.npz"
        lone.write_bytes(npz_bytes({first: np.ones(2)}))
        assert file_kind(lone) == FIT_FORMAT
    # named by its record under another name
    other = _fit(tmp_path / "other", first="log_joint")
    assert file_kind(other / "fit.npz") == FIT_FORMAT


def test_a_checkpoint_is_known_by_the_format_it_names_or_its_first_member(tmp_path):
    assert file_kind(_checkpoint(tmp_path / "a.npz", {"format": CHECKPOINT_FORMAT,
                                                      "version": 3})) == CHECKPOINT_FORMAT
    # written before checkpoints named their format
    legacy = _checkpoint(tmp_path / "b.npz", {"version": 3})
    assert file_kind(legacy) == CHECKPOINT_FORMAT
    # damaged past its first member's name
    raw = legacy.read_bytes()
    (tmp_path / "c.npz").write_bytes(raw[:40])
    assert file_kind(tmp_path / "c.npz") == CHECKPOINT_FORMAT
    # a file of that layout naming another format is neither
    assert file_kind(_checkpoint(tmp_path / "d.npz", {"format": "mine"})) is None


@pytest.mark.parametrize("content", [b"", b"PK", b"not a zip at all, longer than a header"])
def test_anything_else_is_neither(tmp_path, content):
    (tmp_path / "x.npz").write_bytes(content)
    assert file_kind(tmp_path / "x.npz") is None
    assert file_kind(tmp_path / "nowhere") is None and file_kind(tmp_path) is None
    assert wrong_kind(tmp_path / "x.npz", FIT_FORMAT) is None


def test_the_wrong_kind_is_named_with_its_file(tmp_path):
    fit, checkpoint = _fit(tmp_path / "fit"), _checkpoint(tmp_path / "c.npz", {"version": 3})
    assert wrong_kind(fit / "fit.npz", CHECKPOINT_FORMAT) == (
        f"{fit / 'fit.npz'} is a saved fit (format 'lpp.fit'), not a checkpoint of a chain "
        "(format 'lpp.checkpoint')")
    assert wrong_kind(checkpoint, FIT_FORMAT).startswith(f"{checkpoint} is a checkpoint")
    assert wrong_kind(fit, FIT_FORMAT) is None and wrong_kind(checkpoint, CHECKPOINT_FORMAT) is None
