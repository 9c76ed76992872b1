"""Readers for the input formats. Each returns plain Python/pandas objects; nothing here
decides what a document or an actor is (see :mod:`data_prep.corpus`).

Documents as text: ``text-dir`` (a folder of plain-text files), ``text-csv`` (a CSV with a
text column). Emails (RFC-822): ``emails-csv`` (a CSV with one raw message per row, the
Kaggle ``emails.csv`` layout of the shipped Enron data), ``mbox``, ``maildir`` (with
``cur/new/tmp``), ``email-dir`` (a tree of one-message files, e.g. the extracted CMU
``maildir/``), ``email-tar`` (the same tree inside a ``.tar``/``.tar.gz``, e.g. the CMU
tarball, read without extracting it). Counts: ``uci`` (a UCI bag-of-words ``docword`` file
and its ``vocab`` file). Edges: a TSV/CSV edge list and an optional node table.

Ids: files are named by their path relative to the folder (POSIX separators; a leading
``maildir/`` component of tarball members is dropped, so CMU ids look like
``allen-p/inbox/1.``), mbox messages by ``<file name>:<position>``, maildir messages by
their key, CSV rows by the id column (default: the row number), UCI documents by ``docID``.
Hidden files (a name starting with ``.``) are skipped.
"""
from __future__ import annotations

import gzip
import hashlib
import mailbox
import tarfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from data_prep.emails import decode_bytes, natural_key
from data_prep.raw import require_file, sha256_file, verified_sha256


def require_dir(path, what: str = "input") -> Path:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} folder not found: {path}")
    if not path.is_dir():
        raise ValueError(f"{what} must be a folder: {path}")
    return path


def _visible_files(root: Path) -> list[Path]:
    files = [p for p in root.rglob("*")
             if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)]
    return sorted(files, key=lambda p: natural_key(p.relative_to(root).as_posix()))


def tree_sha256(root) -> str:
    """One digest for a folder: sha256 over the sorted ``<relative path> <file sha256>`` lines."""
    root = require_dir(root)
    lines = "".join(f"{p.relative_to(root).as_posix()} {sha256_file(p)}\n"
                    for p in _visible_files(root))
    return hashlib.sha256(lines.encode()).hexdigest()


def input_record(path, expected_sha256: str | None = None) -> dict:
    """Provenance of an input (file or folder): its name and sha256 (verified for files)."""
    path = Path(path)
    if path.is_dir():
        return {"name": path.name, "kind": "folder", "sha256": tree_sha256(path)}
    return {"name": path.name, "kind": "file", "sha256": verified_sha256(path, expected_sha256)}


def _separator(path: Path, sep: str | None) -> str:
    if sep is not None:
        return sep
    return "\t" if ".tsv" in path.suffixes or ".tab" in path.suffixes else ","


def read_table(path, *, columns: list[str], sep: str | None = None, dtype=None) -> pd.DataFrame:
    """Read a CSV/TSV (gzip allowed) and check it has ``columns``."""
    path = require_file(path)
    try:
        table = pd.read_csv(path, sep=_separator(path, sep), dtype=dtype, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty") from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{path} has no column(s) {missing}; its columns are "
                         f"{list(table.columns)}")
    return table


# ---------------------------------------------------------------- documents as text

def read_text_dir(root) -> tuple[list[str], list[str]]:
    """Every visible file under ``root`` is one document (UTF-8, else cp1252, else latin-1)."""
    root = require_dir(root)
    files = _visible_files(root)
    ids = [p.relative_to(root).as_posix() for p in files]
    return ids, [decode_bytes(p.read_bytes()) for p in files]


def read_text_csv(path, *, text_column: str = "text", id_column: str | None = None
                  ) -> tuple[list[str], list[str]]:
    """One document per row of ``text_column``; ids from ``id_column`` or the row number."""
    wanted = [text_column] + ([id_column] if id_column else [])
    table = read_table(path, columns=wanted, dtype=str)
    ids = table[id_column].tolist() if id_column else [str(i) for i in range(len(table))]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: the id column {id_column!r} has repeated values")
    return ids, table[text_column].tolist()


# ---------------------------------------------------------------- emails (raw RFC-822)

def iter_emails_csv(path, *, message_column: str = "message", id_column: str | None = "file"
                    ) -> Iterator[tuple[str, str]]:
    ids, messages = read_text_csv(path, text_column=message_column, id_column=id_column)
    return zip(ids, messages)


def iter_mbox(path) -> Iterator[tuple[str, bytes]]:
    path = require_file(path)
    box = mailbox.mbox(path, create=False)
    try:
        for position, key in enumerate(box.keys()):
            yield f"{path.name}:{position}", box.get_bytes(key)
    finally:
        box.close()


