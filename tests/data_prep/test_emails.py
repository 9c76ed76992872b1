import email.utils
import hashlib

import pytest

from data_prep.emails import (
    addresses,
    collect_emails,
    content_key,
    decode_bytes,
    document_text,
    natural_key,
    own_text,
    parse_email,
    strip_html,
)


def test_headers_and_multi_recipient_addresses(message):
    raw = message("Body text.\n", sender='"Allen, Phillip" <Phillip.Allen@Enron.com>',
                  to="a@enron.com, B@Enron.com,\n\tc@enron.com", cc="d@enron.com",
                  bcc="d@enron.com", subject="Re: West", message_id="<1.JavaMail@thyme>")
    parsed = parse_email(raw, "allen-p/inbox/1.")
    assert parsed.sender == "phillip.allen@enron.com"
    assert parsed.to == ("a@enron.com", "b@enron.com", "c@enron.com")
    assert parsed.cc == ("d@enron.com",) and parsed.bcc == ("d@enron.com",)
    assert parsed.subject == "Re: West" and parsed.message_id == "<1.JavaMail@thyme>"
    assert parsed.body == "Body text.\n"
    assert parsed.n_defects == 0


@pytest.mark.parametrize("value", [
    "a@x.com", " a@x.com , b@y.org,", "a@x.com,\n\tb@y.com", "",
    '"Doe, Jane" <jane@x.com>, bob@y.com', "Jane <JANE@X.COM>", "undisclosed-recipients:;",
    "a@x.com (Alice), b@y.com", "group: a@x.com, b@y.com;", "tim.o'rourke@enron.com",
])
def test_address_fast_path_agrees_with_the_standard_library(value):
    reference = tuple(a.strip().lower() for _, a in email.utils.getaddresses([value])
                      if a.strip())
    assert addresses(value) == reference


def test_quoted_printable_and_declared_charset_are_decoded(message):
    raw = message("caf=E9 au lait, a long line that is wr=\napped by the encoder\n",
                  headers="Content-Type: text/plain; charset=iso-8859-1\n"
                          "Content-Transfer-Encoding: quoted-printable\n")
    expected = "café au lait, a long line that is wrapped by the encoder\n"
    assert parse_email(raw, "m").body == expected


def test_base64_body(message):
    raw = message("aGVsbG8gd29ybGQ=\n", headers="Content-Transfer-Encoding: base64\n")
    assert parse_email(raw, "m").body == "hello world"


def test_non_utf8_bytes_fall_back_to_cp1252():
    raw = (b"From: Ren\xe9 <rene@x.com>\nTo: bob@y.com\nSubject: caf\xe9\n\n"
           b"Caf\xe9 \x93quoted\x94 text\n")
    parsed = parse_email(raw, "m")
    assert parsed.body == "Café \u201cquoted\u201d text\n"
    assert parsed.sender == "rene@x.com" and parsed.subject == "café"


def test_wrongly_declared_charset_falls_back():
    raw = (b"From: a@x.com\nTo: b@y.com\nContent-Type: text/plain; charset=utf-8\n\n"
           b"na\xefve\n")
    assert parse_email(raw, "m").body == "naïve\n"
    raw = b"From: a@x.com\nContent-Type: text/plain; charset=no-such-codec\n\nplain\n"
    assert parse_email(raw, "m").body == "plain\n"


def test_decode_bytes_order():
    assert decode_bytes("é".encode()) == "é"
    assert decode_bytes(b"\xe9", "latin-1") == "é"
    assert decode_bytes(b"\x81\xe9") == "\x81é"  # not cp1252 either: latin-1 never fails


def test_multipart_takes_plain_text_and_skips_attachments():
    raw = ("From: a@x.com\nTo: b@y.com\nMIME-Version: 1.0\n"
           'Content-Type: multipart/mixed; boundary="XX"\n\n'
           "--XX\nContent-Type: text/plain\n\nplain words\n"
           "--XX\nContent-Type: text/html\n\n<p>html words</p>\n"
           "--XX\nContent-Type: text/plain\nContent-Disposition: attachment; filename=a.txt\n\n"
           "attached words\n--XX--\n")
    assert parse_email(raw, "m").body.split() == ["plain", "words"]


def test_html_only_message_is_stripped():
    raw = ("From: a@x.com\nTo: b@y.com\nContent-Type: text/html\n\n"
           "<html><style>p {color: red}</style><p>Hello&nbsp;there</p><br>Bye &amp; "
           "thanks</html>\n")
    assert parse_email(raw, "m").body.split() == ["Hello", "there", "Bye", "thanks"]
    assert strip_html("a<b>c</b>d&#8217;e").split() == ["a", "c", "d", "e"]


