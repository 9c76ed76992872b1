"""The readers on hostile and damaged input: archives that are not tarballs or are cut
short, links out of the corpus, tables in other text encodings, malformed UCI files, text-lines
files and edge weights."""
import codecs
import gzip
import io
import mailbox
import tarfile

import pandas as pd
import pytest

from data_prep.corpus import prepare_network, prepare_topics
from data_prep.formats import (iter_email_dir, iter_email_tar, iter_maildir, read_edge_list,
                               read_table, read_text_csv, read_text_dir, read_text_lines,
                               read_uci, tree_sha256)
from data_prep.streams import InputTooLarge
from data_prep.streams import ReadOptions

MESSAGE = b"From: a@x.com\nTo: b@x.com\nSubject: s\n\ngas power gas\n"


def _tar_bytes(members, compress=gzip.compress):
    """A tarball of ``(TarInfo, data)`` pairs, as bytes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            archive.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return compress(buffer.getvalue()) if compress else buffer.getvalue()


def _files(n=3, size=3000):
    out = []
    for i in range(n):
        out.append((tarfile.TarInfo(f"maildir/u/{i + 1}."), MESSAGE + b"x" * size))
    return out


def _link(name, target, kind=tarfile.SYMTYPE):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, b""


# ---------------------------------------------------------------- damaged archives

def _damaged(kind):
    plain = _tar_bytes(_files(), compress=None)
    packed = gzip.compress(plain)
    first = 512 + -(-len(_files()[0][1]) // 512) * 512  # header and padded data of member 1
    return {
        "not a tar": b"hello, this is plain text and no tarball\n" * 20,
        "empty": b"",
        "gzip of text": gzip.compress(b"hello, plain text\n" * 100),
        "truncated gzip": packed[:len(packed) // 2],
        "corrupt gzip": packed[:40] + bytes(b ^ 0x5A for b in packed[40:80]) + packed[80:],
        # cut at the header of the second member: tarfile alone would end quietly here
        "cut at a member": plain[:first],
        "cut in a member": plain[:512 + 1000],
        "garbage header": plain[:first] + b"\x01" * 512 + plain[first + 512:],
    }[kind]


@pytest.mark.parametrize("kind", ["not a tar", "empty", "gzip of text", "truncated gzip",
                                  "corrupt gzip", "cut at a member", "cut in a member",
                                  "garbage header"])
def test_damaged_archives_give_a_clear_error_naming_the_file(tmp_path, kind):
    path = tmp_path / "mail.tar.gz"
    path.write_bytes(_damaged(kind))
    with pytest.raises(ValueError, match=str(path)) as caught:
        prepare_topics(path, fmt="email-tar", n_docs=None, min_tokens=0)
    assert type(caught.value) is ValueError


def test_an_intact_archive_still_reads(tmp_path):
    for compress, name in ((None, "mail.tar"), (gzip.compress, "mail.tar.gz")):
        path = tmp_path / name
        path.write_bytes(_tar_bytes(_files(), compress=compress))
        assert [i for i, _ in iter_email_tar(path)] == ["u/1.", "u/2.", "u/3."]


# ---------------------------------------------------------------- links out of the corpus

@pytest.mark.parametrize("member, match", [
    ((tarfile.TarInfo("../../outside"), MESSAGE), "named outside the archive"),
    ((tarfile.TarInfo("/etc/cron.d/x"), MESSAGE), "named outside the archive"),
    ((tarfile.TarInfo("maildir/../../x"), MESSAGE), "named outside the archive"),
    (_link("maildir/u/9.", "../../../etc/passwd"), "links to '../../../etc/passwd'"),
    (_link("maildir/u/9.", "/etc/passwd"), "links to '/etc/passwd'"),
    (_link("maildir/u/9.", "/etc/passwd", tarfile.LNKTYPE), "links to '/etc/passwd'"),
    (_link("maildir/u/9.", "../maildir/u/1.", tarfile.LNKTYPE), "outside the archive"),
])
def test_archive_members_that_leave_the_archive_are_refused(tmp_path, member, match):
    path = tmp_path / "mail.tar.gz"
    path.write_bytes(_tar_bytes(_files() + [member]))
    with pytest.raises(ValueError, match=match):
        list(iter_email_tar(path))


def test_links_inside_an_archive_are_skipped_as_before(tmp_path):
    path = tmp_path / "mail.tar.gz"
    path.write_bytes(_tar_bytes(_files() + [_link("maildir/u/9.", "1."),
                                            _link("maildir/u/8.", "maildir/u/2.",
                                                  tarfile.LNKTYPE)]))
    assert [i for i, _ in iter_email_tar(path)] == ["u/1.", "u/2.", "u/3."]


@pytest.fixture
def corpus_with_outside(tmp_path):
    (tmp_path / "secret.txt").write_text("secret words of another user")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "a.txt").write_text("more secret words")
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("gas power gas")
    (root / "sub" / "b.txt").write_text("power plant power")
    return root


@pytest.mark.parametrize("make", ["file", "folder", "relative", "loop"])
def test_links_out_of_a_corpus_folder_are_refused(corpus_with_outside, make):
    root = corpus_with_outside
    link = root / "sub" / "link.txt"
    if make == "file":
        link.symlink_to(root.parent / "secret.txt")
    elif make == "folder":
        link.symlink_to(root.parent / "elsewhere", target_is_directory=True)
    elif make == "relative":
        link.symlink_to("../../secret.txt")
    else:
        link.symlink_to(root / "sub" / "loop.txt")
        (root / "sub" / "loop.txt").symlink_to(link)
    match = (f"{root}/sub/l..p.txt is a symbolic link that cannot be resolved" if make == "loop"
             else f"{link} is a symbolic link .* out of the corpus folder {root}")
    for read in (read_text_dir, tree_sha256, lambda r: list(iter_email_dir(r))):
        with pytest.raises(ValueError, match=match):
            read(root)
    with pytest.raises(ValueError, match="symbolic link"):
        prepare_topics(root, fmt="text-dir", n_docs=None, min_tokens=0)


def test_links_inside_a_corpus_folder_and_hidden_ones_are_allowed(corpus_with_outside):
    root = corpus_with_outside
    (root / "sub" / "same.txt").symlink_to(root / "a.txt")
    (root / "sub" / "inner").symlink_to(root / "sub", target_is_directory=True)  # not entered
    (root / ".hidden").symlink_to(root.parent / "secret.txt")  # never read
    ids, texts = read_text_dir(root)
    assert ids == ["a.txt", "sub/b.txt", "sub/same.txt"]
    assert "secret" not in " ".join(texts)


def test_links_out_of_a_maildir_are_refused(tmp_path):
    (tmp_path / "secret").write_bytes(MESSAGE)
    box = mailbox.Maildir(tmp_path / "box")
    box.add(MESSAGE)
    (tmp_path / "box" / "cur" / "2.host:2,S").symlink_to(tmp_path / "secret")
    with pytest.raises(ValueError, match="out of the corpus folder"):
        list(iter_maildir(tmp_path / "box"))


# ---------------------------------------------------------------- text encodings

TEXTS = ["café gas", "naïve power", "plain"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16",
                                      "utf-16-le-bom", "utf-16-be-bom", "utf-32"])
@pytest.mark.parametrize("gz", [False, True])
def test_tables_in_other_encodings_are_read(tmp_path, encoding, gz):
    text = "id,text\n" + "".join(f"{i},{t}\n" for i, t in enumerate(TEXTS))
    if encoding.endswith("-bom"):
        codec = encoding[:-4]
        bom = codecs.BOM_UTF16_LE if codec == "utf-16-le" else codecs.BOM_UTF16_BE
        data = bom + text.encode(codec)
    else:
        data = text.encode(encoding)
    path = tmp_path / ("texts.csv.gz" if gz else "texts.csv")
    path.write_bytes(gzip.compress(data) if gz else data)
    ids, texts = read_text_csv(path, id_column="id")
    assert ids == ["0", "1", "2"] and texts == TEXTS


def test_cells_that_are_not_utf8_fall_back_one_by_one(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_bytes("text\ncafé\n".encode() + "naïve\n".encode("latin-1")
                     + "it’s\n".encode("cp1252") + b"bad \x81 byte\n")
    _, texts = read_text_csv(path)
    assert texts == ["café", "naïve", "it’s", "bad \x81 byte"]  # the last: latin-1


def test_names_and_edges_in_latin1(tmp_path):
    path = tmp_path / "edges.csv"
    path.write_bytes("de,à\nJosé,Zoë\nZoë,José\n".encode("latin-1"))
    edges = read_edge_list(path, sender_column="de", recipient_column="à")
    assert edges.values.tolist() == [["José", "Zoë"], ["Zoë", "José"]]
    result = prepare_network(path, sender_column="de", recipient_column="à", min_total=0,
                             heldout_top=0)
    assert result.actor_ids == ["José", "Zoë"]


def test_an_emails_csv_in_latin1_is_parsed(tmp_path, message):
    rows = [(f"u/{i}.", message(f"le {word} est chaud\n", subject=f"s{i}"))
            for i, word in enumerate(["café", "thé", "crème"])]
    path = tmp_path / "emails.csv"
    pd.DataFrame(rows, columns=["file", "message"]).to_csv(path, index=False,
                                                            encoding="latin-1")
    result = prepare_topics(path, fmt="emails-csv", id_column="file", n_docs=None,
                            min_tokens=0, vocab_size=None, max_df=0.5)
    assert result.doc_ids == ["u/0.", "u/1.", "u/2."]
    assert result.vocabulary == ["caf", "cr", "me", "th"]


def test_an_encoding_that_does_not_fit_names_the_file_and_the_option(tmp_path):
    path = tmp_path / "texts.csv"
    path.write_bytes("text\ncafé\n".encode("latin-1"))
    with pytest.raises(ValueError, match=f"{path} cannot be decoded as utf-8: .*--encoding"):
        read_text_csv(path, options=ReadOptions(encoding="utf-8"))
    assert read_text_csv(path, options=ReadOptions(encoding="latin-1"))[1] == ["café"]
    odd = tmp_path / "odd.csv"  # a UTF-16 mark, then an odd number of bytes
    odd.write_bytes(codecs.BOM_UTF16_LE + "text\ncafé\n".encode("utf-16-le") + b"\x00")
    with pytest.raises(ValueError, match="utf-16 .announced by its byte-order mark.*--encoding"):
        read_text_csv(odd)


def test_unparsable_tables_name_the_file(tmp_path):
    path = tmp_path / "quote.csv"
    path.write_text('text\n"never closed\n')
    with pytest.raises(ValueError, match=f"{path} is not a readable CSV file"):
        read_table(path, columns=["text"])


# ---------------------------------------------------------------- UCI

def test_uci_files_with_bad_content_name_the_file(tmp_path):
    docword, vocab = tmp_path / "docword.txt", tmp_path / "vocab.txt"
    vocab.write_text("gas\n")
    docword.write_text("1\n1\n1\ngas power coal\n")
    with pytest.raises(ValueError, match=f"{docword}: not 'docID wordID count' lines"):
        read_uci(docword, vocab)
    docword.write_text("1\n1\n-3\n")
    with pytest.raises(ValueError, match="NNZ=-3"):
        read_uci(docword, vocab)


def test_a_uci_vocabulary_in_latin1(tmp_path):
    docword, vocab = tmp_path / "docword.txt", tmp_path / "vocab.txt"
    docword.write_text("1\n2\n2\n1 1 2\n1 2 1\n")
    vocab.write_bytes("gas\r\ncafé\r\n".encode("latin-1"))
    assert read_uci(docword, vocab)[2] == ["gas", "café"]


# ---------------------------------------------------------------- text-lines

def test_text_lines_in_any_encoding_keep_their_line_numbers(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_bytes(codecs.BOM_UTF8 + "gas price\n\ncafé\r\n".encode() + b"caf\xe9 latin\n")
    assert read_text_lines(path) == (["1", "2", "3", "4"],
                                     ["gas price", "", "café", "café latin"])
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes("one\ntwo".encode("utf-16"))  # with its byte-order mark
    assert read_text_lines(utf16) == (["1", "2"], ["one", "two"])
    assert read_text_lines(path, ReadOptions(encoding="latin-1"))[1][2] == "cafÃ©"


@pytest.mark.parametrize("kind, match", [
    ("empty", "is empty"),
    ("truncated gzip", "is truncated or corrupt"),
    ("NUL bytes", "line 2 holds a NUL byte.*--encoding"),
    ("bomless utf-16", "line 1 holds a NUL byte"),
    ("a folder", "must be a file"),
])
def test_malformed_text_lines_files_name_the_file(tmp_path, kind, match):
    path = tmp_path / "docs.txt.gz"
    if kind == "a folder":
        path.mkdir()
    else:
        path.write_bytes({
            "empty": b"",
            "truncated gzip": gzip.compress(b"gas price rose\n" * 200)[:40],
            "NUL bytes": b"text\n\x00\x01\x02binary\n",
            "bomless utf-16": "one\ntwo\n".encode("utf-16-le"),
        }[kind])
    with pytest.raises(ValueError, match=match) as caught:
        read_text_lines(path)
    assert str(path) in str(caught.value)


def test_text_lines_are_read_within_the_size_limit(tmp_path):
    path = tmp_path / "bomb.txt.gz"
    path.write_bytes(gzip.compress(b"gas " * 100_000))
    with pytest.raises(InputTooLarge, match="max_archive_bytes=1,000"):
        read_text_lines(path, ReadOptions(max_archive_bytes=1000))
    assert len(read_text_lines(path)[1][0]) == 400_000


# ---------------------------------------------------------------- edge weights

@pytest.mark.parametrize("weight", [
    "-1", "2.5", "many", "", "nan", "inf", "1_000",
    # above the 1e15 counts lpp fits: 2**53 + 1 was rounded to 2**53 through float64, and
    # 4e18 (five of them) wrapped round int64 when summed
    "9007199254740993", "4000000000000000000", "1000000000000001", "1e16", "1" * 5000,
])
def test_bad_edge_weights_name_the_row_and_the_setting(tmp_path, weight):
    path = tmp_path / "edges.csv"
    path.write_text(f"from,to,n\na,b,3\nb,a,{weight}\n")
    with pytest.raises(ValueError, match=(f"{path}: the weight column 'n' must hold whole "
                                          r"non-negative counts of at most 1e\+15 .*; data "
                                          "row 2 .*weight_column")):
        read_edge_list(path, weight_column="n")


def test_edge_weights_are_whole_counts(tmp_path):
    path = tmp_path / "edges.tsv"
    path.write_text("from\tto\tn\na\tb\t3\nb\ta\t2.0\nb\tc\t0\n")
    edges = read_edge_list(path, weight_column="n")
    assert edges["weight"].tolist() == [3, 2, 0] and edges["weight"].dtype == "int64"
    with pytest.raises(ValueError, match="no column.*'weight'"):
        read_edge_list(path, weight_column="weight")


def test_edge_weights_are_parsed_exactly(tmp_path):
    # the largest count taken, beside a "2.0" that made pandas read the column as float64
    path = tmp_path / "edges.csv"
    path.write_text("from,to,n\na,b,1000000000000000\nb,a,2.0\na,c, 7 \nc,a,3e2\n"
                    "b,c,+4\nc,b,0007\n")
    edges = read_edge_list(path, weight_column="n")
    assert edges["weight"].tolist() == [10**15, 2, 7, 300, 4, 7]
    assert edges["weight"].dtype == "int64"
