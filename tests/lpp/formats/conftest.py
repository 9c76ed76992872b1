"""Shared helpers of the tests of lpp's disk formats: a forger who rewrites a folder and
recomputes its digest, as a hostile analyst or a careless script would."""
import hashlib
import json

import numpy as np
import pytest

from lpp.formats.files import npz_bytes


def forge_folder(folder, *, data_file, meta_file, sha_key, arrays=None, drop=(), meta=None,
                 payload=None):
    """Rewrite ``folder``'s data file with ``arrays`` replaced and ``drop`` removed (or with the
    raw ``payload``), its metadata with the fields of ``meta`` replaced (a value of ``...``
    deletes the field), and record the new sha256 under ``sha_key``: the digest vouches for
    the forgery, so only the reader's own checks can refuse it."""
    data_path, meta_path = folder / data_file, folder / meta_file
    if payload is None:
        with np.load(data_path, allow_pickle=False) as npz:
            content = {name: npz[name] for name in npz.files if name not in drop}
        content.update(arrays or {})
        payload = npz_bytes(content)
    data_path.write_bytes(payload)
    stored = json.loads(meta_path.read_text())
    stored[sha_key] = hashlib.sha256(payload).hexdigest()
    for key, value in (meta or {}).items():
        if value is ...:
            stored.pop(key, None)
        else:
            stored[key] = value
    meta_path.write_text(json.dumps(stored))


@pytest.fixture(scope="session")
def forge():
    """:func:`forge_folder` (tests cannot import conftest under importlib mode)."""
    return forge_folder


def folder_bytes(folder) -> dict:
    """Every file under ``folder`` (hidden ones too) by relative path: its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def snapshot():
    """:func:`folder_bytes`."""
    return folder_bytes
