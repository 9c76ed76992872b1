"""Bounded reading of input files: decompression, size limits, text encodings.

A compressed file or an archive can hold far more than it weighs (a 1 MB ``.tar.gz`` can
unpack to a gigabyte of zeros), so every tarball and every gzip, bzip2 or xz file is read
through :func:`open_input`, which counts the bytes it hands out and stops with
:class:`InputTooLarge` past ``max_archive_bytes``. Archive members larger than
``max_member_bytes`` are refused from their tar header, before any of their data is read,
and no single read may ask for more than that either (tar's own extended headers included),
so a hostile archive never makes the reader hold more than the limits. Plain files are read
as they are: their size is what is on the disk.

The compression is recognised by the file's first bytes, not by its name. Data that fail to
decompress (a truncated or corrupt stream) raise a :class:`ValueError` naming the file.
"""
from __future__ import annotations

import bz2
import codecs
import contextlib
import gzip
import io
import lzma
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from lpp.validation import check_int

#: defaults far above any real corpus (the largest CMU Enron message is a few MB; the whole
#: uncompressed CMU tarball is under 2 GB) and far below what would exhaust a machine
MAX_MEMBER_BYTES = 64 * 2**20
MAX_ARCHIVE_BYTES = 4 * 2**30

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
          (b"PK\x03\x04", "zip"), (b"PK\x05\x06", "zip"), (b"\x28\xb5\x2f\xfd", "zstd"))
_OPENERS = {"gzip": gzip.GzipFile, "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}
# Byte-order marks of the encodings that are not ASCII-compatible; UTF-32's come first
# because the UTF-16 little-endian mark is a prefix of UTF-32's. (A UTF-8 mark needs no
# detection: the UTF-8 reading drops it.)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_BOM_BYTES = 4


class InputTooLarge(ValueError):
    """An archive member or a decompressed input is larger than its limit."""


@dataclass(frozen=True)
class ReadOptions:
    """How input files are read (the limits never change what a readable input gives).

    ``encoding``: the text encoding of CSV/TSV inputs; ``None`` detects a UTF-16/UTF-32
    byte-order mark, else reads UTF-8 and decodes any cell that is not UTF-8 as cp1252, else
    latin-1, as the other readers do. ``max_member_bytes``: the largest archive member
    read. ``max_archive_bytes``: the most bytes read out of a tarball or a compressed file.
    """

    encoding: str | None = None
    max_member_bytes: int = MAX_MEMBER_BYTES
    max_archive_bytes: int = MAX_ARCHIVE_BYTES

    def __post_init__(self):
        check_int(self.max_member_bytes, "max_member_bytes", minimum=1)
        check_int(self.max_archive_bytes, "max_archive_bytes", minimum=1)
        if self.encoding is not None:
            if not isinstance(self.encoding, str):
                raise TypeError(f"encoding must be a codec name or None, got "
                                f"{type(self.encoding).__name__}")
            try:
                codecs.lookup(self.encoding)
            except LookupError:
                raise ValueError(f"encoding {self.encoding!r} is not a known text encoding "
                                 "(e.g. utf-8, cp1252, latin-1, utf-16)") from None


def _limit_message(path, limit: int) -> str:
    return (f"{path} holds more than max_archive_bytes={limit:,} bytes once decompressed "
            "(--max-archive-bytes); raise the limit if you trust the file")


class _BoundedStream(io.RawIOBase):
    """A binary stream that hands out at most ``options.max_archive_bytes`` bytes; in an
    archive, also at most ``options.max_member_bytes`` (and a tar block) in one read: tar
    reads an extended header in one piece, sized by a header the archive may forge."""

    def __init__(self, inner, path: Path, options: ReadOptions, *, archive: bool):
        super().__init__()
        self._inner = inner
        self._path = path
        self._max_bytes = options.max_archive_bytes
        self._max_read = options.max_member_bytes + tarfile.BLOCKSIZE if archive else None
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._inner.seekable()

    def tell(self) -> int:
        return self._position

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            return self.readall()
        if self._max_read is not None and size > self._max_read:
            raise InputTooLarge(
                f"{self._path}: a tar header asks to read {size:,} bytes at once, more than "
                f"max_member_bytes={self._max_read - tarfile.BLOCKSIZE:,} "
                "(--max-member-bytes); raise the limit if you trust the archive")
        # ask for one byte past the limit at most: enough to know it was passed
        data = self._inner.read(min(size, self._max_bytes - self._position + 1))
        self._position += len(data)
        if self._position > self._max_bytes:
            raise InputTooLarge(_limit_message(self._path, self._max_bytes))
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_END:
            raise io.UnsupportedOperation("a decompressed stream has no known end")
        target = offset + (self._position if whence == io.SEEK_CUR else 0)
        if target > self._max_bytes:  # tar skips a member's data by seeking past it
            raise InputTooLarge(_limit_message(self._path, self._max_bytes))
        self._position = self._inner.seek(target)
        return self._position

    def close(self) -> None:
        if not self.closed:
            self._inner.close()
        super().close()


def compression(path) -> str | None:
    """``"gzip"``, ``"bzip2"``, ``"xz"``, ``"zip"``, ``"zstd"`` or ``None`` (not compressed),
    from the file's first bytes."""
    with open(path, "rb") as handle:
        head = handle.read(8)
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


def _zip_member(path: Path):
    """The one file of a zip archive (as pandas reads a zipped CSV), opened."""
    with zipfile.ZipFile(path) as archive:
        files = [info for info in archive.infolist() if not info.is_dir()]
        if len(files) != 1:
            raise ValueError(f"{path} is a zip archive of {len(files)} files; a zipped input "
                             "must hold exactly one")
        return archive.open(files[0])  # stays readable after the archive object is closed


def open_input(path, options: ReadOptions, *, archive: bool = False):
    """A binary stream of ``path``'s data, decompressed and bounded by ``options``.

    A plain (uncompressed) file is bounded only when it is an ``archive`` (a tarball). A zip
    file is read when it holds one file and is not where a tarball is expected; zstd
    files are refused.
    """
    path = Path(path)
    kind = compression(path)
    if kind == "zstd" or (kind == "zip" and archive):
        raise ValueError(f"{path} is a {kind} file, which is not read here: decompress it "
                         "(or recompress it with gzip)")
    if kind == "zip":
        with decompression_errors(path):
            return _BoundedStream(_zip_member(path), path, options, archive=False)
    if kind is None:
        raw = open(path, "rb")
        return _BoundedStream(raw, path, options, archive=True) if archive else raw
    return _BoundedStream(_OPENERS[kind](path, "rb"), path, options, archive=archive)


def open_buffered(path, options: ReadOptions) -> io.BufferedReader:
    stream = open_input(path, options)
    return stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(stream)


@contextlib.contextmanager
def decompression_errors(path):
    """Turn the errors of a truncated or corrupt compressed stream into a ``ValueError``
    naming ``path``."""
    try:
        yield
    except (EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path} is truncated or corrupt: {error}") from None
    except OSError as error:
        if error.errno is not None:  # a system error (permissions, disk), not bad data
            raise
        raise ValueError(f"{path} is truncated or corrupt: {error}") from None


def bom_encoding(stream: io.BufferedReader) -> str | None:
    """The encoding a UTF-16/UTF-32 byte-order mark at the start of ``stream`` announces."""
    head = stream.peek(_BOM_BYTES)[:_BOM_BYTES]
    return next((name for bom, name in _BOMS if head.startswith(bom)), None)
