"""Enron emails as categorical event logs: one chain per sender, one step per month.

The central-model HMM of Foulds et al. (2016) runs on the war logs — records with a few
categorical fields, grouped by region and month. This module builds a real-data stand-in
from the Enron emails we ship: every email is a record (the protected unit), its sender is
the "region", its month the step, and five categorical fields describe it:

==============  =============================================================  ==========
field           categories                                                     from
==============  =============================================================  ==========
``hour_band``   0–6, 6–12, 12–18, 18–24 h (the sender's local time)             ``Date``
``weekday``     Monday … Sunday                                                ``Date``
``recipients``  0–1, 2–3, 4–10, 11 or more distinct To + Cc addresses          ``To, Cc``
``kind``        new, reply (``Re:``), forward (``Fw:``/``Fwd:``)                ``Subject``
``audience``    internal (all ``@enron.com``, or none), external, mixed        ``To, Cc``
==============  =============================================================  ==========

Bcc is left out (in this corpus it repeats Cc). Senders with fewer than ``min_emails`` emails
in the date window are dropped, and months in which a sender sent nothing are not steps (the
paper also removes empty steps). Output: ``events.npz`` (per-field counts, chain and month of
each step, records per step), ``meta.json`` and ``summary.json``, written atomically.

    python -m data_prep.events --input data/raw/enron/enron_emails_subset.csv.gz \\
        --min-emails 80 --out data/prepared/events
"""
from __future__ import annotations

import argparse
import email.utils
import json
import re
from pathlib import Path

import numpy as np

from lpp.central.simulate import EventLogs

from ._cli import run_reporting_errors
from .emails import Email, collect_emails
from .formats import iter_emails_csv
from lpp.formats.files import atomic_write_bytes, json_bytes, npz_bytes
from .raw import verified_sha256

__all__ = ["FIELDS", "email_fields", "build_events", "write_events", "load_events", "main"]

