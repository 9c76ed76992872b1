"""Fixtures shared by the data_prep tests: message builders, small corpora, and the real
Enron emails parsed once per session."""
from __future__ import annotations

import pytest

from data_prep.corpus import read_emails
from data_prep.raw import ENRON_EMAILS


def _message(body: str = "", *, sender: str = "alice@example.com", to: str = "bob@example.com",
             cc: str | None = None, bcc: str | None = None, subject: str = "hello",
             date: str = "Mon, 1 Jan 2001 10:00:00 -0800", message_id: str | None = None,
             headers: str = "") -> str:
    """An RFC-822 message as text (LF line endings)."""
    lines = []
    if message_id:
        lines.append(f"Message-ID: {message_id}")
    lines += [f"Date: {date}", f"From: {sender}", f"To: {to}"]
    if cc is not None:
        lines.append(f"Cc: {cc}")
    if bcc is not None:
        lines.append(f"Bcc: {bcc}")
    lines.append(f"Subject: {subject}")
    head = "\n".join(lines) + "\n" + headers
    return head + "\n" + body


@pytest.fixture
def message():
    """Build an RFC-822 message string: ``message(body, sender=..., to=..., cc=...)``."""
    return _message


#: documents of the round-trip tests: (id, text). Natural id order = list order.
ROUND_TRIP_DOCS = [
    ("doc1", "Gas prices rose; the gas desk traded power and gas. Power demand rose."),
    ("doc2", "The power plant outage cut power supply. Traders bought gas and power."),
    ("doc3", "Lunch on Friday? The cafeteria serves pizza and salad on Friday."),
    ("doc4", "Too short."),
    ("doc5", "Pipeline capacity for gas transport: the pipeline tariff and gas volumes."),
    ("doc6", "Salad, pizza, pasta: the cafeteria menu for Friday and Monday lunch."),
]


@pytest.fixture
def round_trip_docs():
    return list(ROUND_TRIP_DOCS)


@pytest.fixture(scope="session")
def enron_emails():
    """The shipped Enron emails, parsed, ordered and de-duplicated once per session."""
    return read_emails("emails-csv", ENRON_EMAILS, id_column="file")