OWN_TEXT_CASES = {
    "outlook reply": ("My answer.\n\n -----Original Message-----\nFrom: X\nSent: Monday\n"
                      "old text\n", "My answer.\n\n"),
    "lotus forward": ("FYI\n---------------------- Forwarded by Kirk/HOU/EES on 11/27/2001 "
                      "---------------------------\nforwarded text\n", "FYI"),
    "forwarded message": ("See below.\n----- Forwarded message -----\nold\n", "See below."),
    "begin forwarded": ("See below.\nBegin forwarded message:\nold\n", "See below."),
    "on wrote": ("Sure.\nOn Mon, Jan 1, 2001, Bob <b@x.com> wrote:\n> old\n", "Sure."),
    "header block": ("Thanks Bob.\n\n\tFrom:  Bob Chandler   06/29/2000 10:26 AM\n\t\n\n"
                     "To: Drew Fossum\ncc: Rod\nSubject: Q2\nold text\n", "Thanks Bob.\n"),
    "quoted lines": ("new line\n> quoted\n  >> more quoted\nlast line", "new line\nlast line"),
    "lone header word": ("Subject: budget\nThe budget is due.\n\n\n\n\nTo: all, thanks",
                         "Subject: budget\nThe budget is due.\n\n\n\n\nTo: all, thanks"),
    "nothing quoted": ("Plain message -- with dashes.\nOnly mine.", "Plain message -- with "
                       "dashes.\nOnly mine."),
}


@pytest.mark.parametrize("case", sorted(OWN_TEXT_CASES))
def test_own_text_rule(case):
    body, expected = OWN_TEXT_CASES[case]
    assert own_text(body).strip() == expected.strip()
    assert own_text(body) == own_text(body.replace("\n", "\r\n").replace("\r\n", "\n"))


def test_document_text_rules(message):
    parsed = parse_email(message("Mine.\n-----Original Message-----\nTheirs.\n"), "m")
    assert document_text(parsed, "own_text").split() == ["Mine."]
    assert document_text(parsed, "full").split() == ["Mine.", "-----Original", "Message-----",
                                                     "Theirs."]
    with pytest.raises(ValueError, match="body_rule"):
        document_text(parsed, "strip")


def test_dedup_is_by_content_not_message_id(message):
    # the same email stored in two folders with different Message-IDs (as in the CMU data),
    # plus an email that differs only in its body
    copy_a = message("Same body.\n", message_id="<1.JavaMail.evans@thyme>")
    copy_b = message("Same body.\n", message_id="<2.JavaMail.evans@thyme>")
    other = message("Other body.\n", message_id="<3.JavaMail.evans@thyme>")
    kept, stats = collect_emails([("u/inbox/10.", copy_a), ("u/all_documents/2.", copy_b),
                                  ("u/inbox/2.", other)])
    assert [m.source_id for m in kept] == ["u/all_documents/2.", "u/inbox/2."]
    assert (stats.read, stats.duplicates, stats.kept) == (3, 1, 2)


def test_order_is_natural_and_independent_of_input_order(message):
    items = [(f"u/inbox/{n}.", message(f"body {n}\n")) for n in (10, 2, 1, 33, 3)]
    kept, _ = collect_emails(items)
    assert [m.source_id for m in kept] == ["u/inbox/1.", "u/inbox/2.", "u/inbox/3.",
                                           "u/inbox/10.", "u/inbox/33."]
    assert sorted(["a10", "a9", "b1", "a09x"], key=natural_key) == ["a9", "a09x", "a10", "b1"]


def test_malformed_messages_are_counted_not_fatal(message):
    items = [("good", message("fine\n")), ("empty", ""), ("no headers", b"just text\nno header\n"),
             ("blank first", "\n\n" + message("recovered\n")),
             ("no separator", "From: a@x.com\nTo: b@y.com\nbody without a blank line\n")]
    kept, stats = collect_emails(items)
    assert [m.source_id for m in kept] == ["blank first", "good", "no separator"]
    assert stats.malformed == 2 and stats.malformed_ids == ["empty", "no headers"]
    assert stats.with_defects == 2
    by_id = {m.source_id: m for m in kept}
    assert by_id["blank first"].body == "recovered\n"
    assert by_id["no separator"].body.strip() == "body without a blank line"
    summary = stats.as_dict()
    assert summary["messages_read"] == 5 and summary["messages_kept"] == 3


def test_repeated_source_id_is_an_error(message):
    with pytest.raises(ValueError, match="occurs twice"):
        collect_emails([("x", message("a")), ("x", message("b"))])
    with pytest.raises(TypeError):
        parse_email(123, "x")


def test_content_key_definition():
    expected = hashlib.sha1("a@x.com\x1fMon\x1fHi\x1fbody".encode()).hexdigest()
    assert content_key("a@x.com", "Mon", "Hi", "body") == expected
