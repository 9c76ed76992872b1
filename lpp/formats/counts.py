"""The on-disk format of a prepared count matrix (format version 1), written atomically.

An output directory holds three files:

``counts.npz``
    The counts as a scipy CSR array in the layout of :func:`scipy.sparse.save_npz`
    (keys ``format``, ``shape``, ``data`` (int64), ``indices``, ``indptr``, ``_is_array``),
    so ``scipy.sparse.load_npz`` reads it too. Extra dense arrays may follow (the network
    output adds ``heldout``, a boolean matrix of the entries held out for link prediction).
    The zip members carry a fixed timestamp, so the same content gives the same bytes.
``meta.json``
    ``format`` (``"lpp.formats.counts"``), ``format_version``, ``kind`` (``"topics"`` or
    ``"network"``), ``shape``, ``row_ids``, ``column_ids``, ``counts_sha256`` (of
    ``counts.npz``, so a mismatched pair is detected), ``params`` (every setting used),
    ``inputs`` (file names and sha256), ``summary`` and kind-specific extras (``actors``).
``summary.json``
    The summary statistics alone (a DVC metrics file).

Each file is written to a temporary name in the same directory and renamed into place, and
every byte is computed before the first file is written, so a failed run leaves no output;
a rewrite that fails part way puts the previous files back
(:func:`lpp.formats.files.write_verified`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from lpp.formats.files import (FormatError, integer_member, json_bytes, meta_field, npz_bytes,
                               read_npz, read_verified, write_verified)

FORMAT_NAME = "lpp.formats.counts"
FORMAT_VERSION = 1
COUNTS_FILE = "counts.npz"
META_FILE = "meta.json"
SUMMARY_FILE = "summary.json"
_SPARSE_KEYS = ("format", "shape", "data", "indices", "indptr", "_is_array")


@dataclass(frozen=True)
class CountData:
    """A prepared count matrix with its labels.

    ``counts`` is a ``scipy.sparse.csr_array`` of int64, rows ``row_ids`` (documents or
    sending actors), columns ``column_ids`` (vocabulary words or receiving actors).
    ``arrays`` holds the extra dense arrays (e.g. ``heldout``).
    """

    counts: sp.csr_array
    row_ids: list[str]
    column_ids: list[str]
    meta: dict
    arrays: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.meta["kind"]

    @property
    def summary(self) -> dict:
        return self.meta["summary"]


def _as_int64_csr(counts) -> sp.csr_array:
    csr = sp.csr_array(counts)
    if csr.ndim != 2:
        raise ValueError(f"counts must be a 2-d matrix, got shape {csr.shape}")
    if csr.dtype.kind not in "iub":
        raise ValueError(f"counts must have an integer dtype, got {csr.dtype}")
    csr = csr.astype(np.int64)
    csr.sum_duplicates()
    csr.eliminate_zeros()
    csr.sort_indices()
    if csr.data.size and csr.data.min() < 0:
        raise ValueError("counts must be non-negative")
    return csr


def write_counts(out_dir, counts, *, row_ids, column_ids, kind: str, params: dict, inputs: dict,
                 summary: dict, arrays: dict | None = None, extra_meta: dict | None = None) -> Path:
    """Write ``counts.npz``, ``meta.json`` and ``summary.json`` into ``out_dir``.

    Creates ``out_dir`` if needed. Everything is validated and serialised before the first
    file is touched; the three files are replaced all or none (a rewrite that fails part way
    leaves the previous output whole). Returns ``out_dir`` as a Path.
    """
    csr = _as_int64_csr(counts)
    row_ids = [str(r) for r in row_ids]
    column_ids = [str(c) for c in column_ids]
    if csr.shape != (len(row_ids), len(column_ids)):
        raise ValueError(f"counts have shape {csr.shape} but there are {len(row_ids)} row ids "
                         f"and {len(column_ids)} column ids")
    arrays = dict(arrays or {})
    clash = set(arrays) & set(_SPARSE_KEYS)
    if clash:
        raise ValueError(f"extra array names clash with the sparse layout: {sorted(clash)}")
    npz = npz_bytes({
        "format": np.array("csr"), "shape": np.array(csr.shape, dtype=np.int64),
        "data": csr.data, "indices": csr.indices, "indptr": csr.indptr,
        "_is_array": np.array(True), **arrays,
    })
    meta = {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "kind": kind,
        "shape": list(csr.shape), "counts_file": COUNTS_FILE, "counts_sha256": None,
        "arrays": {name: {"dtype": str(np.asarray(a).dtype), "shape": list(np.shape(a))}
                   for name, a in arrays.items()},
        "params": params, "inputs": inputs, "summary": summary,
        **(extra_meta or {}),
        "row_ids": row_ids, "column_ids": column_ids,
    }
    return write_verified(out_dir, npz, meta, meta_file=META_FILE, file_key="counts_file",
                          sha_key="counts_sha256", extra_files={SUMMARY_FILE: json_bytes(summary)})


def load_counts(path) -> CountData:
    """Load and validate a prepared output (its directory, or its ``meta.json``).

    Nothing in the folder is trusted (a sha256 catches damage, not a forgery that recomputed
    it). Raises :class:`lpp.formats.files.MissingFileError` (also a ``FileNotFoundError``)
    when there is no ``meta.json`` or data file, and :class:`lpp.formats.files.FormatError`
    (a ``ValueError``) naming the file and the field when the format or version is not
    supported, the data file lies outside the folder or does not match the checksum recorded
    in ``meta.json``, a field is missing or of the wrong type, the matrix is not a valid CSR
    matrix of non-negative int64 counts, or the shapes of the matrix, the ids and the extra
    arrays disagree.
    """
    meta, npz_path, payload = read_verified(
        path, meta_file=META_FILE, format_name=FORMAT_NAME, format_version=FORMAT_VERSION,
        file_key="counts_file", sha_key="counts_sha256")
    meta_path = npz_path.parent / META_FILE
    n_rows, n_cols = meta_field(meta, "shape", meta_path, "int_list", length=2)
    row_ids = meta_field(meta, "row_ids", meta_path, "str_list", length=n_rows)
    column_ids = meta_field(meta, "column_ids", meta_path, "str_list", length=n_cols)
    meta_field(meta, "kind", meta_path, "str")
    meta_field(meta, "summary", meta_path, "dict")
    specs = meta_field(meta, "arrays", meta_path, "dict")
    for name, spec in specs.items():
        described = isinstance(spec, dict) and isinstance(spec.get("dtype"), str)
        if name in _SPARSE_KEYS or not described:
            raise FormatError(f"{meta_path}: field 'arrays' entry {name!r} must describe an "
                              f"extra array by its dtype and shape, got {repr(spec)[:60]}")
        meta_field(spec, "shape", f"{meta_path} (arrays[{name!r}])", "int_list")
        try:
            np.dtype(spec["dtype"])
        except (TypeError, ValueError):
            raise FormatError(f"{meta_path}: field 'arrays' entry {name!r} names no numpy dtype "
                              f"({spec['dtype']!r:.40})") from None
    expect = {"shape": ("iu", [(2,)]), "indptr": ("iu", [(n_rows + 1,)]),
              "data": ("iu", None), "indices": ("iu", None),
              **{name: (np.dtype(spec["dtype"]).kind, [spec["shape"]])
                 for name, spec in specs.items()}}
    arrays = read_npz(payload, npz_path, required=_SPARSE_KEYS + tuple(specs), expect=expect)
    if arrays["format"].shape != () or str(arrays["format"]) != "csr":
        raise FormatError(f"{npz_path}: array 'format' must be 'csr', got {arrays['format']!r:.40}")
    shape = tuple(integer_member(arrays, "shape", npz_path, shape=(2,)).tolist())
    if shape != (n_rows, n_cols):
        raise FormatError(f"{npz_path}: shape {shape} disagrees with meta shape {meta['shape']}")
    if arrays["data"].dtype != np.int64:
        raise FormatError(f"{npz_path}: counts have dtype {arrays['data'].dtype}, expected int64")
    for name in ("data", "indices", "indptr"):
        integer_member(arrays, name, npz_path, ndim=1)
    if arrays["data"].size and arrays["data"].min() < 0:
        raise FormatError(f"{npz_path}: array 'data' holds negative counts")
    try:
        counts = sp.csr_array((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape)
        counts.check_format(full_check=True)
    except (ValueError, TypeError, IndexError) as exc:
        raise FormatError(f"{npz_path}: not a valid CSR matrix of shape {shape} "
                          f"(arrays 'data', 'indices', 'indptr': {exc})") from None
    extra = {name: arrays[name] for name in specs}
    for name, spec in specs.items():
        if list(extra[name].shape) != spec["shape"] or str(extra[name].dtype) != spec["dtype"]:
            raise FormatError(f"{npz_path}: array {name!r} does not match its description")
    return CountData(counts=counts, row_ids=row_ids, column_ids=column_ids, meta=meta,
                     arrays=extra)
