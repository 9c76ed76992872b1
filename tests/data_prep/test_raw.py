import shutil

import pytest

from data_prep.raw import (ENRON_DIR, ChecksumError, main, read_sums, sha256_file,
                           verified_sha256, verify_directory, write_sums)

SHIPPED = {"README.md", "enron_emails_subset.csv.gz", "enron_emails_subset_index.csv.gz",
           "enron_priebe_edges.tsv.gz", "enron_priebe_nodes.tsv",
           "enron_priebe_ldc_categories.tsv"}


def test_shipped_enron_data_match_their_checksums():
    sums = verify_directory(ENRON_DIR)
    assert set(sums) == SHIPPED
    # the provenance README of the data lists the same digests
    readme = (ENRON_DIR / "README.md").read_text()
    assert all(digest in readme for name, digest in sums.items() if name != "README.md")


def test_a_changed_file_is_refused(tmp_path):
    shutil.copy(ENRON_DIR / "enron_priebe_nodes.tsv", tmp_path)
    (tmp_path / "SHA256SUMS").write_text(f"{'0' * 64}  enron_priebe_nodes.tsv\n")
    with pytest.raises(ChecksumError, match="corrupted or was changed"):
        verified_sha256(tmp_path / "enron_priebe_nodes.tsv")
    with pytest.raises(ChecksumError):
        verify_directory(tmp_path)
    assert main(["verify", str(tmp_path)]) == 1


def test_expected_digest_and_unlisted_files(tmp_path):
    path = tmp_path / "data.txt"
    path.write_text("abc")
    digest = sha256_file(path)
    assert verified_sha256(path) == digest  # no SHA256SUMS beside it: hashed, not checked
    assert verified_sha256(path, digest.upper()) == digest
    with pytest.raises(ChecksumError, match="expected"):
        verified_sha256(path, "f" * 64)
    with pytest.raises(FileNotFoundError):
        verified_sha256(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="must be a file"):
        verified_sha256(tmp_path)


def test_pin_then_verify(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    write_sums(tmp_path)
    assert set(read_sums(tmp_path / "SHA256SUMS")) == {"a.txt", "b.txt"}
    assert main(["verify", str(tmp_path)]) == 0
    (tmp_path / "b.txt").write_text("changed")
    assert main(["verify", str(tmp_path)]) == 1
    assert "b.txt" in capsys.readouterr().err
    assert main(["pin", str(tmp_path)]) == 0


def test_malformed_sums_file(tmp_path):
    (tmp_path / "SHA256SUMS").write_text("not a checksum line\n")
    with pytest.raises(ValueError, match="SHA256SUMS:1"):
        read_sums(tmp_path / "SHA256SUMS")
