import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from lpp.formats.counts import (COUNTS_FILE, FORMAT_VERSION, META_FILE, SUMMARY_FILE,
                          load_counts, write_counts)


def _write(out, counts=None, **overrides):
    counts = np.array([[0, 2, 1], [3, 0, 0]]) if counts is None else counts
    args = dict(row_ids=["d1", "d2"], column_ids=["a", "b", "c"], kind="topics",
                params={"seed": 1}, inputs={"input": {"name": "x", "sha256": "0" * 64}},
                summary={"documents": 2})
    return write_counts(out, counts, **{**args, **overrides})


def test_round_trip(tmp_path):
    heldout = np.array([[True, False], [False, True]])
    _write(tmp_path / "out", arrays={"heldout": heldout}, kind="network",
           row_ids=["x", "y"], column_ids=["x", "y"], counts=np.array([[0, 4], [1, 0]]))
    data = load_counts(tmp_path / "out")
    assert isinstance(data.counts, sp.csr_array) and data.counts.dtype == np.int64
    np.testing.assert_array_equal(data.counts.toarray(), [[0, 4], [1, 0]])
    np.testing.assert_array_equal(data.arrays["heldout"], heldout)
    assert data.row_ids == ["x", "y"] and data.kind == "network"
    assert data.meta["format_version"] == FORMAT_VERSION and data.summary == {"documents": 2}
    assert json.loads((tmp_path / "out" / SUMMARY_FILE).read_text()) == {"documents": 2}
    # scipy reads the matrix file on its own
    np.testing.assert_array_equal(sp.load_npz(tmp_path / "out" / COUNTS_FILE).toarray(),
                                  [[0, 4], [1, 0]])
    assert load_counts(tmp_path / "out" / META_FILE).row_ids == ["x", "y"]


def test_same_content_same_bytes(tmp_path):
    _write(tmp_path / "a")
    _write(tmp_path / "b", counts=sp.coo_array(np.array([[0, 2, 1], [3, 0, 0]])))
    for name in (COUNTS_FILE, META_FILE, SUMMARY_FILE):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]


def test_tampering_and_versions_are_detected(tmp_path):
    out = _write(tmp_path / "out")
    meta = json.loads((out / META_FILE).read_text())
    for key, value, match in [("format_version", 2, "version 2 is not supported"),
                              ("format", "other", "not an lpp.formats.counts file"),
                              ("row_ids", ["d1"], "'row_ids' has 1 entries, expected 2")]:
        (out / META_FILE).write_text(json.dumps({**meta, key: value}))
        with pytest.raises(ValueError, match=match):
            load_counts(out)
    (out / META_FILE).write_text(json.dumps(meta))
    _write(tmp_path / "other", counts=np.array([[0, 2, 1], [3, 0, 7]]))
    (out / COUNTS_FILE).write_bytes((tmp_path / "other" / COUNTS_FILE).read_bytes())
    with pytest.raises(ValueError, match="does not match the sha256"):
        load_counts(out)
    with pytest.raises(FileNotFoundError):
        load_counts(tmp_path / "missing")


@pytest.mark.parametrize("counts, ids, match", [
    (np.array([[0, 1], [1, 0]]), {}, "2 row ids and 3 column ids"),
    (np.array([[0, -1, 1], [1, 0, 0]]), {}, "non-negative"),
    (np.array([[0, 0.5, 1], [1, 0, 0]]), {}, "integer dtype"),
])
def test_bad_matrices_write_nothing(tmp_path, counts, ids, match):
    with pytest.raises(ValueError, match=match):
        _write(tmp_path / "out", counts=counts, **ids)
    assert not (tmp_path / "out").exists()


def test_extra_arrays_cannot_shadow_the_sparse_layout(tmp_path):
    with pytest.raises(ValueError, match="clash"):
        _write(tmp_path / "out", arrays={"data": np.zeros(2)})


