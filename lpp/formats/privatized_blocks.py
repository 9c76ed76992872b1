"""Privatized data sets split into row blocks: written block by block, read by row block.

The single-file format (:mod:`lpp.formats.privatized`) holds the whole matrix in one ``.npz``; a corpus
of millions of documents does not fit one machine's memory. Here a directory holds

``block_NNNNN.npz``
    ``y_tilde`` of one block of consecutive rows (smallest signed integer type) and ``alpha``
    of those rows (shape ``(rows, 1)``): each block can be privatized and written by whoever
    holds its documents, and read by the worker that owns its rows.
``meta.json``
    ``format``/``format_version``, ``shape``, ``bounds`` (the D + 1 ... row boundaries, i.e.
    block b holds rows ``bounds[b]:bounds[b + 1]``), the sha256 of every block file, the
    mechanism's settings, ``order``, ``ledger`` and ``selection`` as in the single-file
    format (``ledger.release_sha256`` is here the digest of the bounds and the blocks'
    sha256s), and the row and column ids. Written last: a directory without it is an
    unfinished write.

Rows and columns are in canonical order, as in the single-file format (its module docstring,
*Order*): the column ids given to the writer, and the row ids of the blocks one after
another, must be distinct and sorted by :func:`lpp.formats.privatized.canonical_key`, or the
write is refused; :func:`privatize_blocks` puts the columns of every block in that order
itself (rows arrive a block at a time, so their order is the caller's to keep).

The directory is written whole or not at all: :class:`PrivatizedBlockWriter` writes its blocks
into a temporary folder beside the target and :meth:`~PrivatizedBlockWriter.close` swaps it in
by a rename (:func:`lpp.formats.files.atomic_folder`). A failed, aborted or killed write leaves
the previous directory as it was, and a rewrite leaves no block of the previous one behind
(stale noisy copies of the same rows, averaged with the new ones, would reduce the noise).
:class:`PrivatizedBlocks` trusts nothing it reads: ``meta.json``'s fields, each block's
location (inside the folder, no link out), dtype (integers, never cast), shape and alpha are
checked, and a refusal is a :class:`lpp.formats.files.FormatError` (a ``ValueError``) that
names the file and the field.

No process ever needs the whole matrix: :class:`PrivatizedBlockWriter` takes one block at a
time and :class:`PrivatizedBlocks` reads one block at a time (checking its sha256). As with
the single-file format, true counts never enter it, and neither does the noise seed;
:func:`privatize_blocks` is the data owners' side, noising each block with its own stream
(system randomness, or a stream keyed by a secret key's or a simulation's seed and the block).
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import re
from pathlib import Path

import numpy as np

from lpp.validation import noise_level_array, non_negative_int, observed_mask
from lpp.formats.files import (FormatError, MissingFileError, atomic_folder, atomic_write_bytes,
                               confined_file, finite_member, integer_member, json_bytes,
                               known_fields, meta_field, npz_bytes, read_bytes, read_meta,
                               read_npz)
from lpp.mechanism import alpha_from_epsilon, privatize
from lpp.formats.privatized import (ORDER, RANDOMNESS, _check_canonical, _check_copy,
                                    _refuse_masked, _smallest_signed, canonical_key,
                                    canonical_order, check_meta_release, check_meta_settings,
                                    check_level, check_noise_level, check_release_settings,
                                    check_selection, dataset_id, noise_seed, noise_source,
                                    noisiest_level, notify_simulation)

FORMAT_NAME = "lpp.formats.privatized_blocks"
#: 1 recorded the noise seed (a leak); 2 kept the order the writer gave and stated no ledger;
#: such folders are refused. 3 labelled any seed ``seeded``: read, as a simulation
FORMAT_VERSION = 4
READ_VERSIONS = (3, 4)
#: every field of the folder's ``meta.json``; any other is refused on reading
META_FIELDS = ("format", "format_version", "epsilon", "N", "epsilon_over_n", "mechanism",
               "randomness", "source", "order", "shape", "bounds", "block_sha256", "ledger",
               "selection", "row_ids", "column_ids")
META_FILE = "meta.json"


def _block_name(b: int) -> str:
    return f"block_{b:05d}.npz"


_BLOCK_FILE = re.compile(r"block_\d{5,}\.npz")


def _owns(name: str) -> bool:
    return name == META_FILE or _BLOCK_FILE.fullmatch(name) is not None


class PrivatizedBlockWriter:
    """Write a privatized data set one row block at a time; :meth:`close` writes ``meta.json``.

    Parameters
    ----------
    out_dir : path
        The directory. It is built under a temporary name beside it and replaces it whole at
        :meth:`close`; until then an existing directory stays as it was. An existing directory
        that holds files other than blocks and ``meta.json`` is refused.
    n_cols : int
        Columns of every block.
    epsilon, N : float
        The mechanism's privacy level and its count bound (recorded).
    randomness : {"system", "secret key", "simulation"}
        Where the noise came from (recorded; the seed itself never is):
        :data:`lpp.formats.privatized.RANDOMNESS`.
    mechanism, source : str
        ``"fast"`` or ``"exact"``; the name of the data set the blocks were made from.
    column_ids : sequence of str
        One id per column, distinct and in canonical order.
    copy : int, optional
        The replicate (the ledger's ``copy``; None: the one copy).
    selection : list of dict, optional
        How the rows, columns and held-out mask were chosen
        (:func:`lpp.formats.privatized.check_selection`; None: not stated).

    Use as a context manager: on an exception the write is aborted (:meth:`abort`) and the
    previous directory, if any, is untouched; the new one appears, whole, at :meth:`close`.
    """

    def __init__(self, out_dir, *, n_cols: int, epsilon, N, randomness: str, mechanism: str,
                 source: str, column_ids, copy=None, selection=None):
        if randomness not in RANDOMNESS:
            raise ValueError(f"randomness must be one of {RANDOMNESS}, got {randomness!r}")
        epsilon, N = check_release_settings(epsilon, N, mechanism, source)
        if len(column_ids) != n_cols:
            raise ValueError(f"{len(column_ids)} column ids for {n_cols} columns")
        column_ids = [str(c) for c in column_ids]
        _check_canonical(column_ids, "column ids")
        self.out_dir = Path(out_dir)
        self.n_cols = int(n_cols)
        self._meta = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
                      "epsilon": epsilon, "N": N, "epsilon_over_n": epsilon / N,
                      "mechanism": mechanism, "randomness": randomness, "source": source,
                      "order": ORDER,
                      "copy": _check_copy(copy), "selection": check_selection(selection),
                      "column_ids": column_ids}
        self._bounds, self._sha, self._row_ids = [0], [], []
        self._loss = 0.0  # -log(alpha) of the least noised row so far
        self._swap = atomic_folder(self.out_dir, owns=_owns)
        self._tmp = self._swap.__enter__()  # the folder the blocks go to until close()

    def write(self, y_tilde, alpha, row_ids) -> None:
        """Append the next block of rows.

        Parameters
        ----------
        y_tilde : array_like of int, shape (rows, n_cols)
            The block's privatized counts.
        alpha : float or array_like, shape (rows, 1)
            The mechanism's parameter of each row, in (0, 1).
        row_ids : sequence of str
            One id per row: distinct, in canonical order, after those of the blocks before.

        Raises
        ------
        ValueError
            For a block of the wrong shape or type, alpha outside (0, 1), ids that do not fit,
            ids out of canonical order, or a writer already closed or aborted.
        TypeError
            For a ``numpy.ma`` masked array (the format has no missing entries).
        """
        self._check_open()
        _refuse_masked(y_tilde, "y_tilde")
        y_tilde = np.asarray(y_tilde)
        if y_tilde.ndim != 2 or y_tilde.dtype.kind not in "iu" or y_tilde.shape[1] != self.n_cols:
            raise ValueError(f"a block must be an integer matrix with {self.n_cols} columns, got "
                             f"{y_tilde.dtype} with shape {y_tilde.shape}")
        n_rows = y_tilde.shape[0]
        if n_rows == 0:
            raise ValueError("a block must hold at least one row")
        if len(row_ids) != n_rows:
            raise ValueError(f"{len(row_ids)} row ids for a block of {n_rows} rows")
        row_ids = [str(r) for r in row_ids]
        _check_canonical(row_ids, f"row ids of block {len(self._sha)}")
        if self._row_ids and not canonical_key(self._row_ids[-1]) < canonical_key(row_ids[0]):
            raise ValueError(f"block {len(self._sha)} starts with row id {row_ids[0]!r}, not after "
                             f"the previous block's last {self._row_ids[-1]!r}: the rows of a "
                             "private folder are in canonical order")
        alpha = np.broadcast_to(noise_level_array(alpha), (n_rows, 1))
        check_level(alpha, self._meta["epsilon_over_n"], where=f"block {len(self._sha)}: ",
                    bound_only=True)
        payload = npz_bytes({"y_tilde": _smallest_signed(y_tilde),
                             "alpha": np.ascontiguousarray(alpha)})
        atomic_write_bytes(self._tmp / _block_name(len(self._sha)), payload)
        self._sha.append(hashlib.sha256(payload).hexdigest())
        self._bounds.append(self._bounds[-1] + n_rows)
        self._row_ids += row_ids
        self._loss = max(self._loss, noisiest_level(alpha))

    def _check_open(self) -> None:
        if self._swap is None:
            raise ValueError(f"the writer of {self.out_dir} is closed or aborted")
        if not self._tmp.is_dir():  # another write of out_dir took it for a killed one's
            self.abort()
            raise ValueError(f"the temporary folder {self._tmp} of this write of "
                             f"{self.out_dir} was removed (by another write of the same "
                             "folder?); the write is aborted")

    def close(self) -> Path:
        """Write ``meta.json`` and swap the new directory in whole; return the directory.

        With no block written it raises ValueError and the writer stays open (write a block,
        or :meth:`abort`).
        """
        self._check_open()
        if not self._sha:
            raise ValueError("no block was written")
        # every block was within the recorded level; some row must reach it
        check_level(np.exp(-self._loss), self._meta["epsilon_over_n"],
                    where=f"{self.out_dir}: the blocks written: ")
        settings = {k: v for k, v in self._meta.items()
                    if k not in ("copy", "selection", "column_ids")}
        ledger = {"dataset_id": dataset_id(self._row_ids, self._meta["column_ids"]),
                  "copy": self._meta["copy"],
                  "release_sha256": blocks_release_sha256(self._bounds, self._sha)}
        meta = {**settings, "shape": [self._bounds[-1], self.n_cols], "bounds": self._bounds,
                "block_sha256": self._sha, "ledger": ledger,
                "selection": self._meta["selection"], "row_ids": self._row_ids,
                "column_ids": self._meta["column_ids"]}
        swap, self._swap = self._swap, None
        try:
            atomic_write_bytes(self._tmp / META_FILE, json_bytes(meta))
        except BaseException as exc:
            swap.__exit__(type(exc), exc, exc.__traceback__)
            raise
        swap.__exit__(None, None, None)
        return self.out_dir

    def abort(self) -> None:
        """Drop the blocks written so far; the previous directory, if any, stays as it was."""
        if self._swap is not None:
            swap, self._swap = self._swap, None
            error = RuntimeError(f"the write of {self.out_dir} was aborted")
            with contextlib.suppress(RuntimeError):
                swap.__exit__(RuntimeError, error, None)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            try:
                self.close()
            except BaseException:  # the folder cannot be completed: leave the old one as it was
                self.abort()
                raise
        else:
            self.abort()


class PrivatizedBlocks:
    """A privatized data set in row blocks, opened for reading (reads ``meta.json`` only).

    Attributes
    ----------
    path : Path
    shape : tuple of int
        ``(D, V)`` of the whole matrix.
    bounds : ndarray of int64
        Row boundaries: block b holds rows ``bounds[b]:bounds[b + 1]``.
    meta : dict
    mask : ndarray of bool or None
        The entries a fit leaves out (True = missing, as in ``numpy.ma``): None, or set by
        :meth:`with_mask`. Held in memory, never written to the folder.
    """

    mask = None

    def __init__(self, path):
        path = Path(path)
        self.path = path.parent if path.name == META_FILE else path
        if not (self.path / META_FILE).is_file():
            raise MissingFileError(f"{self.path} holds no {META_FILE} (not a block format "
                                   "directory, or its write did not finish)")
        meta, meta_path = read_meta(self.path, meta_file=META_FILE, format_name=FORMAT_NAME,
                                    format_version=READ_VERSIONS)
        known_fields(meta, meta_path, META_FIELDS)
        n_rows, n_cols = meta_field(meta, "shape", meta_path, "int_list", length=2)
        bounds = meta_field(meta, "bounds", meta_path, "int_list")
        if len(bounds) < 2 or bounds[0] != 0 or bounds[-1] != n_rows or any(
                lo >= hi for lo, hi in zip(bounds, bounds[1:])):
            raise FormatError(f"{meta_path}: field 'bounds' must rise strictly from 0 to the "
                              f"{n_rows} rows of 'shape', got {bounds[:8]}"
                              f"{' ...' if len(bounds) > 8 else ''}")
        shas = meta_field(meta, "block_sha256", meta_path, "str_list", length=len(bounds) - 1)
        row_ids = meta_field(meta, "row_ids", meta_path, "str_list", length=n_rows)
        column_ids = meta_field(meta, "column_ids", meta_path, "str_list", length=n_cols)
        check_meta_settings(meta, meta_path)
        ledger = check_meta_release(meta, meta_path, row_ids, column_ids)
        if ledger["release_sha256"] != blocks_release_sha256(bounds, shas):
            raise FormatError(f"{meta_path} (ledger): field 'release_sha256' does not match the "
                              "bounds and the blocks' sha256")
        self.meta = meta
        self.shape = (n_rows, n_cols)
        self.bounds = np.asarray(bounds, dtype=np.int64)
        notify_simulation(meta, self.path)

    def with_mask(self, mask) -> "PrivatizedBlocks":
        """These data with the entries ``mask`` marks missing (True = missing, the whole
        matrix's shape): what a fit on a cluster leaves out, as a ``numpy.ma`` array's mask
        does in memory. The folder is not changed."""
        masked = copy.copy(self)
        masked.mask = None if mask is None else ~observed_mask(mask, self.shape)
        return masked

    @property
    def n_blocks(self) -> int:
        return int(self.bounds.size - 1)

    def read_block(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """``(y_tilde (rows x V, int64), alpha (rows x 1))`` of block ``b``, sha256-checked.

        Raises
        ------
        ValueError
            For a block index out of range; a :class:`lpp.formats.files.FormatError` (a
            ValueError) naming the file and the array for a block that is missing, outside
            the folder, disagrees with its checksum, or is not an integer matrix of its rows
            with a valid alpha per row.
        """
        if not 0 <= b < self.n_blocks:
            raise ValueError(f"block {b} of a data set with {self.n_blocks} blocks")
        meta_path = self.path / META_FILE
        path = confined_file(self.path, _block_name(b), meta_path, f"block_sha256[{b}]")
        payload = read_bytes(path)
        if hashlib.sha256(payload).hexdigest() != self.meta["block_sha256"][b]:
            raise FormatError(f"{path}: sha256 disagrees with {meta_path}")
        rows = int(self.bounds[b + 1] - self.bounds[b])
        arrays = read_npz(payload, path, required=("y_tilde", "alpha"),
                          expect={"y_tilde": ("iu", [(rows, self.shape[1])]),
                                  "alpha": ("iuf", [(rows, 1)])})
        y_tilde = integer_member(arrays, "y_tilde", path, shape=(rows, self.shape[1]))
        alpha = check_noise_level(finite_member(arrays, "alpha", path, shape=(rows, 1)),
                                  "alpha", path)
        check_level(alpha, self.meta["epsilon_over_n"], FormatError, f"{path}: ",
                    bound_only=True)
        return y_tilde, alpha

    def to_dense(self) -> tuple[np.ndarray, np.ndarray]:
        """The whole ``(y_tilde, alpha)`` in memory, filled block by block (one block's copy
        at a time beside the matrix)."""
        y_tilde = np.empty(self.shape, dtype=np.int64)
        alpha = np.empty((self.shape[0], 1))
        for b in range(self.n_blocks):
            lo, hi = self.bounds[b], self.bounds[b + 1]
            y_tilde[lo:hi], alpha[lo:hi] = self.read_block(b)
        return y_tilde, alpha


def blocks_release_sha256(bounds, block_sha256) -> str:
    """The ledger's ``release_sha256`` of a block folder: a digest of its row bounds and its
    blocks' sha256 (each block holds ``y_tilde`` and ``alpha`` only, so these name the
    release)."""
    text = json.dumps({"bounds": [int(b) for b in bounds], "blocks": list(block_sha256)},
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def privatize_blocks(count_blocks, out_dir, *, n_cols: int, epsilon, N, source: str,
                     column_ids, row_ids, seed=None, simulation: bool = False, copy=None,
                     selection=None) -> PrivatizedBlocks:
    """Noise blocks of true counts with the geometric mechanism and write the block format.

    The data owners' side of the boundary, one block in memory at a time: every block gets
    independent ``2Geo(exp(-epsilon/N))`` noise. With ``seed=None`` (the default) each block's
    noise comes from system randomness and is recorded nowhere. A seed gives block b the stream
    ``numpy.random.default_rng(noise_seed(seed, copy, epsilon / N, dataset_id(block's row
    ids, column_ids)) + [b])``: a block's noise depends on nothing but its own settings and
    ids, so the result does not depend on how many blocks are noised at once or where, and
    copies, levels and data sets noised under one seed are independent. Whoever holds the seed
    removes the noise: it must be a secret key
    (:func:`lpp.formats.privatized.check_secret_key`), or ``simulation=True`` declares the
    folder a simulation, not a private release.

    The columns of every block are put in canonical order of ``column_ids`` before the noise
    is drawn; the rows must come in canonical order of ``row_ids``, which are required: ids
    made up from the rows' positions would publish the order the owners kept them in (rows
    ranked by their true totals, say). The directory is replaced whole once every block is
    written (see :class:`PrivatizedBlockWriter`): if noising or writing any block fails,
    ``out_dir`` is left as it was.

    Parameters
    ----------
    count_blocks : iterable of array_like
        Consecutive row blocks of the true counts (non-negative integers, ``n_cols`` columns).
    out_dir : path
    n_cols : int
    epsilon, N : float
    source : str
    column_ids : sequence of str
        Distinct; any order (the blocks' columns are sorted by them).
    row_ids : sequence of str
        One id per row of the blocks, distinct and in canonical order: the rows' own ids
        (documents', people's), never their positions.
    seed : int, optional
        None (default): system randomness. A secret key (at least
        :data:`lpp.formats.privatized.MIN_SECRET_KEY`), or any non-negative int with
        ``simulation=True``: reproducible noise.
    simulation : bool, optional
        Declare a simulation study: the seed may be small, and the folder states that its
        noise is reproducible by whoever holds it.
    copy, selection : optional
        The ledger's replicate and the selection record (:class:`PrivatizedBlockWriter`).

    Returns
    -------
    PrivatizedBlocks

    Raises
    ------
    TypeError
        If ``row_ids`` is None.
    ValueError
        For a guessable seed without ``simulation``, ids that do not fit the blocks, or the
        writer's refusals.
    """
    if row_ids is None:
        raise TypeError("privatize_blocks needs row_ids, the rows' own ids in canonical order: "
                        "ids made from the rows' positions would publish the owners' order of "
                        "the rows (rows ranked by their true totals, say)")
    seed = None if seed is None else non_negative_int(seed, "seed")
    # refuses a guessable seed before anything is written, and names the folder's randomness
    _, randomness = noise_source(seed, exact=False, simulation=simulation)
    alpha = float(alpha_from_epsilon(epsilon, N))
    if len(column_ids) != n_cols:
        raise ValueError(f"{len(column_ids)} column ids for {n_cols} columns")
    cols = canonical_order(column_ids, "column ids")
    column_ids = [str(column_ids[k]) for k in cols]
    with PrivatizedBlockWriter(out_dir, n_cols=n_cols, epsilon=epsilon, N=N, randomness=randomness,
                               mechanism="fast", source=source, column_ids=column_ids,
                               copy=copy, selection=selection) as writer:
        lo = 0
        for b, counts in enumerate(count_blocks):
            _refuse_masked(counts, f"block {b} of the counts")
            counts = np.asarray(counts)
            if counts.ndim != 2 or counts.shape[1] != n_cols:
                raise ValueError(f"block {b} of the counts must be a matrix with {n_cols} "
                                 f"columns, got shape {counts.shape}")
            counts = counts[:, cols]
            ids = row_ids[lo:lo + counts.shape[0]]
            key = (None if seed is None else
                   noise_seed(seed, copy or 0, epsilon / N, dataset_id(ids, column_ids)) + [b])
            rng, _ = noise_source(key, exact=False, simulation=simulation)
            writer.write(privatize(counts, alpha, rng=rng), alpha, ids)
            lo += counts.shape[0]
        if lo != len(row_ids):
            raise ValueError(f"{len(row_ids)} row ids for the {lo} rows of the blocks")
    return PrivatizedBlocks(out_dir)