def iter_maildir(root) -> Iterator[tuple[str, bytes]]:
    root = require_dir(root)
    if not (root / "cur").is_dir() or not (root / "new").is_dir():
        raise ValueError(f"{root} is not a maildir (no cur/ and new/); for a plain tree of "
                         "message files use the email-dir format")
    box = mailbox.Maildir(root, factory=None, create=False)
    for key in sorted(box.keys(), key=natural_key):
        yield key, box.get_bytes(key)


def iter_email_dir(root) -> Iterator[tuple[str, bytes]]:
    root = require_dir(root)
    for path in _visible_files(root):
        yield path.relative_to(root).as_posix(), path.read_bytes()


def _member_id(name: str) -> str:
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if parts and parts[0] == "maildir":
        parts = parts[1:]
    return "/".join(parts)


def iter_email_tar(path) -> Iterator[tuple[str, bytes]]:
    """Messages of a (compressed) tarball, streamed in archive order."""
    path = require_file(path)
    with tarfile.open(path, mode="r:*") as archive:
        for member in archive:
            member_id = _member_id(member.name)
            if not member.isfile() or any(p.startswith(".") for p in member_id.split("/")):
                continue
            yield member_id, archive.extractfile(member).read()


# ---------------------------------------------------------------- counts

def _open_text(path: Path):
    return gzip.open(path, "rt") if path.suffix == ".gz" else open(path)


def read_uci(docword_path, vocab_path) -> tuple[list[str], sp.csr_array, list[str]]:
    """A UCI bag-of-words pair: ``docword`` (``D``, ``W``, ``NNZ`` on three lines, then
    ``docID wordID count`` triples, 1-based) and ``vocab`` (word ``w`` on line ``w``)."""
    docword_path = require_file(docword_path, "docword")
    vocab_path = require_file(vocab_path, "vocab")
    with _open_text(docword_path) as handle:
        head = [handle.readline().strip() for _ in range(3)]
        try:
            n_docs, n_words, nnz = (int(h) for h in head)
        except ValueError:
            raise ValueError(f"{docword_path}: the first three lines must be D, W and NNZ, "
                             f"got {head}") from None
        triples = np.loadtxt(handle, dtype=np.int64, ndmin=2) if nnz else np.zeros((0, 3),
                                                                                   np.int64)
    if n_docs <= 0:
        raise ValueError(f"{docword_path}: D={n_docs}: the corpus is empty")
    if triples.shape != (nnz, 3):
        raise ValueError(f"{docword_path}: expected {nnz} 'docID wordID count' lines, "
                         f"got an array of shape {triples.shape}")
    doc, word, count = triples.T
    if nnz and (doc.min() < 1 or doc.max() > n_docs or word.min() < 1 or word.max() > n_words):
        raise ValueError(f"{docword_path}: a docID or wordID is out of range (1-based)")
    if nnz and count.min() < 1:
        raise ValueError(f"{docword_path}: counts must be positive integers")
    with _open_text(vocab_path) as handle:
        vocab = [line.strip() for line in handle if line.strip()]
    if len(vocab) != n_words:
        raise ValueError(f"{vocab_path} has {len(vocab)} words but {docword_path} says W={n_words}")
    counts = sp.coo_array((count, (doc - 1, word - 1)), shape=(n_docs, n_words)).tocsr()
    counts.sum_duplicates()
    return [str(d) for d in range(1, n_docs + 1)], counts, vocab


# ---------------------------------------------------------------- edges

def read_edge_list(path, *, sender_column: str = "from", recipient_column: str = "to",
                   type_column: str | None = None, sep: str | None = None) -> pd.DataFrame:
    """An edge list as columns ``sender``, ``recipient`` (and ``type`` if named)."""
    columns = [sender_column, recipient_column] + ([type_column] if type_column else [])
    table = read_table(path, columns=columns, sep=sep)
    edges = table[columns].copy()
    edges.columns = ["sender", "recipient"] + (["type"] if type_column else [])
    for column in ("sender", "recipient"):
        if not pd.api.types.is_integer_dtype(edges[column]):
            edges[column] = edges[column].astype(str).str.strip()
            if (edges[column] == "").any():
                raise ValueError(f"{path}: column {column!r} has empty values")
    return edges


def read_nodes(path, *, id_column: str = "id", sep: str | None = None) -> pd.DataFrame:
    """A node table indexed by ``id_column``."""
    table = read_table(path, columns=[id_column], sep=sep)
    if table[id_column].duplicated().any():
        raise ValueError(f"{path}: node ids in {id_column!r} are not unique")
    return table.set_index(id_column)