# ---- nothing on disk is trusted: a forger who recomputes the sha256 is still refused ----------

def _refused(folder, *match):
    with pytest.raises(ValueError) as info:
        load_counts(folder)
    message = str(info.value)
    assert str(folder) in message, message
    for part in match:
        assert part in message, message


@pytest.mark.parametrize("change, match", [
    ({"drop": ("data",)}, "'data' is missing"),
    ({"drop": ("heldout",)}, "'heldout' is missing"),
    ({"arrays": {"data": np.array([-2, -1, -3])}}, "negative counts"),
    ({"arrays": {"data": np.array([2.5, 1.0, 3.0])}}, "dtype float64"),
    ({"arrays": {"indices": np.array([1, 2, 7], dtype=np.int32)}}, "not a valid CSR matrix"),
    ({"arrays": {"shape": np.array([2, 3, 1])}}, "'shape' has shape (3,)"),
    ({"arrays": {"shape": np.array(["2", "3"])}}, "'shape' has dtype"),
    ({"arrays": {"y_tilde": np.ones((2, 3), dtype=np.int64)}}, "'y_tilde' is not part"),
    ({"payload": b""}, "not a readable .npz"),
    ({"meta": {"arrays": {"heldout": 3}}}, "field 'arrays' entry 'heldout'"),
    ({"meta": {"arrays": ...}}, "'arrays' is missing"),
    ({"meta": {"row_ids": [1, 2]}}, "'row_ids' must be a list of strings"),
    ({"meta": {"shape": ...}}, "'shape' is missing"),
    ({"meta": {"counts_file": "../other/counts.npz"}}, "'counts_file' must name a file inside"),
])
def test_a_forged_folder_is_named_in_a_clear_error(tmp_path, forge, change, match):
    out = _write(tmp_path / "out", arrays={"heldout": np.zeros((2, 3), dtype=bool)})
    forge(out, data_file=COUNTS_FILE, meta_file=META_FILE, sha_key="counts_sha256", **change)
    _refused(out, match)


def test_a_counts_file_linked_from_outside_is_refused(tmp_path):
    out = _write(tmp_path / "out")
    other = _write(tmp_path / "other", counts=np.array([[9, 9, 9], [9, 9, 9]]))
    (out / COUNTS_FILE).unlink()
    (out / COUNTS_FILE).symlink_to(other / COUNTS_FILE)
    meta = json.loads((out / META_FILE).read_text())
    meta["counts_sha256"] = json.loads((other / META_FILE).read_text())["counts_sha256"]
    (out / META_FILE).write_text(json.dumps(meta))
    _refused(out, "outside its folder")


@pytest.mark.parametrize("failing", [COUNTS_FILE, SUMMARY_FILE, META_FILE])
def test_a_rewrite_cut_short_leaves_the_previous_output(tmp_path, monkeypatch, failing,
                                                        snapshot):
    """Ctrl-C between the writes of a rewrite: the previous three files are all still there
    (DVC's .gitignore beside them too), not new counts under the old meta.json."""
    from lpp.formats import files
    out = _write(tmp_path / "out")
    (out / ".gitignore").write_text("/counts.npz\n")
    before = snapshot(out)
    real = files.os.replace

    def replace(src, dst):
        if Path(dst).name == failing:
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        _write(out, counts=np.array([[5, 0, 0], [0, 0, 7]]), summary={"documents": 3})
    assert snapshot(out) == before
    np.testing.assert_array_equal(load_counts(out).counts.toarray(), [[0, 2, 1], [3, 0, 0]])
    monkeypatch.undo()
    _write(out, counts=np.array([[5, 0, 0], [0, 0, 7]]), summary={"documents": 3})
    assert load_counts(out).summary == {"documents": 3}
    assert sorted(p.name for p in out.iterdir()) == [".gitignore", COUNTS_FILE, META_FILE,
                                                     SUMMARY_FILE]
