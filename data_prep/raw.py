"""Checksummed access to input files.

Every input the pipeline reads is hashed (sha256) and the hash goes into the output's
metadata. When a ``SHA256SUMS`` file (the format ``sha256sum`` writes: ``<hex>  <name>``)
sits in the same directory and lists the input, the hash must match or loading stops with
:class:`ChecksumError`. The shipped Enron data in ``data/raw/enron/`` carry such a file, so
a corrupted or edited copy can never silently feed an experiment.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from data_prep._cli import run_reporting_errors
from lpp.formats.files import atomic_write_bytes

#: the directory of the shipped Enron data, relative to the repository root
ENRON_DIR = Path(__file__).resolve().parent.parent / "data" / "raw" / "enron"
ENRON_EMAILS = ENRON_DIR / "enron_emails_subset.csv.gz"
ENRON_EMAILS_INDEX = ENRON_DIR / "enron_emails_subset_index.csv.gz"
PRIEBE_EDGES = ENRON_DIR / "enron_priebe_edges.tsv.gz"
PRIEBE_NODES = ENRON_DIR / "enron_priebe_nodes.tsv"

SUMS_NAME = "SHA256SUMS"
_CHUNK = 1 << 20


class ChecksumError(ValueError):
    """An input file does not match the checksum recorded for it."""


def sha256_file(path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def read_sums(sums_path) -> dict[str, str]:
    """Parse a ``sha256sum``-style file into ``{file name: hex digest}``."""
    sums = {}
    for number, line in enumerate(Path(sums_path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        digest, sep, name = line.partition("  ")
        digest = digest.strip().lower()
        name = name.strip().lstrip("*")
        if not sep or len(digest) != 64 or not name:
            raise ValueError(f"{sums_path}:{number}: not a '<sha256>  <name>' line: {line!r}")
        sums[name] = digest
    return sums


def require_file(path, what: str = "input") -> Path:
    """Return ``path`` as a Path, raising a clear error if it is not an existing file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} file not found: {path}")
    if not path.is_file():
        raise ValueError(f"{what} must be a file, got a directory or special file: {path}")
    return path


def verified_sha256(path, expected: str | None = None) -> str:
    """Hash ``path`` and check it against ``expected`` and against a sibling ``SHA256SUMS``.

    Returns the hex digest (for the output's provenance record). Raises
    :class:`FileNotFoundError` for a missing file and :class:`ChecksumError` on mismatch.
    """
    path = require_file(path)
    actual = sha256_file(path)
    if expected is not None and actual != expected.lower():
        raise ChecksumError(f"{path}: sha256 is {actual}, expected {expected.lower()}")
    sums_path = path.parent / SUMS_NAME
    if sums_path.is_file():
        recorded = read_sums(sums_path).get(path.name)
        if recorded is not None and recorded != actual:
            raise ChecksumError(
                f"{path}: sha256 is {actual}, but {sums_path} records {recorded}; "
                "the file is corrupted or was changed: restore it from git"
            )
    return actual


def verify_directory(directory) -> dict[str, str]:
    """Check every file listed in ``directory/SHA256SUMS``; return ``{name: digest}``."""
    directory = Path(directory)
    sums = read_sums(require_file(directory / SUMS_NAME, "checksum"))
    for name, digest in sums.items():
        actual = sha256_file(require_file(directory / name))
        if actual != digest:
            raise ChecksumError(f"{directory / name}: sha256 is {actual}, expected {digest}")
    return sums


def write_sums(directory) -> Path:
    """(Re)write ``directory/SHA256SUMS`` for every regular file in it, sorted by name."""
    directory = Path(directory)
    names = sorted(p.name for p in directory.iterdir() if p.is_file() and p.name != SUMS_NAME)
    text = "".join(f"{sha256_file(directory / n)}  {n}\n" for n in names)
    target = directory / SUMS_NAME
    atomic_write_bytes(target, text.encode())
    return target


def main(argv=None) -> int:
    """``python -m data_prep.raw verify [DIR]`` checks ``DIR/SHA256SUMS`` (default: the
    shipped Enron data); ``python -m data_prep.raw pin DIR`` (re)writes it, e.g. right after
    downloading the CMU tarball, so that every later run verifies the download."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m data_prep.raw", description=main.__doc__)
    parser.add_argument("action", choices=("verify", "pin"))
    parser.add_argument("directory", nargs="?", default=str(ENRON_DIR))
    args = parser.parse_args(argv)

    def run() -> int:
        if args.action == "pin":
            print(f"wrote {write_sums(args.directory)}")
        for name, digest in verify_directory(args.directory).items():
            print(f"OK  {digest}  {name}")
        return 0

    return run_reporting_errors(run, status=1)


if __name__ == "__main__":
    sys.exit(main())
