"""Bounded reading: size limits of archives and compressed files, decompression errors,
reading options. The bombs are zero streams that compress well, read under small limits;
nothing large is written to disk."""
import bz2
import gzip
import io
import lzma
import tarfile
import tracemalloc
import zipfile

import pytest

from data_prep.corpus import prepare_network, prepare_topics
from data_prep.formats import iter_email_tar, read_table
from data_prep.streams import (MAX_MEMBER_BYTES, InputTooLarge, ReadOptions, compression,
                               open_input)

MIB = 2**20


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, produced as they are read (never held whole)."""

    def __init__(self, size):
        self.left = size

    def readable(self):
        return True

    def readinto(self, buffer):
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def _zero_tar(path, members, mode="w:gz"):
    """A tarball of ``{name: size}`` members of zeros."""
    with tarfile.open(path, mode) as archive:
        for name, size in members.items():
            info = tarfile.TarInfo(name)
            info.size = size
            archive.addfile(info, io.BufferedReader(_Zeros(size)))
    return path


def test_a_member_past_the_limit_is_refused_without_reading_it(tmp_path):
    path = _zero_tar(tmp_path / "bomb.tar.gz", {"maildir/u/1.": 8 * MIB})
    assert path.stat().st_size < 64 * 1024  # the bomb: 8 MiB in a few kB
    tracemalloc.start()
    try:
        with pytest.raises(InputTooLarge) as caught:
            list(iter_email_tar(path, ReadOptions(max_member_bytes=MIB)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert str(path) in message and "'maildir/u/1.'" in message
    assert "max_member_bytes=1,048,576" in message and "--max-member-bytes" in message
    assert peak < MIB  # the member was never read into memory


def test_the_default_member_limit_is_checked_from_the_header(tmp_path):
    """A header claiming 1 GiB with (almost) no data behind it: the default limit refuses it
    from the header; reading the data first would end in a truncation error instead."""
    info = tarfile.TarInfo("maildir/u/1.")
    info.size = 2**30
    payload = info.tobuf(format=tarfile.GNU_FORMAT) + bytes(1024)
    path = tmp_path / "claims-a-gib.tar.gz"
    path.write_bytes(gzip.compress(payload))
    with pytest.raises(InputTooLarge, match=f"max_member_bytes={MAX_MEMBER_BYTES:,}"):
        list(iter_email_tar(path))


def test_the_archive_limit_counts_skipped_members_and_headers(tmp_path):
    # a hidden member is never read, but skipping it decompresses it: it counts
    path = _zero_tar(tmp_path / "hidden.tar.bz2", {"maildir/.big": 4 * MIB}, mode="w:bz2")
    with pytest.raises(InputTooLarge, match="max_archive_bytes=1,048,576"):
        list(iter_email_tar(path, ReadOptions(max_archive_bytes=MIB)))
    # many small members add up (each within the member limit)
    path = _zero_tar(tmp_path / "many.tar.xz", {f"u/{i}.": 256 * 1024 for i in range(16)},
                     mode="w:xz")
    with pytest.raises(InputTooLarge, match="--max-archive-bytes"):
        list(iter_email_tar(path, ReadOptions(max_archive_bytes=MIB)))
    assert len(list(iter_email_tar(path, ReadOptions(max_archive_bytes=8 * MIB)))) == 16


def test_a_forged_extended_header_cannot_make_tar_read_past_the_member_limit(tmp_path):
    info = tarfile.TarInfo("u/1.")
    info.pax_headers = {"comment": "x" * (2 * MIB)}  # tar reads this header in one piece
    path = tmp_path / "pax.tar.gz"
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        archive.addfile(info, io.BytesIO(b""))
    with pytest.raises(InputTooLarge, match="tar header asks to read"):
        list(iter_email_tar(path, ReadOptions(max_member_bytes=MIB)))


@pytest.mark.parametrize("opener, suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2"),
                                            (lzma.open, ".xz")])
def test_compressed_tables_are_bounded(tmp_path, opener, suffix):
    path = tmp_path / f"texts.csv{suffix}"
    with opener(path, "wb") as handle:
        handle.write(b"text\n")
        for _ in range(4):
            handle.write(b"a" * MIB)
    with pytest.raises(InputTooLarge, match=f"{path}.*max_archive_bytes=2,097,152"):
        read_table(path, columns=["text"], options=ReadOptions(max_archive_bytes=2 * MIB))
    assert read_table(path, columns=["text"]).shape == (1, 1)
    with pytest.raises(InputTooLarge):
        prepare_topics(path, fmt="text-csv", max_archive_bytes=MIB)
    with pytest.raises(InputTooLarge):
        prepare_network(path, sender_column="text", recipient_column="text",
                        max_archive_bytes=MIB)


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_damaged_compressed_tables_name_the_file(tmp_path, damage, compress):
    data = compress(b"text\n" + b"gas power\n" * 20000)
    if damage == "truncated":
        data = data[:len(data) // 2]
    else:
        middle = len(data) // 2
        data = data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64]) + \
            data[middle + 64:]
    path = tmp_path / "texts.csv.gz"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=f"{path} is truncated or corrupt"):
        read_table(path, columns=["text"])


def test_zip_tables_hold_one_file_and_are_bounded(tmp_path):
    path = tmp_path / "texts.csv.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("texts.csv", "text\n" + "a" * (2 * MIB) + "\n")
    assert read_table(path, columns=["text"]).shape == (1, 1)
    with pytest.raises(InputTooLarge):
        read_table(path, columns=["text"], options=ReadOptions(max_archive_bytes=MIB))
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("other.csv", "text\nx\n")
    with pytest.raises(ValueError, match="zip archive of 2 files"):
        read_table(path, columns=["text"])
    with pytest.raises(ValueError, match="zip file, which is not read here"):
        list(iter_email_tar(path))


def test_compression_is_recognised_by_content_not_name(tmp_path):
    plain = tmp_path / "plain.csv.gz"
    plain.write_text("text\ngas\n")
    assert compression(plain) is None
    assert read_table(plain, columns=["text"])["text"].tolist() == ["gas"]
    packed = tmp_path / "packed.csv"
    packed.write_bytes(gzip.compress(b"text\npower\n"))
    assert compression(packed) == "gzip"
    assert read_table(packed, columns=["text"])["text"].tolist() == ["power"]
    zstd = tmp_path / "x.csv.zst"
    zstd.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(16))
    with pytest.raises(ValueError, match="zstd file"):
        read_table(zstd, columns=["text"])


def test_plain_files_are_not_bounded_but_plain_tarballs_are(tmp_path):
    table = tmp_path / "big.csv"
    table.write_bytes(b"text\n" + b"a" * (2 * MIB) + b"\n")
    options = ReadOptions(max_archive_bytes=MIB)
    assert read_table(table, columns=["text"], options=options).shape == (1, 1)
    with open_input(table, options) as stream:
        assert len(stream.read()) == table.stat().st_size
    tar = _zero_tar(tmp_path / "plain.tar", {"u/1.": 2 * MIB}, mode="w")
    with pytest.raises(InputTooLarge):
        list(iter_email_tar(tar, options))


@pytest.mark.parametrize("kwargs, error, match", [
    ({"max_member_bytes": 0}, ValueError, "max_member_bytes must be at least 1"),
    ({"max_archive_bytes": 1.5}, TypeError, "max_archive_bytes must be an integer"),
    ({"encoding": "klingon"}, ValueError, "'klingon' is not a known text encoding"),
    ({"encoding": 8}, TypeError, "encoding must be a codec name"),
])
def test_bad_read_options(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        ReadOptions(**kwargs)
    with pytest.raises(error, match=match):  # before anything is read
        prepare_topics(tmp_path / "not-read.csv", fmt="text-csv", **kwargs)
