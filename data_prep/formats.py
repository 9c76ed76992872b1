"""Readers for the input formats. Each returns plain Python/pandas objects; nothing here
decides what a document or an actor is (see :mod:`data_prep.corpus`).

Documents as text: ``text-dir`` (a folder of plain-text files), ``text-lines`` (a text file
with one document per line, optionally compressed), ``text-csv`` (a CSV with a text column).
Emails (RFC-822): ``emails-csv`` (a CSV with one raw message per row, the Kaggle
``emails.csv`` layout of the shipped Enron data), ``mbox``, ``maildir`` (with
``cur/new/tmp``), ``email-dir`` (a tree of one-message files, e.g. the extracted CMU
``maildir/``), ``email-tar`` (the same tree inside a ``.tar``/``.tar.gz``, e.g. the CMU
tarball, read without extracting it). Counts: ``uci`` (a UCI bag-of-words ``docword`` file
and its ``vocab`` file). Edges: a TSV/CSV edge list (optionally with a weight column) and an
optional node table.

Every reader takes a :class:`~data_prep.streams.ReadOptions` (text encoding, size limits of
archives and compressed files; :mod:`data_prep.streams`). CSV/TSV files are UTF-8 unless a
UTF-16/UTF-32 byte-order mark says otherwise; a cell that is not UTF-8 is decoded as cp1252,
else latin-1, like a text file or an email body. A symbolic link in a corpus folder, or a
member of a tarball, that leads out of the folder or the archive is refused.

Ids: files are named by their path relative to the folder (POSIX separators; a leading
``maildir/`` component of tarball members is dropped, so CMU ids look like
``allen-p/inbox/1.``), mbox messages by ``<file name>:<position>``, maildir messages by
their key, CSV rows by the id column (default: the row number), the lines of a ``text-lines``
file by their line number (from 1), UCI documents by ``docID``.
Hidden files (a name starting with ``.``) are skipped.
"""
from __future__ import annotations

import codecs
import contextlib
import hashlib
import io
import mailbox
import posixpath
import tarfile
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from lpp.validation import MAX_TOTAL_COUNT
from data_prep.emails import decode_bytes, natural_key, unescape_bytes
from data_prep.raw import require_file, sha256_file, verified_sha256
from data_prep.streams import (InputTooLarge, ReadOptions, bom_encoding, decompression_errors,
                               open_buffered, open_input)

DEFAULT_READ = ReadOptions()


def require_dir(path, what: str = "input") -> Path:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} folder not found: {path}")
    if not path.is_dir():
        raise ValueError(f"{what} must be a folder: {path}")
    return path


def _refuse_outside_link(root: Path, path: Path) -> None:
    """Raise if the symbolic link ``path`` leads out of the folder ``root``: the corpus is
    what the folder holds, and a link must not pull another file of the machine into it."""
    try:
        target = path.resolve()
    except (OSError, RuntimeError):
        raise ValueError(f"{path} is a symbolic link that cannot be resolved (a loop): "
                         "remove the link") from None
    if not target.is_relative_to(root.resolve()):
        raise ValueError(f"{path} is a symbolic link to {str(path.readlink())!r}, which leads "
                         f"out of the corpus folder {root}: copy the file into the folder, or "
                         "remove the link")


def _visible_files(root: Path) -> list[Path]:
    files = []
    for path in root.rglob("*"):  # does not descend into linked folders
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        if path.is_symlink():
            _refuse_outside_link(root, path)
        if path.is_file():
            files.append(path)
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


def _unescaped(table: pd.DataFrame) -> pd.DataFrame:
    table.columns = [unescape_bytes(c) if isinstance(c, str) else c for c in table.columns]
    for i in range(table.shape[1]):
        if not pd.api.types.is_numeric_dtype(table.iloc[:, i]):
            table.isetitem(i, table.iloc[:, i].map(
                lambda v: unescape_bytes(v) if isinstance(v, str) else v))
    return table


def _parse_csv(path: Path, options: ReadOptions, **kwargs) -> pd.DataFrame:
    # compression=None: the stream is already decompressed (and bounded) by open_input
    with decompression_errors(path), open_buffered(path, options) as stream:
        encoding = options.encoding or bom_encoding(stream)
        try:
            return pd.read_csv(stream, encoding=encoding or "utf-8", compression=None,
                               **kwargs)
        except UnicodeDecodeError as error:
            if encoding is None:
                raise
            origin = "" if options.encoding else " (announced by its byte-order mark)"
            raise ValueError(f"{path} cannot be decoded as {encoding}{origin}: {error}; set "
                             "encoding (--encoding) to the file's text encoding") from None


