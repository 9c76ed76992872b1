"""Which of lpp's files a path holds: a saved fit or a chain's checkpoint.

Both are ``.npz`` files, and one is easily handed where the other is meant (a fit's
``fit.npz`` as a run's checkpoint, a checkpoint to :func:`lpp.formats.fits.load_fit`). Each
names its format: a fit in its ``fit.json`` (``format: "lpp.fit"``, beside ``fit.npz``), a
checkpoint in the metadata it keeps as its zip's first member, ``meta.npy``
(``format: "lpp.checkpoint"``, :mod:`lpp.inference.checkpoint`). A fit's ``fit.npz`` holds no
name of its own (its bytes are those of format versions 1 and 2, unchanged): it is known by
its ``fit.json``, or, on its own, by its first member (its rates). A checkpoint whose metadata
names no format (that of an earlier release) is known by its first member, ``meta.npy``.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from lpp.formats.files import FormatError, MissingFileError, folder_format, read_json_object
from lpp.formats.fit_layout import FORMAT_NAME as FIT_FORMAT
from lpp.formats.fit_layout import META_FILE

CHECKPOINT_FORMAT = "lpp.checkpoint"
#: the array of a checkpoint's metadata, its zip's first member (:mod:`lpp.inference.checkpoint`)
CHECKPOINT_META = "meta"
CHECKPOINT_FIRST_MEMBER = f"{CHECKPOINT_META}.npy"
#: the first member of a fit's ``fit.npz``: the rates of its one chain, or of chain 0
_FIT_FIRST_MEMBERS = ("mu_hat.npy", "chain0__mu_hat.npy")
#: what each kind is, for an error that names what it was handed
DESCRIPTIONS = {FIT_FORMAT: "a saved fit (format 'lpp.fit')",
                CHECKPOINT_FORMAT: "a checkpoint of a chain (format 'lpp.checkpoint')"}


def file_kind(path) -> str | None:
    """:data:`FIT_FORMAT` for a fit directory, its ``fit.json`` or its data file;
    :data:`CHECKPOINT_FORMAT` for a checkpoint (damaged or not: a file whose first member is
    ``meta.npy``, its recorded format this one or none); None for anything else, or nothing."""
    path = Path(path)
    if path.is_dir():
        return FIT_FORMAT if folder_format(path, META_FILE) == FIT_FORMAT else None
    if not path.is_file():
        return None
    if path.suffix == ".json":
        return FIT_FORMAT if _json_format(path) == FIT_FORMAT else None
    first = _first_member(path)
    if first == CHECKPOINT_FIRST_MEMBER:
        recorded = _checkpoint_format(path)
        return CHECKPOINT_FORMAT if recorded in (CHECKPOINT_FORMAT, None) else None
    if first in _FIT_FIRST_MEMBERS or _named_by_fit_record(path):
        return FIT_FORMAT
    return None


def wrong_kind(path, expected: str) -> str | None:
    """The sentence that says ``path`` holds another kind of file than ``expected`` (a format
    name), naming the file and what it is; None when it is not a file of the other kind."""
    kind = file_kind(path)
    if kind is None or kind == expected:
        return None
    return f"{path} is {DESCRIPTIONS[kind]}, not {DESCRIPTIONS[expected]}"


def _json_format(path: Path):
    try:
        return read_json_object(path).get("format")
    except (FormatError, MissingFileError):
        return None


def _first_member(path: Path) -> str | None:
    """The name of the first member of the zip at ``path`` (its local header alone is read, so
    that a file cut short is still known); None for a file that is not a zip."""
    with open(path, "rb") as handle:
        head = handle.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            return None
        # a zip local file header: the name's length at byte 26, the name at byte 30
        name = handle.read(int.from_bytes(head[26:28], "little"))
    return name.decode("utf-8", "replace")


def _checkpoint_format(path: Path):
    """The format a checkpoint's metadata records; None where it records none (a checkpoint of
    an earlier release) or cannot be read (a damaged one)."""
    try:
        with open(path, "rb") as handle, zipfile.ZipFile(handle) as archive:
            with archive.open(CHECKPOINT_FIRST_MEMBER) as member:
                meta = json.loads(str(np.lib.format.read_array(member, allow_pickle=False)))
    except Exception:  # noqa: BLE001 - a damaged zip fails in many ways
        return None
    return meta.get("format") if isinstance(meta, dict) else None


def _named_by_fit_record(path: Path) -> bool:
    """Whether a ``fit.json`` beside ``path`` names it as its fit's data file."""
    record = path.parent / META_FILE
    if not record.is_file():
        return False
    try:
        meta = read_json_object(record)
    except (FormatError, MissingFileError):
        return False
    return meta.get("format") == FIT_FORMAT and meta.get("data_file") == path.name