FIELDS = (
    ("hour_band", ("0-6h", "6-12h", "12-18h", "18-24h")),
    ("weekday", ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")),
    ("recipients", ("0-1", "2-3", "4-10", "11+")),
    ("kind", ("new", "reply", "forward")),
    ("audience", ("internal", "external", "mixed")),
)
FORMAT_VERSION = 1
_REPLY = re.compile(r"^\s*re\s*:", re.IGNORECASE)
_FORWARD = re.compile(r"^\s*(fw|fwd)\s*:", re.IGNORECASE)


def email_fields(message: Email):
    """``(month, fields)`` of one email: month as ``12 * year + month - 1``, five category
    indices as in :data:`FIELDS`; None when the Date header cannot be read."""
    try:
        when = email.utils.parsedate_to_datetime(message.date)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    recipients = sorted(set(message.to) | set(message.cc))
    n = len(recipients)
    band = 0 if n <= 1 else 1 if n <= 3 else 2 if n <= 10 else 3
    internal = [r.endswith("@enron.com") for r in recipients]
    audience = 0 if all(internal) else 1 if not any(internal) else 2
    kind = 1 if _REPLY.match(message.subject) else 2 if _FORWARD.match(message.subject) else 0
    return (12 * when.year + when.month - 1,
            (when.hour // 6, when.weekday(), band, kind, audience))


def _month_number(text: str) -> int:
    year, month = (int(x) for x in text.split("-"))
    if not 1 <= month <= 12:
        raise ValueError(f"bad month {text!r}; use YYYY-MM")
    return 12 * year + month - 1


def build_events(emails, *, min_emails=80, first_month="1999-01", last_month="2002-12"):
    """Per-sender monthly counts of the five fields.

    Parameters
    ----------
    emails : iterable of data_prep.emails.Email
    min_emails : int, keyword-only
        Senders with fewer emails in the window are dropped.
    first_month, last_month : str, keyword-only
        ``YYYY-MM`` window (the corpus holds a few mis-dated messages outside it).

    Returns
    -------
    dict
        ``counts`` (tuple of ``(n_steps, K_d)`` int64), ``chain``, ``month``, ``n_records``
        and a ``summary`` dict.

    Raises
    ------
    ValueError
        A bad window, ``min_emails < 1``, or no sender left.
    """
    lo, hi = _month_number(first_month), _month_number(last_month)
    if lo > hi:
        raise ValueError(f"prepare_events.first_month={first_month} is after "
                         f"prepare_events.last_month={last_month}: swap them")
    if min_emails < 1:
        raise ValueError(f"prepare_events.min_emails must be at least 1, got {min_emails}")
    by_sender: dict[str, list] = {}
    unreadable = outside = 0
    for message in emails:
        parsed = email_fields(message)
        if parsed is None:
            unreadable += 1
            continue
        if not lo <= parsed[0] <= hi:
            outside += 1
            continue
        by_sender.setdefault(message.sender, []).append(parsed)
    senders = sorted(s for s, rows in by_sender.items() if s and len(rows) >= min_emails)
    if not senders:
        raise ValueError(f"no sender has {min_emails} emails from {first_month} to "
                         f"{last_month}: lower prepare_events.min_emails or widen "
                         "prepare_events.first_month / prepare_events.last_month")
    chain, month, rows = [], [], []
    for c, sender in enumerate(senders):
        months = sorted({m for m, _ in by_sender[sender]})
        index = {m: i for i, m in enumerate(months)}
        tables = [np.zeros((len(months), len(cats)), dtype=np.int64) for _, cats in FIELDS]
        for m, fields in by_sender[sender]:
            for d, k in enumerate(fields):
                tables[d][index[m], k] += 1
        chain.append(np.full(len(months), c))
        month.append(np.array(months))
        rows.append(tables)
    counts = tuple(np.concatenate([r[d] for r in rows]) for d in range(len(FIELDS)))
    n_records = counts[0].sum(axis=1)
    summary = {"senders": len(senders), "steps": int(n_records.size),
               "records": int(n_records.sum()),
               "median_records_per_step": float(np.median(n_records)),
               "max_records_per_step": int(n_records.max()),
               "unreadable_dates": unreadable, "outside_window": outside,
               "senders_dropped": len(by_sender) - len(senders)}
    return {"counts": counts, "chain": np.concatenate(chain), "month": np.concatenate(month),
            "n_records": n_records, "summary": summary}


def write_events(events, out_dir, settings):
    """Write ``events.npz`` and ``meta.json`` (fields, settings, summary) atomically."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    arrays = {f"field_{d}": c for d, c in enumerate(events["counts"])}
    arrays.update(chain=events["chain"], month=events["month"], n_records=events["n_records"])
    atomic_write_bytes(out / "events.npz", npz_bytes(arrays))
    meta = {"format": "lpp-events", "format_version": FORMAT_VERSION,
            "fields": [{"name": n, "categories": list(c)} for n, c in FIELDS],
            "settings": settings, "summary": events["summary"]}
    atomic_write_bytes(out / "meta.json", json_bytes(meta))
    atomic_write_bytes(out / "summary.json", json_bytes(events["summary"]))
    return out


def load_events(path) -> EventLogs:
    """Read ``events.npz`` (and its ``meta.json``) as :class:`lpp.central.simulate.EventLogs`.

    Raises
    ------
    ValueError
        A ``meta.json`` of another format or version, or arrays that disagree with it.
    """
    path = Path(path)
    meta = json.loads((path.parent / "meta.json").read_text())
    if meta.get("format") != "lpp-events" or meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path.parent / 'meta.json'} is not an lpp-events v{FORMAT_VERSION} file")
    with np.load(path) as z:
        counts = tuple(z[f"field_{d}"] for d in range(len(meta["fields"])))
        chain, month, n_records = z["chain"], z["month"], z["n_records"]
    for d, f in enumerate(meta["fields"]):
        if counts[d].shape != (chain.size, len(f["categories"])):
            raise ValueError(f"field {f['name']} has shape {counts[d].shape}")
    return EventLogs(counts, chain, month, np.full(chain.size, -1), n_records, (),
                     tuple(f["name"] for f in meta["fields"]), "Enron: senders x months")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m data_prep.events",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", required=True, help="emails CSV (file,message columns)")
    parser.add_argument("--min-emails", type=int, default=80)
    parser.add_argument("--first-month", default="1999-01")
    parser.add_argument("--last-month", default="2002-12")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    def run() -> int:
        digest = verified_sha256(args.input)  # against a sibling SHA256SUMS, if there is one
        emails, stats = collect_emails(iter_emails_csv(args.input))
        events = build_events(emails, min_emails=args.min_emails,
                              first_month=args.first_month, last_month=args.last_month)
        events["summary"].update(stats.as_dict())
        write_events(events, args.out, {"input": Path(args.input).name, "input_sha256": digest,
                                        "min_emails": args.min_emails,
                                        "first_month": args.first_month,
                                        "last_month": args.last_month})
        print(json.dumps(events["summary"]))
        return 0

    return run_reporting_errors(run)


if __name__ == "__main__":
    raise SystemExit(main())