def read_table(path, *, columns: list[str], sep: str | None = None, dtype=None,
               options: ReadOptions = DEFAULT_READ) -> pd.DataFrame:
    """Read a CSV/TSV (gzip, bzip2 or xz allowed) and check it has ``columns``."""
    path = require_file(path)
    kwargs = {"sep": _separator(path, sep), "dtype": dtype, "keep_default_na": False}
    try:
        try:
            table = _parse_csv(path, options, **kwargs)
        except UnicodeDecodeError:
            # Not UTF-8 throughout: keep the bytes that are not (as surrogates), then decode
            # each such cell with the fallbacks of the other readers.
            table = _unescaped(_parse_csv(path, options, encoding_errors="surrogateescape",
                                          **kwargs))
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty") from None
    except pd.errors.ParserError as error:
        raise ValueError(f"{path} is not a readable {'TSV' if kwargs['sep'] == chr(9) else 'CSV'}"
                         f" file: {error}") from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"{path} has no column(s) {missing}; its columns are "
                         f"{list(table.columns)}: set the *_column settings of "
                         "prepare_topics / prepare_network to the file's names")
    return table


# ---------------------------------------------------------------- documents as text

def read_text_dir(root) -> tuple[list[str], list[str]]:
    """Every visible file under ``root`` is one document (UTF-8, else cp1252, else latin-1)."""
    root = require_dir(root)
    files = _visible_files(root)
    ids = [p.relative_to(root).as_posix() for p in files]
    return ids, [decode_bytes(p.read_bytes()) for p in files]


def read_text_lines(path, options: ReadOptions = DEFAULT_READ) -> tuple[list[str], list[str]]:
    """One document per line of a text file (gzip, bzip2, xz or zip allowed, read within the
    limits of ``options``); a document's id is its line number, from 1.

    Every line is a document, an empty one included (it has no token, so ``min_tokens``
    decides whether it is kept), and line numbers stay those of the file. A final line
    break ends the last line; it does not start another. Lines end at ``\n`` (``\r\n``
    too). A byte-order mark, or ``options.encoding``, decodes the whole file; otherwise each
    line is decoded on its own as UTF-8, else cp1252, else latin-1, like a ``text-dir`` file.

    Raises
    ------
    ValueError
        For an empty file, a truncated or corrupt compressed file, or a line holding a NUL
        byte (a binary file, or UTF-16 text without a byte-order mark: set ``encoding``).
    """
    path = require_file(path)
    with decompression_errors(path), open_buffered(path, options) as stream:
        encoding = options.encoding or bom_encoding(stream)
        if encoding is not None:
            try:
                text = stream.read().decode(encoding)
            except UnicodeDecodeError as error:
                origin = "" if options.encoding else " (announced by its byte-order mark)"
                raise ValueError(f"{path} cannot be decoded as {encoding}{origin}: {error}; "
                                 "set encoding (--encoding) to the file's text encoding") from None
            lines = text.removeprefix("\ufeff").split("\n")
        else:
            lines = stream.read().removeprefix(codecs.BOM_UTF8).split(b"\n")
    if lines[-1] in ("", b""):
        lines.pop()  # the final line break
    if not lines:
        raise ValueError(f"{path} is empty: a text-lines file holds one document per line")
    texts = []
    for number, line in enumerate(lines, start=1):
        if isinstance(line, bytes):
            if b"\x00" in line:
                raise ValueError(
                    f"{path}: line {number} holds a NUL byte, so this is not a text file of "
                    "one document per line (UTF-16 text without a byte-order mark? set "
                    "encoding, --encoding)")
            line = decode_bytes(line)
        texts.append(line.removesuffix("\r"))
    return [str(n) for n in range(1, len(texts) + 1)], texts


def read_text_csv(path, *, text_column: str = "text", id_column: str | None = None,
                  options: ReadOptions = DEFAULT_READ) -> tuple[list[str], list[str]]:
    """One document per row of ``text_column``; ids from ``id_column`` or the row number."""
    wanted = [text_column] + ([id_column] if id_column else [])
    table = read_table(path, columns=wanted, dtype=str, options=options)
    ids = table[id_column].tolist() if id_column else [str(i) for i in range(len(table))]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: the id column {id_column!r} has repeated values")
    return ids, table[text_column].tolist()


# ---------------------------------------------------------------- emails (raw RFC-822)

def iter_emails_csv(path, *, message_column: str = "message", id_column: str | None = "file",
                    options: ReadOptions = DEFAULT_READ) -> Iterator[tuple[str, str]]:
    ids, messages = read_text_csv(path, text_column=message_column, id_column=id_column,
                                  options=options)
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
    for path in (*(root / "cur").iterdir(), *(root / "new").iterdir()):
        if path.is_symlink() and not path.name.startswith("."):
            _refuse_outside_link(root, path)
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


