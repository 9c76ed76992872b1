"""What changed between two records of the claims (``claims.json``): verdicts, readings, claims
added or dropped.

    python -m study.claims_changes BASE NEW
    python -m study.claims_changes HEAD~5:results/paper/claims.json results/paper/claims.json

``BASE`` and ``NEW`` are each a path, or ``REV:PATH`` for the file as committed at a git
revision (read with ``git show``, nothing checked out). The report, in Markdown, gives the
counts by verdict on both sides, a row per claim whose verdict changed — both readings, the
support behind each (chains, privatized copies) and the new verdict's reason — and the claims
that only one side has. A rerun or a change of the checks is reviewed with it: every changed
verdict is a line to explain.

Only the papers' statements are compared (the ``claims`` of the record); our own observations
and the patterns of other data sets carry no verdict.
"""
from __future__ import annotations

import argparse
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bench.tables import markdown_table
from study.claims import STATUSES

ROOT = Path(__file__).resolve().parents[1]


class RecordError(ValueError):
    """A claims record that cannot be read, naming where it was looked for."""


def load_record(spec: str, repo: Path = ROOT) -> dict:
    """A claims record from a path, or from ``REV:PATH`` as committed at revision ``REV``.

    Raises
    ------
    RecordError
        Naming ``spec``, when the file or revision does not exist or holds no claims record.
    """
    path = Path(spec)
    if path.exists():
        text = path.read_text(encoding="utf-8")
    elif ":" in spec:
        shown = subprocess.run(["git", "show", spec], cwd=repo, capture_output=True)
        if shown.returncode != 0:
            raise RecordError(f"{spec}: no such file, and git show cannot read it "
                              f"({shown.stderr.decode(errors='replace').strip()})")
        text = shown.stdout.decode("utf-8")
    else:
        raise RecordError(f"{spec}: no such file (a committed one is named REV:PATH)")
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"{spec}: not JSON ({err})") from None
    if not isinstance(record, dict) or not isinstance(record.get("claims"), list):
        raise RecordError(f"{spec}: not a claims record (no list of 'claims')")
    return record


@dataclass(frozen=True)
class Change:
    """One claim on both sides, or on one (the other is None)."""

    id: str
    base: dict | None
    new: dict | None

    @property
    def status_changed(self) -> bool:
        return (self.base is not None and self.new is not None
                and self.base["status"] != self.new["status"])


def changes(base: dict, new: dict) -> list[Change]:
    """Every claim of either record whose verdict changed, or that only one record has; in the
    new record's order, then the dropped claims in the base's."""
    before = {c["id"]: c for c in base["claims"]}
    after = {c["id"]: c for c in new["claims"]}
    found = [Change(i, before.get(i), c) for i, c in after.items()]
    found += [Change(i, c, None) for i, c in before.items() if i not in after]
    return [c for c in found if c.status_changed or c.base is None or c.new is None]


def counts(record: dict) -> dict[str, int]:
    """The number of claims by verdict, in :data:`study.claims.STATUSES` order."""
    statuses = [c["status"] for c in record["claims"]]
    return {s: statuses.count(s) for s in STATUSES}


def _support(claim: dict) -> str:
    parts = [f"{claim[key]} {one if claim[key] == 1 else key}"
             for key, one in (("chains", "chain"), ("copies", "copy")) if claim.get(key)]
    return ", ".join(parts) or "—"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ") if text else "—"


def report(base: dict, new: dict, *, base_name: str = "base", new_name: str = "new") -> str:
    """The Markdown report of what changed from ``base`` to ``new`` (module docstring)."""
    before, after = counts(base), counts(new)
    counted = [(s, before[s], after[s]) for s in STATUSES]
    counted.append(("all", sum(before.values()), sum(after.values())))
    lines = [f"# Claims: {base_name} → {new_name}", "",
             markdown_table(("verdict", base_name, new_name), counted), ""]
    found = changes(base, new)
    changed = [c for c in found if c.status_changed]
    lines += [f"## Verdicts that changed ({len(changed)})", ""]
    if changed:
        lines.append(markdown_table(
            ("claim", "verdict", "reading before", "reading now", "support before → now",
             "why now"),
            [(f"`{c.id}`", f"{c.base['status']} → {c.new['status']}", _cell(c.base.get("ours")),
              _cell(c.new.get("ours")), f"{_support(c.base)} → {_support(c.new)}",
              _cell(c.new.get("reason"))) for c in changed]))
    else:
        lines.append("None.")
    for title, side, members in (
            ("Claims only in " + new_name, "new", [c for c in found if c.base is None]),
            ("Claims only in " + base_name, "base", [c for c in found if c.new is None])):
        lines += ["", f"## {title} ({len(members)})", ""]
        if not members:
            lines.append("None.")
            continue
        rows = []
        for c in members:
            claim = getattr(c, side)
            rows.append((f"`{c.id}`", claim["status"], _cell(claim.get("ours"))))
        lines.append(markdown_table(("claim", "verdict", "reading"), rows))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m study.claims_changes",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the earlier claims.json: a path, or REV:PATH")
    parser.add_argument("new", help="the later claims.json: a path, or REV:PATH")
    args = parser.parse_args(argv)
    try:
        base, new = load_record(args.base), load_record(args.new)
    except RecordError as err:
        parser.exit(2, f"python -m study.claims_changes: {err}\n")
    print(report(base, new, base_name=args.base, new_name=args.new), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
