import numpy as np
import pytest

from lpp.formats.files import atomic_write_bytes, npz_bytes, write_json


def test_atomic_write_leaves_the_old_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    atomic_write_bytes(target, b"old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("lpp.formats.files.os.replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_atomic_write_creates_the_missing_folders(tmp_path):
    target = tmp_path / "a" / "b" / "f.txt"
    atomic_write_bytes(target, b"payload")
    assert target.read_bytes() == b"payload"
    assert [p.name for p in target.parent.iterdir()] == ["f.txt"]


def test_npz_bytes_depend_only_on_the_arrays():
    arrays = {"a": np.arange(5), "b": np.eye(2)}
    assert npz_bytes(arrays) == npz_bytes(dict(arrays))
    assert npz_bytes(arrays) != npz_bytes({"a": np.arange(5) + 1, "b": np.eye(2)})


def test_write_json_refuses_nan_and_writes_nothing(tmp_path):
    with pytest.raises(ValueError):
        write_json(tmp_path / "x.json", {"bad": float("nan")})
    assert list(tmp_path.iterdir()) == []