class _StrictTarInfo(tarfile.TarInfo):
    """tarfile ends an archive quietly at a missing, short or invalid header after the first
    one; that is how a truncated or corrupt tarball looks, so here it is an error."""

    @classmethod
    def fromtarfile(cls, archive):
        try:
            return super().fromtarfile(archive)
        except (tarfile.EmptyHeaderError, tarfile.TruncatedHeaderError,
                tarfile.InvalidHeaderError) as error:
            if archive.offset == 0:
                raise  # tarfile's own "not a tar archive" errors
            raise tarfile.ReadError(f"no valid member header at byte {archive.offset:,} "
                                    f"({error}): the archive is truncated or corrupt") from None


@contextlib.contextmanager
def _tar_errors(path: Path):
    with decompression_errors(path):
        try:
            yield
        except tarfile.TarError as error:
            raise ValueError(f"{path} is not a readable tar archive (plain, gzip, bzip2 or "
                             f"xz): {error}") from None


def _refuse_outside_member(path: Path, member: tarfile.TarInfo) -> None:
    """Raise for a member whose name or link target leads out of the archive's tree."""
    def leaves(name: str) -> bool:
        name = posixpath.normpath(name)
        return name.startswith("/") or name == ".." or name.startswith("../")

    if leaves(member.name):
        raise ValueError(f"{path}: member {member.name!r} is named outside the archive (an "
                         "absolute path or '..'): refusing a tarball that writes elsewhere")
    if member.issym() or member.islnk():
        base = posixpath.dirname(member.name) if member.issym() else ""
        if leaves(posixpath.join(base, member.linkname)):
            raise ValueError(f"{path}: member {member.name!r} links to {member.linkname!r}, "
                             "outside the archive: refusing it")


def iter_email_tar(path, options: ReadOptions = DEFAULT_READ) -> Iterator[tuple[str, bytes]]:
    """Messages of a (compressed) tarball, streamed in archive order, within the limits of
    ``options`` (a member's size is checked from its header, before its data is read)."""
    path = require_file(path)
    with open_input(path, options, archive=True) as stream, _tar_errors(path):
        archive = tarfile.open(fileobj=stream, mode="r:", tarinfo=_StrictTarInfo)
        while (member := archive.next()) is not None:
            del archive.members[:]  # tarfile keeps every header read; nothing here needs them
            _refuse_outside_member(path, member)
            member_id = _member_id(member.name)
            if not member.isfile() or any(p.startswith(".") for p in member_id.split("/")):
                continue
            if member.size > options.max_member_bytes:
                raise InputTooLarge(
                    f"{path}: member {member.name!r} is {member.size:,} bytes, more than "
                    f"max_member_bytes={options.max_member_bytes:,} (--max-member-bytes); "
                    "raise the limit if you trust the archive")
            yield member_id, archive.extractfile(member).read(member.size)


# ---------------------------------------------------------------- counts

def read_uci(docword_path, vocab_path, options: ReadOptions = DEFAULT_READ
             ) -> tuple[list[str], sp.csr_array, list[str]]:
    """A UCI bag-of-words pair: ``docword`` (``D``, ``W``, ``NNZ`` on three lines, then
    ``docID wordID count`` triples, 1-based) and ``vocab`` (word ``w`` on line ``w``)."""
    docword_path = require_file(docword_path, "docword")
    vocab_path = require_file(vocab_path, "vocab")
    with decompression_errors(docword_path), io.TextIOWrapper(
            open_buffered(docword_path, options), encoding="latin-1") as handle:
        head = [handle.readline().strip() for _ in range(3)]
        try:
            n_docs, n_words, nnz = (int(h) for h in head)
        except ValueError:
            raise ValueError(f"{docword_path}: the first three lines must be D, W and NNZ, "
                             f"got {head}") from None
        if nnz < 0:
            raise ValueError(f"{docword_path}: NNZ={nnz} must not be negative")
        try:
            # one row past NNZ at most: enough to see that the file holds more than it says
            triples = (np.loadtxt(handle, dtype=np.int64, ndmin=2, max_rows=nnz + 1)
                       if nnz else np.zeros((0, 3), np.int64))
        except ValueError as error:
            raise ValueError(f"{docword_path}: not 'docID wordID count' lines of integers "
                             f"({error})") from None
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
    with decompression_errors(vocab_path), open_buffered(vocab_path, options) as handle:
        text = decode_bytes(handle.read())
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    vocab = [line.strip() for line in lines if line.strip()]
    if len(vocab) != n_words:
        raise ValueError(f"{vocab_path} has {len(vocab)} words but {docword_path} says W={n_words}")
    counts = sp.coo_array((count, (doc - 1, word - 1)), shape=(n_docs, n_words)).tocsr()
    counts.sum_duplicates()
    return [str(d) for d in range(1, n_docs + 1)], counts, vocab


