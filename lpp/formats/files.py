"""Atomic, byte-reproducible file writing shared by data_prep, the pipeline and bench.

The on-disk formats (:mod:`lpp.formats.counts`, :mod:`lpp.formats.privatized`, :mod:`lpp.formats.fits`) are all a data
file plus JSON metadata that records its sha256, written by :func:`write_verified` and read
back by :func:`read_verified`; checkpoints stream into :func:`atomic_writer`, whose temporary
files a killed writer leaves behind are removed by :func:`remove_stale_temporaries`.

A reader never sees a half-written file: everything is written to a temporary file in the
target's directory and renamed into place. ``npz_bytes`` fixes the zip timestamps so the same
arrays always give the same bytes (DVC hashes them).
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
#: the temporary file of a write of ``name`` is ``.name.<random, no dot>.tmp``, beside it
_TMP_SUFFIX = ".tmp"


def _tmp_prefix(path: Path) -> str:
    return f".{path.name}."


@contextlib.contextmanager
def atomic_writer(path):
    """Open a temporary file beside ``path`` for writing; on a clean exit it is flushed,
    synced and renamed onto ``path``, on an exception (Ctrl-C included) it is removed.
    ``path``'s folder is created if missing.

    For outputs too large to build in memory first (checkpoints stream ``numpy.savez`` into it).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(dir=path.parent, prefix=_tmp_prefix(path),
                                         suffix=_TMP_SUFFIX, delete=False)
    try:
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, 0o644)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def remove_stale_temporaries(path) -> list[Path]:
    """Remove the temporary files of :func:`atomic_writer` beside ``path`` (its removed paths).

    A writer killed mid-write (SIGKILL, power loss) cannot remove its temporary file; call this
    before writing ``path`` again when no other process writes it at the same time (it would
    remove that writer's file too).
    """
    path = Path(path)
    prefix = _tmp_prefix(path)
    if not path.parent.is_dir():
        return []
    removed = []
    for entry in path.parent.iterdir():
        # the random middle has no dot, so the temporaries of "name.x" are not taken for "name"'s
        middle = entry.name[len(prefix):-len(_TMP_SUFFIX)]
        if (entry.name.startswith(prefix) and entry.name.endswith(_TMP_SUFFIX) and middle
                and "." not in middle and entry.is_file()):
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


def atomic_write_bytes(path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` through a temporary file and an atomic rename."""
    with atomic_writer(path) as handle:
        handle.write(payload)


def json_bytes(obj) -> bytes:
    """Canonical JSON bytes (key order as given, 1-space indent, ASCII, trailing newline)."""
    return (json.dumps(obj, indent=1, ensure_ascii=True, allow_nan=False) + "\n").encode()


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """A compressed ``.npz`` whose bytes depend only on the arrays (fixed zip timestamps)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o644 << 16
            archive.writestr(info, _npy_bytes(array), compresslevel=6)
    return buffer.getvalue()


def write_json(path, obj) -> Path:
    """Write ``obj`` as canonical JSON to ``path`` atomically; returns the path."""
    path = Path(path)
    atomic_write_bytes(path, json_bytes(obj))
    return path


def write_verified(out_dir, payload: bytes, meta: dict, *, meta_file: str, file_key: str,
                   sha_key: str, extra_files: dict[str, bytes] | None = None) -> Path:
    """Write a versioned output that :func:`read_verified` reads back: a data file, optional
    extra files, then the JSON metadata that vouches for the data.

    ``meta`` names the data file under ``file_key`` (and carries ``format`` and
    ``format_version``); its ``sha_key`` entry is set to the data's sha256, in place if the
    key is already there (so the caller's key order is kept). Everything is serialised before
    the first file is touched and each file is replaced atomically, the metadata last: a
    reader never sees metadata that vouches for a data file it does not describe.
    """
    for key in ("format", "format_version", file_key):
        if key not in meta:
            raise ValueError(f"the metadata of a verified output needs {key!r}")
    meta = dict(meta)
    meta[sha_key] = hashlib.sha256(payload).hexdigest()
    meta_payload = json_bytes(meta)
    out_dir = Path(out_dir)
    atomic_write_bytes(out_dir / meta[file_key], payload)
    for name, extra in (extra_files or {}).items():
        atomic_write_bytes(out_dir / name, extra)
    atomic_write_bytes(out_dir / meta_file, meta_payload)
    return out_dir


def read_verified(path, *, meta_file: str, format_name: str, format_version,
                  file_key: str, sha_key: str) -> tuple[dict, Path, bytes]:
    """Read a versioned output: its JSON metadata and the data file the metadata vouches for.

    ``path`` is the output directory or its metadata file. The metadata must name
    ``format_name`` and ``format_version`` (an int, or a tuple of the versions read); ``meta[file_key]`` is the data file (beside the
    metadata) whose sha256 must equal ``meta[sha_key]``. Returns (meta, data path, bytes).
    Raises ``FileNotFoundError`` or a ``ValueError`` that names the file and the problem.
    """
    path = Path(path)
    meta_path = path / meta_file if path.is_dir() else path
    if not meta_path.is_file():
        raise FileNotFoundError(f"no {meta_file} at {path}")
    meta = json.loads(meta_path.read_text())
    if meta.get("format") != format_name:
        raise ValueError(f"{meta_path}: not an {format_name} file (format={meta.get('format')!r})")
    versions = (format_version,) if isinstance(format_version, int) else tuple(format_version)
    if meta.get("format_version") not in versions:
        raise ValueError(f"{meta_path}: format version {meta.get('format_version')!r} is not "
                         f"supported (this code reads version "
                         f"{' or '.join(map(str, versions))})")
    data_path = meta_path.parent / meta[file_key]
    payload = data_path.read_bytes()
    if hashlib.sha256(payload).hexdigest() != meta[sha_key]:
        raise ValueError(f"{data_path} does not match the sha256 recorded in {meta_path}")
    return meta, data_path, payload
