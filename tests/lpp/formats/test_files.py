import numpy as np
import pytest

from lpp.formats.files import atomic_write_bytes, folder_format, npz_bytes, write_json


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


# ---- whole folders ------------------------------------------------------------------------------

def _own(name):
    return name.endswith(".bin")


def test_atomic_folder_swaps_in_the_new_folder_whole(tmp_path):
    from lpp.formats.files import atomic_folder
    target = tmp_path / "out"
    for files in ({"a.bin": b"1", "b.bin": b"2", "c.bin": b"3"}, {"a.bin": b"new"}):
        with atomic_folder(target, owns=_own) as tmp:
            assert tmp.parent == tmp_path and tmp.name.startswith(".out.")
            assert not target.exists() or sorted(p.name for p in target.iterdir()) == [
                "a.bin", "b.bin", "c.bin"]  # the previous folder is whole until the swap
            for name, payload in files.items():
                atomic_write_bytes(tmp / name, payload)
        assert {p.name: p.read_bytes() for p in target.iterdir()} == files
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o755)


def test_atomic_folder_leaves_the_previous_folder_on_failure(tmp_path):
    from lpp.formats.files import atomic_folder
    target = tmp_path / "out"
    target.mkdir()
    (target / "a.bin").write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_folder(target, owns=_own) as tmp:
            atomic_write_bytes(tmp / "a.bin", b"new")
            raise KeyboardInterrupt
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert (target / "a.bin").read_bytes() == b"old"


def test_atomic_folder_refuses_a_folder_it_does_not_own(tmp_path):
    from lpp.formats.files import FormatError, atomic_folder
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    (tmp_path / "file").write_text("a file")
    for target in (tmp_path / "out", tmp_path / "file"):
        with pytest.raises(FormatError, match=str(target)):
            with atomic_folder(target, owns=_own):
                pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "out"]


def test_a_swap_killed_between_its_renames_is_undone(tmp_path):
    """Killed after the previous folder was moved aside and before the new one took its
    place: the next write (or remove_stale_folders) puts the previous one back first."""
    from lpp.formats.files import remove_stale_folders
    old = tmp_path / ".out.0123abcd.old"
    old.mkdir()
    (old / "a.bin").write_bytes(b"complete")
    (tmp_path / ".out.4567.tmp").mkdir()  # the new folder, perhaps complete, never swapped
    (tmp_path / ".out.x.y.tmp").mkdir()  # another folder's ("out.x"), its writer dead too
    assert sorted(p.name for p in remove_stale_folders(tmp_path / "out")) == [
        ".out.0123abcd.old", ".out.4567.tmp", ".out.x.y.tmp"]
    assert (tmp_path / "out" / "a.bin").read_bytes() == b"complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_live_write_beside_is_left_alone_and_a_dead_ones_leftovers_go(tmp_path):
    """The cleanup before a write removes what killed writes of any folder beside it left,
    but never the folder of a write still in progress (it holds a lock on it)."""
    from lpp.formats.files import atomic_folder, remove_stale_folders
    with atomic_folder(tmp_path / "slow", owns=_own) as live:
        (live / "a.bin").write_bytes(b"in progress")
        (tmp_path / ".dead.k1ll3d.tmp").mkdir()
        (tmp_path / ".dead.k1ll3d.tmp" / "a.bin").write_bytes(b"noise")
        removed = remove_stale_folders(tmp_path / "other")
        assert [p.name for p in removed] == [".dead.k1ll3d.tmp"]
        assert (live / "a.bin").read_bytes() == b"in progress"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slow"]


def test_a_link_out_of_a_folder_is_refused(tmp_path):
    from lpp.formats.files import FormatError, MissingFileError, confined_file
    (tmp_path / "in").mkdir()
    (tmp_path / "secret.npz").write_bytes(b"x")
    (tmp_path / "in" / "inner.npz").write_bytes(b"x")
    (tmp_path / "in" / "link.npz").symlink_to(tmp_path / "secret.npz")
    (tmp_path / "in" / "alias.npz").symlink_to("inner.npz")  # a link inside the folder is fine
    meta = tmp_path / "in" / "meta.json"
    assert confined_file(tmp_path / "in", "alias.npz", meta, "data_file").name == "alias.npz"
    for name in ("../secret.npz", str(tmp_path / "secret.npz"), "link.npz", "", ".", 3):
        with pytest.raises(FormatError, match="'data_file'"):
            confined_file(tmp_path / "in", name, meta, "data_file")
    with pytest.raises(MissingFileError, match="does not exist"):
        confined_file(tmp_path / "in", "gone.npz", meta, "data_file")


def test_folder_format_names_the_format_or_none(tmp_path):
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "meta.json").write_text('{"format": "lpp-privatized"}')
    assert folder_format(tmp_path / "good", "meta.json") == "lpp-privatized"
    assert folder_format(str(tmp_path / "good"), "meta.json") == "lpp-privatized"
    for name, text in [("list", "[1]"), ("nan", '{"format": NaN}'), ("bad", "{"),
                       ("bytes", "\udcff")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "meta.json").write_bytes(text.encode("utf-8", "surrogateescape"))
        assert folder_format(tmp_path / name, "meta.json") is None, name
    assert folder_format(tmp_path / "good" / "meta.json", "meta.json") is None  # a file
    assert folder_format(tmp_path / "missing", "meta.json") is None
    assert folder_format(np.zeros((2, 2)), "meta.json") is None
