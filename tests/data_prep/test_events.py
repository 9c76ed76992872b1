"""Enron emails as categorical event logs: the five fields of one email, per-sender monthly
counts, the sender filter and the window, and the file round trip (CLI included)."""
import csv
import gzip

import numpy as np
import pytest

from data_prep import events
from data_prep.emails import parse_email


def _email(message, **kw):
    return parse_email(message("body", **kw), "x")


def test_fields_of_one_email(message):
    e = _email(message, date="Sat, 3 Feb 2001 23:15:00 -0800", subject="RE: gas",
               to="a@enron.com, b@enron.com", cc="c@other.com")
    month, fields = events.email_fields(e)
    assert month == 12 * 2001 + 1
    # 23h -> band 3; Saturday -> 5; three recipients -> "2-3"; reply; mixed audience
    assert fields == (3, 5, 1, 1, 2)
    e = _email(message, date="Mon, 1 Jan 2001 05:00:00 -0800", subject="Fwd: x",
               to="a@enron.com", cc=", ".join(f"p{i}@enron.com" for i in range(11)))
    assert events.email_fields(e)[1] == (0, 0, 3, 2, 0)
    e = _email(message, subject="hello", to="z@example.com")
    assert events.email_fields(e)[1][3:] == (0, 1)
    assert events.email_fields(_email(message, date="not a date")) is None


def _corpus(message):
    out = []
    for i in range(5):  # alice: 5 emails in Jan and Mar 2001
        out.append(_email(message, sender="alice@enron.com",
                          date=f"Mon, {1 + i} {'Jan' if i < 3 else 'Mar'} 2001 10:00:00 -0800"))
    out.append(_email(message, sender="bob@enron.com"))  # bob: 1 email, dropped
    out.append(_email(message, sender="alice@enron.com", date="Mon, 1 Jan 1979 10:00:00 -0800"))
    return out


def test_build_events_counts_and_filters(message):
    ev = events.build_events(_corpus(message), min_emails=2)
    assert ev["summary"]["senders"] == 1 and ev["summary"]["outside_window"] == 1
    np.testing.assert_array_equal(ev["n_records"], [3, 2])
    np.testing.assert_array_equal(ev["month"], [12 * 2001, 12 * 2001 + 2])
    for c in ev["counts"]:
        np.testing.assert_array_equal(c.sum(axis=1), ev["n_records"])
    with pytest.raises(ValueError, match="no sender"):
        events.build_events(_corpus(message), min_emails=10)
    with pytest.raises(ValueError, match="month"):
        events.build_events(_corpus(message), first_month="2001-13")


def test_round_trip_through_the_cli(message, tmp_path):
    path = tmp_path / "emails.csv.gz"
    with gzip.open(path, "wt", newline="") as f:
        w = csv.writer(f)
        w.writerow(["file", "message"])
        for i in range(5):
            w.writerow([f"a/{i}.", message(f"body {i}", sender="alice@enron.com",
                                           date=f"Mon, {1 + i} Jan 2001 10:00:00 -0800")])
    assert events.main(["--input", str(path), "--min-emails", "2", "--out",
                        str(tmp_path / "out")]) == 0
    logs = events.load_events(tmp_path / "out" / "events.npz")
    assert logs.n_categories == (4, 7, 4, 3, 3)
    assert logs.n_steps == 1 and logs.n_records.tolist() == [5]
    assert logs.field_names[0] == "hour_band"
    (tmp_path / "out" / "meta.json").write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="lpp-events"):
        events.load_events(tmp_path / "out" / "events.npz")


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "emails.csv"
    bad.write_text("file,body\na/1.,hello\n")
    for path, expected in ((tmp_path / "missing.csv", "not found"),
                           (bad, "no column(s) ['message']")):
        assert events.main(["--input", str(path), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and expected in err
    assert not (tmp_path / "out").exists()
