"""Atomic, byte-reproducible file writing shared by data_prep, the pipeline and bench.

The on-disk formats (:mod:`lpp.formats.counts`, :mod:`lpp.formats.privatized`, :mod:`lpp.formats.fits`) are all a data
file plus JSON metadata that records its sha256, written by :func:`write_verified` and read
back by :func:`read_verified`; checkpoints stream into :func:`atomic_writer`, whose temporary
files a killed writer leaves behind are removed by :func:`remove_stale_temporaries`.

A reader never sees a half-written file: everything is written to a temporary file in the
target's directory and renamed into place. ``npz_bytes`` fixes the zip timestamps so the same
arrays always give the same bytes (DVC hashes them). A folder that must never mix two writes
(a privatized data set: stale noisy copies of the same counts would average the noise away)
is built whole beside its target by :func:`atomic_folder` and swapped in by a rename.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import secrets
import shutil
import tempfile
import zipfile
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
#: the temporary file of a write of ``name`` is ``.name.<random, no dot>.tmp``, beside it
_TMP_SUFFIX = ".tmp"
#: a folder being replaced by :func:`atomic_folder` waits as ``.name.<random, no dot>.old``
_OLD_SUFFIX = ".old"


class FormatError(ValueError):
    """A file or folder that lpp cannot use or must not touch; the message names it."""


def _tmp_prefix(path: Path) -> str:
    return f".{path.name}."


def _is_temporary(name: str, prefix: str, suffix: str) -> bool:
    # the random middle has no dot, so the temporaries of "name.x" are not taken for "name"'s
    middle = name[len(prefix):-len(suffix)]
    return name.startswith(prefix) and name.endswith(suffix) and bool(middle) and "." not in middle


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
        if _is_temporary(entry.name, prefix, _TMP_SUFFIX) and entry.is_file():
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


def atomic_write_bytes(path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` through a temporary file and an atomic rename."""
    with atomic_writer(path) as handle:
        handle.write(payload)


# ----- whole folders -------------------------------------------------------------------------

def remove_stale_folders(path) -> list[Path]:
    """Clean up after an :func:`atomic_folder` write of ``path`` that was killed; return what
    was removed or restored.

    The temporary folders (``.name.<random>.tmp``) of killed writes are removed. A folder being
    replaced (``.name.<random>.old``) is removed too, unless the write was killed between its
    two renames and ``path`` is missing: then the previous folder is put back (it was complete).
    Call it only when no other process writes ``path`` at the same time.
    """
    path = Path(path)
    parent, prefix = path.parent, _tmp_prefix(path)
    if not parent.is_dir():
        return []
    done = []
    for entry in sorted(parent.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            continue
        if _is_temporary(entry.name, prefix, _TMP_SUFFIX):
            shutil.rmtree(entry)
            done.append(entry)
        elif _is_temporary(entry.name, prefix, _OLD_SUFFIX):
            if not os.path.lexists(path):
                os.rename(entry, path)
                log.warning("restored %s from %s, left by a write that was killed", path, entry)
            else:
                shutil.rmtree(entry)
            done.append(entry)
    return done


def _check_replaceable(path: Path, owns) -> None:
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir():
        raise FormatError(f"{path} exists and is not a folder (or is a symbolic link): refusing "
                          "to replace it; remove it or write elsewhere")
    foreign = sorted(e.name for e in path.iterdir()
                     if not (owns(e.name) or (e.name.startswith(".")
                                              and e.name.endswith(_TMP_SUFFIX))))
    if foreign:
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise FormatError(f"{path} holds {len(foreign)} file(s) that this format does not write "
                          f"({shown}); the folder is replaced whole, so it is left alone: write "
                          "to a new folder, or empty this one")


def _fsync_folder(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a platform that cannot open folders: the renames are still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_folder(path, *, owns):
    """Build the folder ``path`` whole under a temporary sibling and swap it in on a clean exit.

    Yields the temporary folder (``.name.<random>.tmp`` beside ``path``) to write into. On a
    clean exit it replaces ``path``: the previous folder is renamed aside
    (``.name.<random>.old``), the new one renamed to ``path``, and then the previous one is
    removed; so the previous folder stays complete until the new one is, and nothing of it
    survives into the new one. On an exception (Ctrl-C included) the temporary folder is
    removed and ``path`` is left as it was. Leftovers of killed writes are cleaned up first
    (:func:`remove_stale_folders`).

    ``owns(name)`` says whether a file name is one this format writes: an existing ``path``
    that holds anything else is not replaced (a :class:`FormatError`), so a mistyped output
    folder cannot wipe out someone's files.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for entry in remove_stale_folders(path):
        log.warning("cleaned up %s, left by a write of %s that was killed", entry, path)
    _check_replaceable(path, owns)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=_tmp_prefix(path), suffix=_TMP_SUFFIX))
    try:
        yield tmp
        os.chmod(tmp, 0o755)
        _fsync_folder(tmp)
        _check_replaceable(path, owns)
        if os.path.lexists(path):
            old = path.parent / f"{_tmp_prefix(path)}{secrets.token_hex(8)}{_OLD_SUFFIX}"
            os.rename(path, old)
            try:
                os.rename(tmp, path)
            except BaseException:
                os.rename(old, path)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, path)
        _fsync_folder(path.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# ----- canonical bytes -----------------------------------------------------------------------

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


# ----- verified outputs ----------------------------------------------------------------------

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