# ---------------------------------------------------------------- edges

def read_edge_list(path, *, sender_column: str = "from", recipient_column: str = "to",
                   type_column: str | None = None, weight_column: str | None = None,
                   sep: str | None = None, options: ReadOptions = DEFAULT_READ) -> pd.DataFrame:
    """An edge list as columns ``sender``, ``recipient`` (and ``type``, ``weight`` if named).

    ``weight_column`` names a column of whole non-negative counts (``3`` or ``3.0``), each
    at most :data:`MAX_TOTAL_COUNT` and parsed exactly: a row then stands for that many
    interactions instead of one.
    """
    named = {"type": type_column, "weight": weight_column}
    extra = [kind for kind, column in named.items() if column]
    columns = [sender_column, recipient_column] + [named[kind] for kind in extra]
    # The weights are read as text and parsed by _edge_weights: pandas would read a column
    # holding one "2.0" as float64, rounding every count above 2**53 before any check saw it.
    # (A weight column that is also the sender or recipient column keeps its parsed type.)
    as_text = ({weight_column: str} if weight_column
               and weight_column not in (sender_column, recipient_column) else None)
    table = read_table(path, columns=columns, sep=sep, dtype=as_text, options=options)
    edges = table[columns].copy()
    edges.columns = ["sender", "recipient"] + extra
    for column in ("sender", "recipient"):
        if not pd.api.types.is_integer_dtype(edges[column]):
            edges[column] = edges[column].astype(str).str.strip()
            if (edges[column] == "").any():
                raise ValueError(f"{path}: column {column!r} has empty values")
    if weight_column:
        edges["weight"] = _edge_weights(edges["weight"], path, weight_column)
    return edges


def _whole_count(text: str) -> int | None:
    """``text`` as an exact whole non-negative count at most :data:`MAX_TOTAL_COUNT` (``3``,
    ``3.0``, ``3e2``), else None. Parsed with Python ints and decimals, never through float64,
    which rounds counts above 2**53 (9007199254740993 read as ...992)."""
    text = text.strip()
    if text.isascii() and text.isdigit():  # the common case
        digits = text.lstrip("0")
        # the limit has 16 digits; longer would also trip int()'s 4300-digit guard, whose
        # ValueError names neither the file nor the row
        if len(digits) > len(str(MAX_TOTAL_COUNT)):
            return None
        value = int(digits or "0")
    else:
        if "_" in text:  # Decimal takes "1_000" (PEP 515); pandas refused it, so still refused
            return None
        try:
            number = Decimal(text)
        except InvalidOperation:
            return None
        # compared before int(): "1e999999" would otherwise become a million-digit int
        if (not number.is_finite() or number < 0 or number > MAX_TOTAL_COUNT
                or number != number.to_integral_value()):
            return None
        value = int(number)
    return value if value <= MAX_TOTAL_COUNT else None


def _edge_weights(values: pd.Series, path, column: str) -> np.ndarray:
    """The weight column as exact int64 counts, or a ``ValueError`` naming the first bad row.

    A single weight above :data:`MAX_TOTAL_COUNT` (the most counts lpp fits in all) is
    refused here, where its row is known; :func:`data_prep.network.build_network` refuses
    weights that add up to more than that.
    """
    if pd.api.types.is_integer_dtype(values):  # already exact (e.g. a DataFrame's int column)
        number = values.to_numpy()
        parsed = [int(v) if 0 <= v <= MAX_TOTAL_COUNT else None for v in number.tolist()]
    else:
        # text as read (see read_edge_list); anything else (a float column of a DataFrame)
        # through its text, NaN included, which is refused
        parsed = [_whole_count(v if isinstance(v, str) else str(v)) for v in values.tolist()]
    bad = [row for row, value in enumerate(parsed) if value is None]
    if bad:
        row = bad[0]
        raise ValueError(
            f"{path}: the weight column {column!r} must hold whole non-negative counts of at "
            f"most {MAX_TOTAL_COUNT:.0e} (the most counts lpp fits); data row {row + 1} has "
            f"{values.iloc[row]!r} (set prepare_network.weight_column, --weight-column, to a "
            "column of counts, or to none to count each row once)")
    return np.array(parsed, dtype=np.int64)


def read_nodes(path, *, id_column: str = "id", sep: str | None = None,
               options: ReadOptions = DEFAULT_READ) -> pd.DataFrame:
    """A node table indexed by ``id_column``."""
    table = read_table(path, columns=[id_column], sep=sep, options=options)
    if table[id_column].duplicated().any():
        raise ValueError(f"{path}: node ids in {id_column!r} are not unique")
    return table.set_index(id_column)
