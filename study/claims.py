"""The papers' qualitative claims, each checked against the pipeline's result tables.

Every claim of the ICML paper's Figures 1, 3, 4, 5 and appendix Figures 1 and 2, of the VI
paper
(Schofield et al.) and of Foulds et al. (2016) that our pipeline has a table for is restated
here as a check over that table, and :func:`check_claims` returns one :class:`Claim` per
statement with our numbers, the paper's numbers where it prints them, the file it read, the
support behind it (chains x privatized copies, worst R-hat) and a status:

``PASS``
    the claim holds in our results beyond the spread;
``FAIL``
    our results contradict it beyond the spread;
``UNSETTLED``
    the fits' own chains disagree about it: judged chain by chain (each chain's values
    averaged over the copies), some chains say it holds and some that it does not;
``NOT-REPRODUCED``
    our results neither confirm nor contradict it: a difference within the spread, a cell
    with a single value (one chain of one copy: no spread to judge a difference by), or a
    printed number that ours misses by more than the stated tolerance (our settings differ
    from the paper's, so a number is compared, not asserted);
``NOT-RUN``
    the table the check reads is absent (its stage has not run at this scale) or lacks the
    column or setting it needs.

**The spread.** A *cell* is one method at one setting (privacy level, C, data set); its
values are one per chain of each privatized copy (score tables: one row per fit and chain,
a ``chain`` column where fits have several chains, ``rhat`` their worst R-hat; absent
columns mean one chain and an unknown R-hat). The spread of a comparison is the square root
of the summed variances of the two cells over all their chains and copies; a comparison
decides only where the difference exceeds it. A trend's steps each get the spread of their
two cells as tolerance.

**Case-study data.** The Enron claims (Figs 4 and 5) are judged only on the paper's data:
when the params file next to the results (``<results>/params.yaml``, else the one in its
parent folder) names another ``prepare_topics.dataset`` / ``prepare_network.dataset`` than
``enron`` (a missing key is ``enron``), the same comparisons are reported in a *pattern*
table, without verdicts or the paper's numbers.

A failed claim is a finding, never an error: the functions are pure functions of the tables,
and a table that is missing or malformed gives ``NOT-RUN`` with the reason. The results root
is a parameter, so the same checks run on the quick tables (``results``) and on the paper-scale
ones (``results/paper``), which have the same layout::

    eval/<dataset>_topics.csv, eval/<dataset>_network.csv,
    eval/<dataset>_network_rows_cols.csv           (report_* stages; the data sets' names)
    synthetic/communities.json, synthetic/topics.json   (Figures 1 and 3)
    synthetic/two_geometric.json                   (appendix Figure 2)
    vi/synthetic.json, vi/benchmark.csv            (VI paper, Figure 1 and appendix E)
    central/beta_bernoulli.json, central/heldout_loglik.csv, central/occupancy.json,
    central/runtime.json                           (Foulds et al.)

Every check records the files it read (``Claim.reads``); a check reads under its results root
only. Run ``python -m study.claims --results results`` to write ``claims.md`` and
``claims.json`` there (the DVC stage ``claims``).

Adding a check: write a function of the results root that returns a :class:`Verdict` (the
kinds below -- :func:`better`, :func:`not_better`, :func:`trend_with_noise`,
:func:`close_to`, :func:`near_number`, :func:`flag` -- do the judging over :class:`Cell`
objects built by :func:`table_cells`), and list it in a group function as a :class:`Check`.
"""
from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from lpp.formats.files import atomic_write_bytes, json_bytes
from study.score_tables import is_unmasked

__all__ = [
    "STATUSES",
    "Cell",
    "Check",
    "Claim",
    "Verdict",
    "better",
    "check_claims",
    "claims_markdown",
    "close_to",
    "flag",
    "near_number",
    "not_better",
    "table_cells",
    "trend_with_noise",
    "write_claims",
]

PASS, FAIL, UNSETTLED = "PASS", "FAIL", "UNSETTLED"
NOT_REPRODUCED, NOT_RUN = "NOT-REPRODUCED", "NOT-RUN"
STATUSES = (PASS, FAIL, UNSETTLED, NOT_REPRODUCED, NOT_RUN)

#: the case studies' data set when the params file names none: the papers' own
PAPER_DATASET = "enron"
#: the settings the checks read from the params file next to the results (the claims stage
#: declares them, or their sections, in dvc.yaml)
PARAMS_READ = ("prepare_topics.dataset", "prepare_network.dataset", "vi_benchmark.n")

OURS, NAIVE, NONPRIVATE = "collapsed", "naive", "nonprivate"
#: how the methods are named in the report
_LABELS = {OURS: "ours", NAIVE: "naive", NONPRIVATE: "non-private"}
ICML = "Schein et al. (ICML 2019)"
VI = "Schofield et al. (VI)"
FOULDS = "Foulds et al. (2016)"


# ---------------------------------------------------------------- cells and verdicts

@dataclass(frozen=True)
class Cell:
    """The values of one measure for one method at one setting, over chains x copies.

    ``values[i]`` is chain ``chains[i]`` of one privatized copy; ``copies`` counts the
    copies; ``rhat`` is the worst R-hat of the fits behind the cell (NaN: unknown).
    """

    values: tuple
    chains: tuple
    copies: int
    rhat: float = math.nan

    @classmethod
    def of(cls, values, chains=None, copies=None, rhat=math.nan) -> "Cell":
        """A cell from plain values (``chains`` None: one chain, each value a copy)."""
        values = tuple(float(v) for v in np.ravel(values))
        chains = (0,) * len(values) if chains is None else tuple(int(c) for c in chains)
        if copies is None:
            copies = len(values) // max(len(set(chains)), 1)
        return cls(values, chains, int(copies), float(rhat))

    @property
    def n_chains(self) -> int:
        return len(set(self.chains))

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    @property
    def sd(self) -> float:
        """Standard deviation over every chain and copy (NaN for a single value)."""
        return float(np.std(self.values, ddof=1)) if len(self.values) > 1 else math.nan

    def chain_means(self) -> dict:
        """Each chain's value averaged over the copies."""
        by = {}
        for c, v in zip(self.chains, self.values):
            by.setdefault(c, []).append(v)
        return {c: float(np.mean(v)) for c, v in sorted(by.items())}


def _spread(*cells: Cell) -> float:
    """sqrt of the summed variances; NaN when no cell has two values (no spread known)."""
    known = [c.sd ** 2 for c in cells if np.isfinite(c.sd)]
    return float(np.sqrt(sum(known))) if known else math.nan


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check: a status, our numbers, a one-line reason and its support."""

    status: str
    ours: str
    reason: str
    chains: int | None = None
    copies: int | None = None
    rhat: float | None = None


def _verdict(status, ours, reason, cells=()) -> Verdict:
    """A verdict with the support of ``cells``: the fewest chains and copies, worst R-hat."""
    cells = [c for c in cells if c is not None and c.values]
    if not cells:
        return Verdict(status, ours, reason)
    rhats = [c.rhat for c in cells if np.isfinite(c.rhat)]
    return Verdict(status, ours, reason, chains=min(c.n_chains for c in cells),
                   copies=min(c.copies for c in cells), rhat=max(rhats) if rhats else None)


def _fmt(value) -> str:
    """Three significant digits: the tables repeat to the byte across machines."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{float(value):.3g}"


def _fmt_cell(cell: Cell) -> str:
    return _fmt(cell.mean) + (f" ± {_fmt(cell.sd)}" if np.isfinite(cell.sd) else "")


def _chain_votes(judge, *cell_maps) -> list[bool]:
    """The claim judged chain by chain: ``judge`` gets, per chain index present in every
    cell, the same maps with each cell replaced by that chain's mean over the copies."""
    chains = None
    for cells in cell_maps:
        for cell in cells.values():
            if cell.n_chains < 2:
                continue
            mine = set(cell.chains)
            chains = mine if chains is None else chains & mine
    if not chains or len(chains) < 2:
        return []
    votes = []
    for c in sorted(chains):
        views = [{k: (cell.chain_means().get(c, cell.mean)) for k, cell in cells.items()}
                 for cells in cell_maps]
        votes.append(bool(judge(*views)))
    return votes


def _unsettled(votes) -> bool:
    return len(set(votes)) > 1


# ---------------------------------------------------------------- reading cells from tables

def _rows_cell(rows: pd.DataFrame, measure: str) -> Cell | None:
    rows = rows[np.isfinite(pd.to_numeric(rows[measure], errors="coerce"))]
    if rows.empty:
        return None
    chains = rows["chain"].fillna(0).astype(int) if "chain" in rows else None
    n_chains = 1 if chains is None else chains.nunique()
    copies = rows["fit"].nunique() if "fit" in rows else len(rows) // n_chains
    rhat = pd.to_numeric(rows["rhat"], errors="coerce").max() if "rhat" in rows else math.nan
    return Cell.of(rows[measure].astype(float).to_numpy(), chains, copies, rhat)


def table_cells(table: pd.DataFrame, method: str, measure: str,
                level: str = "epsilon_over_n") -> dict:
    """One :class:`Cell` per value of ``level`` for ``method`` (rows: fits and chains).

    A method without levels (the non-private reference) gives one cell keyed None.
    """
    rows = table[table.method == method]
    if rows.empty or measure not in rows:
        return {}
    if rows[level].isna().all():
        cell = _rows_cell(rows, measure)
        return {} if cell is None else {None: cell}
    cells = {}
    for value, group in rows.groupby(level):
        cell = _rows_cell(group, measure)
        if cell is not None:
            cells[float(value)] = cell
    return dict(sorted(cells.items(), key=lambda kv: -kv[0]))


# ---------------------------------------------------------------- the kinds of check

def _label(level, name) -> str:
    return f"{name}={level:g}" if isinstance(level, (int, float)) else str(level)


def _keys(levels, name) -> str:
    """Levels as the verdicts name them: ``ε/N=3, 1`` (numbers) or ``iraq ε=0.1, ...``."""
    levels = list(levels)
    if all(isinstance(k, (int, float)) for k in levels):
        return f"{name}=" + ", ".join(f"{k:g}" for k in levels)
    return ", ".join(map(str, levels))


def _pairs(mine: dict, theirs: dict):
    """Level by level; a reference without levels faces every level."""
    if list(theirs) == [None]:
        return {k: (a, theirs[None]) for k, a in mine.items()}
    if set(mine) - set(theirs):
        raise _Missing("the compared method lacks some level of the other")
    return {k: (a, theirs[k]) for k, a in mine.items()}


def better(mine: dict, theirs: dict, *, higher_is_better: bool, most: bool = False,
           names=("ours", "the other"), level: str = "ε/N") -> Verdict:
    """``mine`` beats ``theirs`` at every level (``most``: at a majority of the levels).

    Parameters
    ----------
    mine, theirs : dict of Cell
        Cells keyed by level (``theirs`` may hold one cell keyed None: a reference that
        faces every level).
    higher_is_better : bool
        The direction of the measure.
    most : bool
        The paper's "in most settings": a majority of the levels suffices.
    names : (str, str)
        How the two sides are named in the verdict.
    level : str
        The name of the level in the verdict's text.

    Returns
    -------
    Verdict
        PASS where enough levels are better beyond the spread; FAIL where too many are
        worse beyond it for the claim to hold; UNSETTLED where the chains disagree;
        otherwise NOT-REPRODUCED.
    """
    if not mine or not theirs:
        return Verdict(NOT_RUN, "n/a", f"no values for {names[0] if not mine else names[1]}")
    pairs = _pairs(mine, theirs)
    sign = 1.0 if higher_is_better else -1.0
    n = len(pairs)
    need = n // 2 + 1 if most else n
    wins, losses, unknown = [], [], False
    for k, (a, b) in pairs.items():
        gain, spread = sign * (a.mean - b.mean), _spread(a, b)
        if not np.isfinite(spread):
            unknown = True
        elif gain > spread:
            wins.append(k)
        elif gain < -spread:
            losses.append(k)
    ours = "; ".join(f"{_label(k, level)}: {names[0]} {_fmt_cell(a)}, {names[1]} {_fmt_cell(b)}"
                     for k, (a, b) in pairs.items())
    cells = [c for ab in pairs.values() for c in ab]
    quantifier = f"at least {need} of {n}" if most else f"all {n}"

    def by_sign(m, t):
        count = sum(sign * (m[k] - (t[None] if None in t else t[k])) > 0 for k in m)
        return count >= need

    votes = _chain_votes(by_sign, mine, theirs)
    if _unsettled(votes):
        return _verdict(UNSETTLED, ours, f"the chains disagree: {sum(votes)} of {len(votes)} "
                        f"chains have {names[0]} better at {quantifier} levels", cells)
    if len(wins) >= need:
        return _verdict(PASS, ours, f"{names[0]} better beyond the spread at {len(wins)} of "
                        f"{n} levels", cells)
    if n - len(losses) < need:
        return _verdict(FAIL, ours, f"{names[0]} worse than {names[1]} beyond the spread at "
                        f"{_keys(losses, level)}", cells)
    if unknown:
        point = sum(sign * (a.mean - b.mean) > 0 for a, b in pairs.values())
        return _verdict(NOT_REPRODUCED, ours, f"one value per cell (one chain of one copy): "
                        f"no spread to judge by; by the point values {names[0]} is better at "
                        f"{point} of {n} levels", cells)
    return _verdict(NOT_REPRODUCED, ours, f"{names[0]} better beyond the spread at "
                    f"{len(wins)} of {n} levels, worse beyond it at {len(losses)} (needs "
                    f"{quantifier})", cells)


def not_better(mine: dict, theirs: dict, *, higher_is_better: bool,
               names=("ours", "the other"), level: str = "ε/N") -> Verdict:
    """``mine`` does not beat ``theirs`` at any level.

    FAIL where ``mine`` is better beyond the spread at some level; PASS where at every
    level it is worse or within the spread (with no spread known: worse by the point
    values); UNSETTLED where the chains disagree; otherwise NOT-REPRODUCED.
    """
    if not mine or not theirs:
        return Verdict(NOT_RUN, "n/a", f"no values for {names[0] if not mine else names[1]}")
    pairs = _pairs(mine, theirs)
    sign = 1.0 if higher_is_better else -1.0
    above, undecided = [], []
    for k, (a, b) in pairs.items():
        gain, spread = sign * (a.mean - b.mean), _spread(a, b)
        if np.isfinite(spread):
            if gain > spread:
                above.append(k)
        elif gain > 0:
            undecided.append(k)
    ours = "; ".join(f"{_label(k, level)}: {names[0]} {_fmt_cell(a)}, {names[1]} {_fmt_cell(b)}"
                     for k, (a, b) in pairs.items())
    cells = [c for ab in pairs.values() for c in ab]

    def by_sign(m, t):
        return all(sign * (m[k] - (t[None] if None in t else t[k])) <= 0 for k in m)

    votes = _chain_votes(by_sign, mine, theirs)
    if _unsettled(votes):
        return _verdict(UNSETTLED, ours, f"the chains disagree: {sum(votes)} of {len(votes)} "
                        f"chains have {names[0]} nowhere above {names[1]}", cells)
    if above:
        return _verdict(FAIL, ours, f"{names[0]} above {names[1]} beyond the spread at "
                        f"{_keys(above, level)}", cells)
    if undecided:
        return _verdict(NOT_REPRODUCED, ours, f"{names[0]} above {names[1]} at "
                        f"{_keys(undecided, level)}, one value per cell: no spread to judge "
                        "by", cells)
    return _verdict(PASS, ours, f"{names[0]} nowhere above {names[1]} beyond the spread "
                    f"({len(pairs)} levels)", cells)


def trend_with_noise(cells: dict, *, worsens: bool = True, higher_is_better: bool) -> Verdict:
    """The score gets worse (``worsens``) as the noise grows, each step judged by its spread.

    ``cells`` maps a noise level's label, ordered from least to most noise, to its
    :class:`Cell`. PASS where the change from the least to the most noise goes the claimed
    way beyond its spread and no step goes against it beyond its own; FAIL where a step or
    the whole change goes against it beyond the spread; UNSETTLED where the chains disagree
    (each chain judged by the signs of its steps); otherwise NOT-REPRODUCED.
    """
    items = [(k, c) for k, c in cells.items() if c is not None and np.isfinite(c.mean)]
    if len(items) < 2:
        return Verdict(NOT_RUN, "n/a", "fewer than two noise levels")
    sign = 1.0 if worsens != higher_is_better else -1.0   # + : the claimed direction
    ours = " → ".join(f"{k}: {_fmt_cell(c)}" for k, c in items)
    all_cells = [c for _, c in items]
    steps = [(sign * (b.mean - a.mean), _spread(a, b)) for (_, a), (_, b) in zip(items, items[1:])]
    total, total_spread = sign * (items[-1][1].mean - items[0][1].mean), \
        _spread(items[0][1], items[-1][1])

    def by_sign(view):
        values = [view[k] for k, _ in items]
        return all(sign * d > 0 for d in np.diff(values))

    votes = _chain_votes(by_sign, dict(items))
    word = "worse" if worsens else "better"
    if _unsettled(votes):
        return _verdict(UNSETTLED, ours, f"the chains disagree: {sum(votes)} of {len(votes)} "
                        f"chains get {word} at every step", all_cells)
    if not np.isfinite(total_spread):
        going = sum(d > 0 for d, _ in steps)
        return _verdict(NOT_REPRODUCED, ours, f"one value per cell (one chain of one copy): no "
                        f"spread to judge by; {going} of {len(steps)} steps go the claimed way",
                        all_cells)
    against = [i for i, (d, s) in enumerate(steps) if np.isfinite(s) and d < -s]
    if against or total < -total_spread:
        return _verdict(FAIL, ours, f"{len(against)} of {len(steps)} steps, or the whole "
                        f"change, go against the claim beyond the spread", all_cells)
    if total > total_spread:
        dips = sum(d <= 0 for d, _ in steps)
        extra = f" ({dips} step(s) against it within the spread)" if dips else ""
        return _verdict(PASS, ours, f"{word} from the least to the most noise beyond the "
                        f"spread{extra}", all_cells)
    return _verdict(NOT_REPRODUCED, ours, "the change from the least to the most noise lies "
                    "within the spread", all_cells)


def close_to(mine: dict, reference: Cell, *, rel_tol: float,
             names=("ours", "reference"), level: str = "ε/N") -> Verdict:
    """Every level of ``mine`` lies within ``rel_tol`` (relative) of ``reference``.

    PASS where every gap plus its spread is within the tolerance; FAIL where some gap minus
    its spread exceeds it; UNSETTLED where the chains disagree; otherwise NOT-REPRODUCED.
    """
    if reference is None or not np.isfinite(reference.mean) or not mine:
        return Verdict(NOT_RUN, "n/a", "no reference value")
    bound = rel_tol * abs(reference.mean)
    ours = "; ".join(f"{_label(k, level)}: {names[0]} {_fmt_cell(c)}" for k, c in mine.items())
    ours += f"; {names[1]} {_fmt_cell(reference)}"
    cells = [*mine.values(), reference]
    gaps = {k: (abs(c.mean - reference.mean), _spread(c, reference)) for k, c in mine.items()}

    def by_sign(m, r):
        return all(abs(v - r["ref"]) <= bound for v in m.values())

    votes = _chain_votes(by_sign, mine, {"ref": reference})
    if _unsettled(votes):
        return _verdict(UNSETTLED, ours, f"the chains disagree: {sum(votes)} of {len(votes)} "
                        f"chains within {rel_tol:.0%} at every level", cells)
    far = [k for k, (g, s) in gaps.items() if np.isfinite(s) and g - s > bound]
    largest = max(g for g, _ in gaps.values()) / abs(reference.mean)
    if far:
        return _verdict(FAIL, ours, f"more than {rel_tol:.0%} away beyond the spread at "
                        f"{_keys(far, level)}", cells)
    if all(np.isfinite(s) and g + s <= bound for g, s in gaps.values()):
        return _verdict(PASS, ours, f"within {rel_tol:.0%} at every level, spread included "
                        f"(largest gap {largest:.1%})", cells)
    if any(not np.isfinite(s) for _, s in gaps.values()):
        return _verdict(NOT_REPRODUCED, ours, f"one value per cell: no spread to judge by "
                        f"(largest gap {largest:.1%}, tolerance {rel_tol:.0%})", cells)
    return _verdict(NOT_REPRODUCED, ours, f"within {rel_tol:.0%} only within the spread "
                    f"(largest gap {largest:.1%})", cells)


def near_number(ours, paper: float, *, rel_tol: float, better_if_lower: bool,
                cell: Cell | None = None) -> Verdict:
    """A printed number of the paper matched within ``rel_tol``, or beaten.

    Our settings differ from the paper's, so a miss is NOT-REPRODUCED, never FAIL. ``cell``
    (optional) gives our value's chains and copies; ``ours`` is then its mean, and chains
    that disagree about the match make it UNSETTLED.
    """
    if cell is not None:
        ours = cell.mean
    if ours is None or not np.isfinite(ours):
        return Verdict(NOT_RUN, "n/a", "no number of ours")
    def matches(value):
        beats = value <= paper if better_if_lower else value >= paper
        return beats or abs(value - paper) / abs(paper) <= rel_tol

    beats = ours <= paper if better_if_lower else ours >= paper
    gap = abs(ours - paper) / abs(paper)
    text = _fmt_cell(cell) if cell is not None else _fmt(ours)
    cells = [cell] if cell is not None else []
    votes = _chain_votes(lambda view: matches(view["ours"]), {"ours": cell}) if cell else []
    if _unsettled(votes):
        return _verdict(UNSETTLED, text, f"the chains disagree: {sum(votes)} of {len(votes)} "
                        f"chains match the paper's {_fmt(paper)}", cells)
    if beats or gap <= rel_tol:
        how = "beats" if beats else f"within {rel_tol:.0%} of"
        return _verdict(PASS, text, f"ours {how} the paper's {_fmt(paper)}", cells)
    return _verdict(NOT_REPRODUCED, text,
                    f"{gap:.0%} from the paper's {_fmt(paper)} (tolerance {rel_tol:.0%})", cells)


def flag(value, ours: str, *, holds: str, fails: str) -> Verdict:
    """A yes/no result a stage computed itself (e.g. a crossing check)."""
    if value is None:
        return Verdict(NOT_RUN, ours, "the stage did not record this check")
    return Verdict(PASS, ours, holds) if bool(value) else Verdict(FAIL, ours, fails)


# ---------------------------------------------------------------- reading the tables

class _Missing(Exception):
    """A table the checks need is absent or lacks something: NOT-RUN, not a crash."""


class _Reader:
    """Reads the tables under one results root and records every file it was asked for."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.read: list[str] = []

    def _path(self, rel: str) -> Path:
        path = self.root / rel
        name = path.as_posix()
        if name not in self.read:
            self.read.append(name)
        return path

    def csv(self, rel: str, columns=("method", "epsilon_over_n")) -> pd.DataFrame:
        path = self._path(rel)
        if not path.is_file():
            raise _Missing(f"{rel} is absent")
        try:
            table = pd.read_csv(path)
        except (ValueError, OSError) as err:
            raise _Missing(f"{rel} is unreadable: {err}") from None
        lacking = [c for c in columns if c not in table]
        if lacking:
            raise _Missing(f"{rel} has no column {', '.join(lacking)}")
        return table

    def json(self, rel: str) -> dict:
        path = self._path(rel)
        if not path.is_file():
            raise _Missing(f"{rel} is absent")
        try:
            return json.loads(path.read_text())
        except (ValueError, OSError) as err:
            raise _Missing(f"{rel} is unreadable: {err}") from None

    def params_path(self) -> Path | None:
        """The params file next to the results: ``<root>/params.yaml``, else its parent's."""
        for path in (self.root / "params.yaml", self.root.parent / "params.yaml"):
            if path.is_file():
                return path
        return None

    def case_table(self, case: str, table: str) -> str:
        """The path (under the root) of a case study's score table, named by its data set:
        ``eval/<dataset>_<table>.csv``."""
        return f"eval/{dataset_of(self.params(), case)}_{table}.csv"

    def params(self) -> dict:
        """The params file's settings ({} when there is none or it is unreadable)."""
        path = self.params_path()
        if path is None:
            return {}
        if path.as_posix() not in self.read:
            self.read.append(path.as_posix())
        try:
            data = yaml.safe_load(path.read_text())
        except (yaml.YAMLError, OSError):
            return {}
        return data if isinstance(data, dict) else {}


def _get(data: dict, *keys):
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            raise _Missing(f"no {'/'.join(map(str, keys))}")
        data = data[key]
    return data


def _run(check) -> Verdict:
    try:
        return check()
    except _Missing as missing:
        return Verdict(NOT_RUN, "n/a", str(missing))
    except (AttributeError, KeyError, TypeError, ValueError, IndexError) as err:
        # a table of an unexpected shape is reported, not raised: the claims stage must finish
        return Verdict(NOT_RUN, "n/a", f"table not as expected: {type(err).__name__}: {err}")


def dataset_of(params: dict, case: str) -> str:
    """The data set of a case study (``prepare_topics``/``prepare_network``): its
    ``dataset`` key, :data:`PAPER_DATASET` when there is none."""
    section = params.get(f"prepare_{case}") if isinstance(params, dict) else None
    value = section.get("dataset") if isinstance(section, dict) else None
    return PAPER_DATASET if value in (None, "") else str(value)


# ---------------------------------------------------------------- the claims

@dataclass(frozen=True)
class Check:
    """One claim to check: where the paper makes it, what it says, its printed numbers, and
    the function of no arguments that judges it (reading through the group's reader).
    ``case`` names the case study whose data it needs (``"topics"``/``"network"``), if any."""

    id: str
    where: str
    statement: str
    paper: str
    run: object
    case: str | None = None


def _icml_fig1(r: _Reader):
    def data():
        return r.json("synthetic/communities.json")

    def cells(method):
        return {_get(lvl, "epsilon"): Cell.of([_get(lvl, method, "mae_to_rates")])
                for lvl in _get(data(), "levels")}

    def naive_trend():
        return trend_with_noise({f"ε={k:g}": c for k, c in cells(NAIVE).items()},
                                higher_is_better=False)

    def ours_nearer_nonprivate():
        # each method's distance to the non-private error: ours nearer than naive
        reference = _get(data(), "non-private", "mae_to_rates")

        def distance(method):
            return {k: Cell.of([abs(v - reference) for v in c.values], c.chains, c.copies)
                    for k, c in cells(method).items()}
        verdict = better(distance(OURS), distance(NAIVE), higher_is_better=False,
                         names=("ours", "naive"), level="ε")
        mine, naive = cells(OURS), cells(NAIVE)
        ours = "; ".join(f"ε={k:g}: ours {_fmt_cell(mine[k])}, naive {_fmt_cell(naive[k])}"
                         for k in mine) + f"; non-private {_fmt(reference)}"
        return Verdict(verdict.status, ours, f"distances to the non-private error: "
                       f"{verdict.reason}", verdict.chains, verdict.copies, verdict.rhat)

    fig = "Fig. 1 (synthetic network, block structure)"
    return [
        Check("icml.fig1.ours_beats_naive", fig,
              "Our method recovers the true rates μ* better (lower MAE) than the naive method "
              "at every noise level", "no numbers printed",
              lambda: better(cells(OURS), cells(NAIVE), higher_is_better=False,
                             names=("ours", "naive"), level="ε")),
        Check("icml.fig1.naive_degrades", fig,
              "The naive method's error grows as privacy increases (it overfits the noise)",
              "no numbers printed", naive_trend),
        Check("icml.fig1.ours_recovers_structure", fig,
              "Our method recovers the latent structure even at high privacy: its error stays "
              "nearer the non-private error than the naive method's", "no numbers printed",
              ours_nearer_nonprivate),
    ]


def _icml_fig3(r: _Reader):
    def cells(method):
        # each seed repeats the whole experiment, so the seeds are the copies of a cell
        rows = pd.DataFrame(_get(r.json("synthetic/topics.json"), "per_seed"))
        rows = rows.assign(method=method, epsilon_over_n=rows["alpha0"],
                           fit=rows["seed"], value=rows[method])
        return table_cells(rows, method, "value")

    def naive_trend():
        ordered = sorted(cells(NAIVE).items())
        return trend_with_noise({f"α0={k:g}": c for k, c in ordered}, higher_is_better=False)

    def growth_from_low_to_high():
        # per seed (the copies), the growth of each method's distance from the least noise to
        # the most
        rows = pd.DataFrame(_get(r.json("synthetic/topics.json"), "per_seed"))
        low, high = rows["alpha0"].min(), rows["alpha0"].max()
        if low == high:
            raise _Missing("synthetic/topics.json has fewer than two noise levels")
        at = {a: rows[rows.alpha0 == a].set_index("seed") for a in (low, high)}
        seeds = at[low].index.intersection(at[high].index)
        growth = pd.DataFrame([{"method": m, "epsilon_over_n": high, "fit": seed,
                                "growth": at[high].loc[seed, m] - at[low].loc[seed, m]}
                               for seed in seeds for m in (OURS, NAIVE)])
        verdict = better(table_cells(growth, OURS, "growth"), table_cells(growth, NAIVE, "growth"),
                         higher_is_better=False, names=("ours", "naive"), level="α0")
        return Verdict(verdict.status, f"growth of the Hellinger distance from α0={low:g} to "
                       f"{verdict.ours}", verdict.reason, verdict.chains, verdict.copies,
                       verdict.rhat)

    fig = "Fig. 3 (synthetic topics, topic recovery)"
    return [
        Check("icml.fig3.ours_beats_naive", fig,
              "Our method recovers the true topics better (lower mean Hellinger distance of "
              "the aligned topics) than the naive method", "no numbers printed",
              lambda: better(cells(OURS), cells(NAIVE), higher_is_better=False,
                             names=("ours", "naive"), level="α0")),
        Check("icml.fig3.naive_degrades", fig,
              "The naive method recovers the topics worse at the high noise level than at "
              "the low one", "no numbers printed", naive_trend),
        Check("icml.fig3.ours_recovers_at_high_noise", fig,
              "With a high level of noise the naive method fails to recover the true topics "
              "while ours still does (checked: from the lowest to the highest noise level our "
              "distance to the true topics grows less than the naive method's)",
              "no numbers printed", growth_from_low_to_high),
    ]


def _icml_fig4(r: _Reader):
    def cells(method, measure):
        return table_cells(r.csv(r.case_table("topics", "topics")), method, measure)

    def compare(kind, measure, other, *, higher_is_better, **kw):
        return kind(cells(OURS, measure), cells(other, measure),
                    higher_is_better=higher_is_better, names=("ours", _LABELS[other]), **kw)

    def naive_trend():
        return trend_with_noise({f"ε/N={k:g}": c for k, c in cells(NAIVE, "mae").items()},
                                higher_is_better=False)

    def ours_near_nonprivate():
        reference = cells(NONPRIVATE, "mae")
        if None not in reference:
            raise _Missing(f"no non-private row in {r.case_table('topics', 'topics')}")
        return close_to(cells(OURS, "mae"), reference[None], rel_tol=0.10,
                        names=("ours", "non-private"))

    fig = "Fig. 4 (Enron topics)"
    topics = "topics"
    return [
        Check("icml.fig4.mae_ours_beats_naive", fig,
              "Our method's reconstruction MAE is lower than the naive method's at every ε/N",
              "no numbers printed",
              lambda: compare(better, "mae", NAIVE, higher_is_better=False), topics),
        Check("icml.fig4.mae_ours_near_nonprivate", fig,
              "Our method has almost the same reconstruction MAE as non-private Poisson "
              "factorization (checked: within 10%)", "no numbers printed",
              ours_near_nonprivate, topics),
        Check("icml.fig4.mae_naive_degrades", fig,
              "The naive method's MAE increases dramatically as the privacy level increases",
              "no numbers printed", naive_trend, topics),
        Check("icml.fig4.npmi_ours_beats_naive", fig,
              "Our method's topics have higher NPMI than the naive method's (never-co-"
              "occurring pair scored -1)", "no numbers printed",
              lambda: compare(better, "npmi", NAIVE, higher_is_better=True), topics),
        Check("icml.fig4.npmi_zero_ours_beats_naive", fig,
              "Our method's topics have higher NPMI than the naive method's (never-co-"
              "occurring pair scored 0, as in Lau et al.'s toolkit)", "no numbers printed",
              lambda: compare(better, "npmi_zero", NAIVE, higher_is_better=True), topics),
        Check("icml.fig4.npmi_ours_not_above_nonprivate", fig,
              "On NPMI our method does not beat non-private Poisson factorization at any ε/N "
              "(NPMI weighs rare words, which our method drops; never-co-occurring pair "
              "scored -1)", "no numbers printed",
              lambda: compare(not_better, "npmi", NONPRIVATE, higher_is_better=True), topics),
        Check("icml.fig4.npmi_zero_ours_not_above_nonprivate", fig,
              "On NPMI our method does not beat non-private Poisson factorization at any ε/N "
              "(never-co-occurring pair scored 0, as in Lau et al.'s toolkit)",
              "no numbers printed",
              lambda: compare(not_better, "npmi_zero", NONPRIVATE, higher_is_better=True),
              topics),
        Check("icml.fig4.coherence_ours_beats_naive", fig,
              "Our method's topics have higher Mimno coherence than the naive method's",
              "no numbers printed",
              lambda: compare(better, "coherence", NAIVE, higher_is_better=True), topics),
        Check("icml.fig4.coherence_ours_beats_nonprivate", fig,
              "Our method's topics have higher coherence than non-private Poisson "
              "factorization (which may overfit)", "no numbers printed",
              lambda: compare(better, "coherence", NONPRIVATE, higher_is_better=True), topics),
    ]


def _icml_appendix_fig2(r: _Reader):
    """Appendix Fig. 2: 2Geo(alpha) is the Skellam with exponentially randomized rates, and
    (unlike a Skellam of fixed rates) symmetric, centred at zero and heavy tailed."""
    def data():
        return r.json("synthetic/two_geometric.json")

    def identity():
        check = _get(data(), "identity")
        alphas = ", ".join(_get(check, "per_alpha"))
        ours = (f"largest |pmf gap| below {_get(check, 'max_abs_gap_below'):.0e} over "
                f"|τ| ≤ {_get(check, 'k_max')}, α = {alphas}")
        return flag(_get(check, "holds"), ours,
                    holds=f"the Skellam mixture equals the 2Geo pmf (tolerance "
                          f"{_get(check, 'tolerance'):.0e})",
                    fails="the Skellam mixture and the 2Geo pmf differ")

    def shapes():
        d = data()
        skellam, tails = _get(d, "skellam"), _get(d, "tails")
        off_centre = [s for s in skellam if _get(s, "mean") != 0]
        heavier = [t for t in tails if _get(t, "two_sided_geometric") > _get(t, "skellam")]
        ours = "; ".join(f"α={_get(t, 'alpha'):g}: P(|τ| ≥ {_get(t, 'k')}) 2Geo "
                         f"{_fmt(_get(t, 'two_sided_geometric'))}, Skellam "
                         f"{_fmt(_get(t, 'skellam'))}" for t in tails)
        ours += f"; {len(off_centre)} of {len(skellam)} fixed-rate Skellams off centre"
        if off_centre and len(heavier) == len(tails):
            return Verdict(PASS, ours, "fixed-rate Skellams can sit off zero; 2Geo's far tail "
                           "(4 sd) heavier than the equal-variance Skellam's at every α")
        return Verdict(FAIL, ours, "no off-centre Skellam, or a 2Geo tail not heavier")

    fig = "appendix Fig. 2 (Skellam and two-sided geometric pmfs)"
    return [
        Check("icml.appfig2.randomized_skellam", fig,
              "The two-sided geometric distribution 2Geo(α) is the Skellam distribution with "
              "rates drawn from an exponential of mean α/(1−α) (Theorem 2)",
              "a proof (no numbers)", identity),
        Check("icml.appfig2.symmetric_heavy_tailed", fig,
              "With fixed rates the Skellam can be asymmetric and centred away from zero; 2Geo "
              "is symmetric, centred at zero and heavy tailed (the discrete Laplace)",
              "no numbers printed", shapes),
    ]


def _network_cs(r: _Reader, rel: str, unmasked: bool) -> list:
    """The C values with rows of the given design in a network table (none if unreadable)."""
    try:
        t = r.csv(rel, ("method", "epsilon_over_n", "C"))
    except _Missing:
        return []
    return sorted({int(c) for c in t.loc[is_unmasked(t) == unmasked, "C"].dropna()})


#: how the unmasked claims state their design
_ARXIV = ("the arXiv design: separate runs that fit every entry, MAE over every "
          "off-diagonal entry")
#: the two held-out masks (data_prep/README.md, Held-out mask): their tables and how the
#: claims name them
_MASKS = {"block": ("network", ""), "rows_cols": ("network_rows_cols", "rows_cols.")}
_MASK_TEXT = {"block": "held out: top senders x top recipients",
              "rows_cols": "held out: every entry of the top senders and recipients, the "
                           "paper's text"}


def _icml_fig5(r: _Reader):
    where = {5: "Fig. 5 (Enron network, C = {c})", 10: "appendix Fig. 1 (Enron network, "
             "C = {c})", 20: "Fig. 5 (Enron network, C = {c})"}

    def table(rel, c, unmasked=False):
        t = r.csv(rel)
        if "C" not in t:
            raise _Missing(f"{rel} has no C column")
        fits = t[(t.C == c) & (is_unmasked(t) == unmasked)]
        if fits.empty:
            raise _Missing(f"no {'unmasked ' if unmasked else ''}fit with C = {c} in {rel}")
        return fits

    def cells(rel, c, method, measure, unmasked=False):
        return table_cells(table(rel, c, unmasked), method, measure)

    def compare(rel, c, measure, other, unmasked=False, **kw):
        return better(cells(rel, c, OURS, measure, unmasked),
                      cells(rel, c, other, measure, unmasked), higher_is_better=False,
                      names=("ours", _LABELS[other]), **kw)

    def naive_trend(rel, c, unmasked=False):
        return trend_with_noise({f"ε/N={k:g}": v for k, v in
                                 cells(rel, c, NAIVE, "mae", unmasked).items()},
                                higher_is_better=False)

    def arxiv(check):
        verdict = check()
        return Verdict(verdict.status, verdict.ours, f"{_ARXIV}: {verdict.reason}",
                       verdict.chains, verdict.copies, verdict.rhat)

    claims = []
    for mask, (table_name, prefix) in _MASKS.items():
        rel = r.case_table("network", table_name)
        # the block design's C are the paper's; the rows_cols runs' those of its table
        cs = (5, 10, 20) if mask == "block" else _network_cs(r, rel, False) or (5, 10, 20)
        for c in cs:
            fig = where.get(c, "Fig. 5 (Enron network, C = {c})").format(c=c)
            if mask != "block":
                fig += f", {_MASK_TEXT[mask]}"
            name = f"icml.fig5.C{c}.{prefix}"
            if mask == "block":
                claims += [
                    Check(f"{name}mae_ours_beats_naive", fig,
                          "Reconstruction error (observed entries): ours below the naive "
                          "method at every ε/N", "no numbers printed",
                          lambda rel=rel, c=c: compare(rel, c, "mae", NAIVE), "network"),
                    Check(f"{name}mae_ours_beats_nonprivate", fig,
                          "Reconstruction error (observed entries): ours below non-private "
                          "Poisson factorization at every ε/N", "no numbers printed",
                          lambda rel=rel, c=c: compare(rel, c, "mae", NONPRIVATE), "network"),
                    Check(f"{name}mae_naive_degrades", fig,
                          "Reconstruction error of the naive method grows as privacy "
                          "increases", "no numbers printed",
                          lambda rel=rel, c=c: naive_trend(rel, c), "network"),
                ]
            held = f" ({_MASK_TEXT[mask]})"
            claims += [
                # the paper: "generally ... lower held-out error than either"; the arXiv
                # version: "the lowest error in most settings"
                Check(f"{name}heldout_ours_beats_naive", fig,
                      f"Held-out error{held}: ours below the naive method in most settings "
                      "(checked: at a majority of the ε/N)", "no numbers printed",
                      lambda rel=rel, c=c: compare(rel, c, "heldout_mae", NAIVE, most=True),
                      "network"),
                Check(f"{name}heldout_ours_beats_nonprivate", fig,
                      f"Held-out error{held}: ours below non-private Poisson factorization "
                      "in most settings (checked: at a majority of the ε/N)",
                      "no numbers printed",
                      lambda rel=rel, c=c: compare(rel, c, "heldout_mae", NONPRIVATE,
                                                   most=True),
                      "network"),
            ]
    # the reconstruction claims again on the arXiv design's runs, where they were run
    rel = r.case_table("network", _MASKS["block"][0])
    for c in _network_cs(r, rel, True):
        fig = where.get(c, "Fig. 5 (Enron network, C = {c})").format(c=c)
        claims += [
            Check(f"icml.fig5.C{c}.unmasked_mae_ours_beats_naive", fig,
                  "Reconstruction error (unmasked runs, every entry): ours below the naive "
                  "method at every ε/N", "no numbers printed",
                  lambda c=c: arxiv(lambda: compare(rel, c, "mae", NAIVE, unmasked=True)),
                  "network"),
            Check(f"icml.fig5.C{c}.unmasked_mae_ours_beats_nonprivate", fig,
                  "Reconstruction error (unmasked runs, every entry): ours below non-private "
                  "Poisson factorization at every ε/N", "no numbers printed",
                  lambda c=c: arxiv(lambda: compare(rel, c, "mae", NONPRIVATE, unmasked=True)),
                  "network"),
            Check(f"icml.fig5.C{c}.unmasked_mae_naive_degrades", fig,
                  "Reconstruction error of the naive method (unmasked runs) grows as privacy "
                  "increases", "no numbers printed",
                  lambda c=c: arxiv(lambda: naive_trend(rel, c, unmasked=True)), "network"),
        ]
    return claims


#: the VI paper's appendix E size: its printed numbers are for this matrix
_VI_PAPER_N = 1000
#: the rows of vi/benchmark.csv (study.vi_benchmark)
_PAPER_CAVI, _COLLAPSED_CAVI, _NAIVE_CAVI = "paper CAVI", "collapsed CAVI", "naive CAVI"
_PRIVATE_MCMC = "private MCMC"


def _vi(r: _Reader):
    def scores():
        return _get(r.json("vi/synthetic.json"), "scores")

    def paper_cavi(s):
        # the notebook names Schofield et al.'s CAVI after its privacy step ("bessel")
        for key in ("bessel", "bessel-mode", "paper_cavi"):
            if key in s:
                return _get(s, key, "mae")
        raise _Missing("vi/synthetic.json has no score of the paper's CAVI (bessel)")

    def demo_private_beats_naive():
        s = scores()
        verdict = better({1.0: Cell.of([paper_cavi(s)])}, {1.0: Cell.of([_get(s, NAIVE, "mae")])},
                         higher_is_better=False, names=("the paper's CAVI", "naive CAVI"))
        return Verdict(verdict.status, verdict.ours + f"; collapsed CAVI "
                       f"{_fmt(_get(s, OURS, 'mae'))}", verdict.reason, verdict.chains,
                       verdict.copies, verdict.rhat)

    def demo_mae():
        s = scores()
        verdict = near_number(paper_cavi(s), 0.507, rel_tol=0.25, better_if_lower=True)
        return Verdict(verdict.status, f"the paper's CAVI {verdict.ours}; collapsed CAVI "
                       f"{_fmt(_get(s, OURS, 'mae'))}", verdict.reason)

    def bench():
        table = r.csv("vi/benchmark.csv", ("method", "mae"))
        settings = r.params().get("vi_benchmark")
        return table, settings.get("n") if isinstance(settings, dict) else None

    def mae(method):
        table, _ = bench()
        rows = table[table.method == method]
        if rows.empty:
            raise _Missing(f"vi/benchmark.csv has no {method!r} row")
        return Cell.of(rows["mae"].to_numpy(float))

    def paper_size_only(check):
        _, n = bench()
        if n is not None and int(n) != _VI_PAPER_N:
            raise _Missing(f"the benchmark ran on {n} x {n} (vi_benchmark.n); the paper's "
                           f"number is for {_VI_PAPER_N:,} x {_VI_PAPER_N:,}")
        return check()

    def mcmc_beats_vi():
        verdict = better({1.0: mae(_PRIVATE_MCMC)}, {1.0: mae(_PAPER_CAVI)},
                         higher_is_better=False, names=("MCMC", "the paper's CAVI"))
        return Verdict(verdict.status, verdict.ours + f"; collapsed CAVI "
                       f"{_fmt(mae(_COLLAPSED_CAVI).mean)}", verdict.reason, verdict.chains,
                       verdict.copies, verdict.rhat)

    fig = "appendix E, Fig. 1 (20 x 20 synthetic, K = 3, ε/N = 1)"
    large = "appendix E (1,000 x 1,000 synthetic, ε/N = 1)"
    return [
        Check("vi.appE_fig1.private_beats_naive", fig,
              "Private VI (the paper's CAVI) recovers the true parameters better than VI that "
              "ignores the noise", "no naive number printed", demo_private_beats_naive),
        Check("vi.appE_fig1.mae", fig,
              "The paper's CAVI reaches an MAE to the true parameters of about 0.507 on the "
              "20 x 20 demo (checked on Schofield et al.'s CAVI: at most 0.507, or within "
              "25%; the collapsed CAVI shown beside it)", "0.507", demo_mae),
        Check("vi.appE.vi_mae", large,
              "The paper's VI reaches an MAE of 0.52 (checked: the same algorithm, ours at "
              "most 0.52 or within 10%)", "0.52",
              lambda: paper_size_only(lambda: near_number(
                  None, 0.52, rel_tol=0.10, better_if_lower=True, cell=mae(_PAPER_CAVI)))),
        Check("vi.appE.mcmc_mae", large,
              "MCMC (5,000 + 2,500 iterations) reaches an MAE of 0.36 (checked: ours at most "
              "0.36 or within 10%)", "0.36",
              lambda: paper_size_only(lambda: near_number(
                  None, 0.36, rel_tol=0.10, better_if_lower=True, cell=mae(_PRIVATE_MCMC)))),
        Check("vi.appE.mcmc_beats_vi", large,
              "MCMC is more accurate than VI (VI trades accuracy for time)",
              "MCMC 0.36 vs VI 0.52", mcmc_beats_vi),
        Check("vi.appE.private_beats_naive", large,
              "Private VI (the paper's CAVI) beats VI that ignores the noise on the larger "
              "matrix", "no naive number printed",
              lambda: better({1.0: mae(_PAPER_CAVI)}, {1.0: mae(_NAIVE_CAVI)},
                             higher_is_better=False, names=("the paper's CAVI",
                                                            "naive CAVI"))),
    ]


def _vi_speed(r: _Reader):
    """Appendix E's "about 100 iterations" and "20 times faster", on the vi_benchmark stage's
    table (``vi/benchmark.csv``): the paper's CAVI against the private MCMC."""
    #: the paper's MCMC schedule (5,000 burn-in + 2,500 kept sweeps)
    paper_sweeps = 7500

    def rows():
        # like the appendix's other numbers, these are for the paper's 1,000 x 1,000 matrix
        settings = r.params().get("vi_benchmark")
        n = settings.get("n") if isinstance(settings, dict) else None
        if n is not None and int(n) != _VI_PAPER_N:
            raise _Missing(f"the benchmark ran on {n} x {n} (vi_benchmark.n); the paper's "
                           f"number is for {_VI_PAPER_N:,} x {_VI_PAPER_N:,}")
        t = r.csv("vi/benchmark.csv",
                  ("method", "iterations", "seconds_per_iteration", "seconds", "converged"))
        found = {m: t[t.method == m] for m in (_PAPER_CAVI, _PRIVATE_MCMC)}
        lacking = [m for m, rows in found.items() if rows.empty]
        if lacking:
            raise _Missing(f"vi/benchmark.csv has no {', '.join(lacking)} row")
        return {m: rows.iloc[0] for m, rows in found.items()}

    def iterations():
        vi = rows()[_PAPER_CAVI]
        verdict = near_number(float(vi.iterations), 100.0, rel_tol=1.0, better_if_lower=True)
        converged = str(vi.converged).lower() == "true"
        ours = f"{int(vi.iterations)} iterations ({'converged' if converged else 'not converged'})"
        if not converged:
            return Verdict(NOT_REPRODUCED, ours, "the paper's CAVI hit its iteration cap")
        return Verdict(verdict.status, ours, verdict.reason)

    def speed_up():
        found = rows()
        vi, mcmc = found[_PAPER_CAVI], found[_PRIVATE_MCMC]
        as_run = float(mcmc.seconds) / float(vi.seconds)
        # the MCMC's wall time at the paper's schedule, from its own seconds per sweep
        projected = float(mcmc.seconds_per_iteration) * paper_sweeps / float(vi.seconds)
        full = int(mcmc.iterations) >= paper_sweeps
        ratio = as_run if full else projected
        verdict = near_number(ratio, 20.0, rel_tol=0.5, better_if_lower=False)
        ours = (f"{_fmt(as_run)}x as run ({int(mcmc.iterations)} MCMC sweeps); "
                f"{_fmt(projected)}x at the paper's {paper_sweeps:,} sweeps")
        basis = "as run" if full else f"projected to {paper_sweeps:,} MCMC sweeps"
        return Verdict(verdict.status, ours, f"{basis}: {verdict.reason}")

    fig = "appendix E (MCMC against CAVI; the vi_benchmark stage)"
    return [
        Check("vi.appE.iterations", fig,
              "The paper's CAVI typically needs about 100 iterations to converge (checked: at "
              "most 200, a factor of 2)", "about 100", iterations),
        Check("vi.appE.speed_up", fig,
              "The paper's CAVI reaches its estimates about 20 times faster than MCMC with "
              "5,000 + 2,500 iterations (checked: at least 10x, wall time of the whole fit)",
              "20x", speed_up),
    ]


def _foulds(r: _Reader):
    def crossing():
        check = _get(r.json("central/beta_bernoulli.json"), "figure2", "check")
        ours = f"Laplace overtakes OPS at N = {_get(check, 'crossing_n')}"
        return flag(_get(check, "holds"), ours,
                    holds="OPS better only at the smallest N, Laplace better from the crossing on",
                    fails="the crossing check failed (see central_beta_bernoulli)")

    def are():
        estimators = _get(r.json("central/beta_bernoulli.json"), "are", "estimators")
        parts, off = [], []
        for name, e in estimators.items():
            measured, theory, se = _get(e, "measured"), _get(e, "theory"), _get(e, "se")
            parts.append(f"{name} {_fmt(measured)} (theory {_fmt(theory)})")
            if abs(measured - theory) > 3 * se:
                off.append(name)
        ours = "; ".join(parts)
        if not off:
            return Verdict(PASS, ours, "every measured ARE within 3 standard errors of theory")
        return Verdict(FAIL, ours, f"more than 3 se from theory: {', '.join(off)}")

    def laplace_beats_ops(model, datasets):
        t = r.csv("central/heldout_loglik.csv",
                  ("dataset", "model", "route", "epsilon", "loglik_per_record"))
        t = t[(t.model == model) & t.dataset.isin(datasets) & t.epsilon.notna()]
        if t.empty:
            raise _Missing(f"no {model} rows for {', '.join(datasets)}")
        # the splits are the copies of a cell; against Laplace, the better OPS truncation
        # (by its mean) at each data set and epsilon
        t = t.assign(level=t.dataset + " ε=" + t.epsilon.map(lambda e: f"{e:g}"))
        if "split" in t:
            t = t.assign(fit=t["split"])
        mine, theirs = {}, {}
        for level, group in t.groupby("level", sort=False):
            laplace = _rows_cell(group[group.route == "laplace"], "loglik_per_record")
            ops = [_rows_cell(g, "loglik_per_record") for route, g in group.groupby("route")
                   if str(route).startswith("ops")]
            ops = [c for c in ops if c is not None]
            if laplace is None or not ops:
                continue
            mine[level], theirs[level] = laplace, max(ops, key=lambda c: c.mean)
        if not mine:
            raise _Missing(f"no Laplace and OPS rows for {model}")
        return better(mine, theirs, higher_is_better=True,
                      names=("Laplace", "best OPS"), level="setting")

    def occupancy():
        # the paper's count is of the war logs, which we cannot ship: the synthetic stand-ins'
        # regime count is their generator's (lpp.central.simulate.REGIME_RANGE) and Enron is
        # another data set, so the numbers are shown, never judged
        datasets = _get(r.json("central/occupancy.json"), "datasets")
        parts = []
        for name, d in datasets.items():
            private, nonprivate = _get(d, "laplace", "n_used"), _get(d, "nonprivate", "n_used")
            true = d.get("true_regimes") if isinstance(d, dict) else None
            parts.append(f"{name}: Laplace {private}, non-private {nonprivate}"
                         + (f" (true regimes {true})" if true else ""))
        ours = "; ".join(parts) + " states used (of 10)"
        return Verdict(NOT_RUN, ours, "untestable here: the claim is about the war logs, which "
                       "carry no licence that lets us ship them; the synthetic stand-ins' "
                       "state count is their generator's (drawn from 4-8 regimes) and Enron is "
                       "another data set (numbers shown for information)")

    return [
        Check("foulds.fig2.laplace_overtakes_ops", "Fig. 2 (beta-Bernoulli, p = 0.1, ε = 0.1)",
              "OPS beats Laplace-mechanism sampling only for very few observations; Laplace "
              "overtakes it quickly", "crossing at about N = 10", crossing),
        Check("foulds.sec3.are", "§3 (asymptotic relative efficiency)",
              "Posterior and Laplace sampling have ARE 2, their means 1, OPS sampling 1 + T",
              "2, 1, 1 + T (T = 2.77 at ε = 1, a0 = 0.2)", are),
        Check("foulds.fig6.naive_bayes", "Fig. 6 left (naive Bayes, held-out log-likelihood; "
              "on a synthetic Afghanistan-shaped stand-in)",
              "Laplace beats OPS for the naive Bayes model (a high-data regime)",
              "no numbers printed",
              lambda: laplace_beats_ops("naive_bayes", ["synthetic_afghanistan", "afghanistan"])),
        Check("foulds.fig6.iraq_hmm", "Fig. 6 right (Iraq HMM, held-out log-likelihood; on a "
              "synthetic Iraq-shaped stand-in)",
              "On Iraq, with more data per step, Laplace outperforms OPS, particularly at high "
              "privacy", "no numbers printed",
              lambda: laplace_beats_ops("hmm", ["synthetic_iraq", "iraq"])),
        Check("foulds.sec5.occupancy", "§5 (10-state HMM, ε = 5)",
              "A private 10-state HMM uses only 2-3 states where a non-private one uses all 10",
              "2-3 of 10 states", occupancy),
    ]


def _foulds_more(r: _Reader):
    """Foulds et al.'s Fig. 1, the OPS run-time remark, and the war-log figures (3-5, 7) that
    have no counterpart."""
    def fig1():
        f1 = _get(r.json("central/beta_bernoulli.json"), "figure1")
        t, a0 = float(_get(f1, "temperature")), float(_get(f1, "a0"))
        lo, hi = _get(f1, "ops_support")
        peak, ops_peak = float(_get(f1, "posterior_peak")), float(_get(f1, "ops_peak"))
        ours = (f"T = {_fmt(t)}; peak density: posterior {_fmt(peak)}, OPS {_fmt(ops_peak)}; "
                f"OPS support [{lo:g}, {hi:g}]")
        near = abs(t - 2.7) / 2.7 <= 0.05
        flatter = ops_peak < peak
        # the density grid's step is 0.001: the support's ends within a step of a0, 1 - a0
        truncated = lo >= a0 - 1e-3 and hi <= 1 - a0 + 1e-3
        if near and flatter and truncated:
            return Verdict(PASS, ours, "T within 5% of the paper's 2.7; OPS flatter than the "
                           "posterior and truncated at a0")
        return Verdict(FAIL, ours, "T more than 5% from 2.7, or OPS not flatter / not truncated")

    def runtime():
        results = _get(r.json("central/runtime.json"), "results")
        parts, off = [], []
        for kind, run in results.items():
            ops = float(_get(run, "relative", "ops"))
            laplace = float(_get(run, "relative", "laplace"))
            parts.append(f"{_get(run, 'data')}: OPS {ops:.2f}x, Laplace {laplace:.2f}x")
            if not (1.5 <= ops <= 3.0 and laplace < 1.5):
                off.append(kind)
        ours = "; ".join(parts) + " the non-private fit's time"
        if not off:
            return Verdict(PASS, ours, "OPS between 1.5x and 3x, Laplace below 1.5x on every "
                           "data set")
        return Verdict(NOT_REPRODUCED, ours, f"outside those bounds on {', '.join(off)} "
                       "(our samplers, not the paper's)")

    def war_logs_only(what):
        return Verdict(NOT_RUN, "n/a", f"no counterpart: {what} of the real war logs; the "
                       "logs (classified documents released by WikiLeaks) carry no licence "
                       "that lets this repository ship them, and the synthetic stand-ins' "
                       "states are their generator's, so a picture of them would show nothing "
                       "about the paper's data")

    return [
        Check("foulds.fig1.ops_flat_truncated",
              "Fig. 1 (beta-Bernoulli, N = 20, ε = 1, a0 = 0.2)",
              "OPS flattens the posterior by the temperature T = 2.7 and truncates it at a0; "
              "Laplace-privatized posteriors scatter around the true one (checked: T within "
              "5%, OPS peak below the posterior's, OPS support inside [a0, 1 − a0])", "T = 2.7",
              fig1),
        Check("foulds.sec5.ops_runtime", "§5 (HMM run time)",
              "Laplace did not greatly affect the run time, while OPS roughly doubled it "
              "(checked: one 10-state HMM fit, OPS 1.5x-3x and Laplace under 1.5x the "
              "non-private time)", "OPS about 2x", runtime),
        Check("foulds.fig3_5.iraq_states", "Fig. 3, 4 and 5 (Iraq HMM states, Laplace, ε = 5)",
              "The 2-state private HMM on Iraq finds a poor-outcome state (explosive hazard, "
              "IED, civilian casualties) prevalent until the 2007 troop surge and a good-outcome "
              "state after it", "state plots (no numbers)",
              lambda: war_logs_only("state assignments and emission profiles")),
        Check("foulds.fig7.afghanistan_ops_states", "Fig. 7 (Afghanistan OPS HMM states, ε = 5)",
              "OPS state assignments on Afghanistan, estimated from the last 100 samples and "
              "from the last sample alone (the one OPS may release)", "state plots (no numbers)",
              lambda: war_logs_only("OPS state assignments")),
    ]


#: the groups of claims, in the report's order: (paper, function of a reader -> checks)
GROUPS = ((ICML, _icml_fig1), (ICML, _icml_fig3), (ICML, _icml_fig4), (ICML, _icml_fig5),
          (ICML, _icml_appendix_fig2), (VI, _vi), (VI, _vi_speed), (FOULDS, _foulds),
          (FOULDS, _foulds_more))


@dataclass(frozen=True)
class Claim:
    """One checked claim: where it is made, what it says, our and the paper's numbers, the
    files it read and the support behind the verdict (chains, copies, worst R-hat).

    ``judged`` is False for a case study run on other data (``dataset``) than the paper's:
    the comparison is then a pattern of that data, reported without its status or the
    paper's numbers and left out of the summary.
    """

    id: str
    source: str
    statement: str
    status: str
    ours: str
    paper: str
    reason: str
    reads: tuple = ()
    chains: int | None = None
    copies: int | None = None
    rhat: float | None = None
    dataset: str | None = None
    judged: bool = True


def check_claims(results_root) -> list[Claim]:
    """Check every claim against the tables under ``results_root``.

    Parameters
    ----------
    results_root : path-like
        A results folder with the pipeline's layout (module docstring), e.g. ``results`` or
        ``results/paper``. Tables that are absent give ``NOT-RUN`` claims.

    Returns
    -------
    list of Claim
        In a fixed order: ICML Figs 1, 3, 4, 5 (and appendix Fig. 1), VI, Foulds et al.
    """
    root = Path(results_root)
    settings = _Reader(root)
    params = settings.params()
    claims = []
    for source, group in GROUPS:
        reader = _Reader(root)
        for check in group(reader):
            reader.read = []
            verdict = _run(check.run)
            dataset = dataset_of(params, check.case) if check.case else None
            reads = list(reader.read)
            if check.case and settings.read and settings.read[0] not in reads:
                reads += settings.read   # where the case study's data set was read
            claims.append(Claim(
                id=check.id, source=f"{source}, {check.where}", statement=check.statement,
                status=verdict.status, ours=verdict.ours, paper=check.paper,
                reason=verdict.reason, reads=tuple(reads), chains=verdict.chains,
                copies=verdict.copies, rhat=verdict.rhat, dataset=dataset,
                judged=dataset in (None, PAPER_DATASET)))
    return claims


def _summary(claims) -> dict:
    judged = [c for c in claims if c.judged]
    return {status: sum(c.status == status for c in judged) for status in STATUSES}


def _support(c: Claim) -> tuple[str, str]:
    support = "n/a" if c.chains is None else f"{c.chains} × {c.copies}"
    rhat = "n/a" if c.rhat is None else f"{c.rhat:.3g}"
    return support, rhat


def _cells_row(cells) -> str:
    return "| " + " | ".join(str(x).replace("|", "/") for x in cells) + " |"


def claims_markdown(claims, *, results_root: str = "results") -> str:
    """The claims as a Markdown report: a summary line and one table row per claim; the
    comparisons of a case study on other data than the paper's in a pattern table."""
    judged = [c for c in claims if c.judged]
    pattern = [c for c in claims if not c.judged]
    summary = ", ".join(f"{n} {s}" for s, n in _summary(claims).items())
    lines = [
        "# The papers' claims, checked against our results",
        "",
        f"Generated by `python -m study.claims --results {results_root}` from the tables under "
        f"`{results_root}/` (do not edit by hand). {len(judged)} claims: {summary}.",
        "",
        "PASS: holds in our results beyond the spread. FAIL: our results contradict it "
        "beyond the spread. UNSETTLED: the fits' own chains disagree about it. "
        "NOT-REPRODUCED: neither confirmed nor contradicted (a difference within the "
        "spread, one value per cell so no spread to judge by, or a printed number missed by "
        "more than the stated tolerance). NOT-RUN: the table it needs is absent. The spread "
        "is the standard deviation over every chain of every privatized copy of the compared "
        "cells; *chains × copies* is the fewest behind any compared cell, *R-hat* the worst "
        "of the fits (n/a: one chain, or not recorded). Machine-readable twin: `claims.json`.",
        "",
        "| status | claim | where | ours | paper | chains × copies | R-hat | why | read |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in judged:
        support, rhat = _support(c)
        lines.append(_cells_row([f"**{c.status}**", c.statement, c.source, c.ours, c.paper,
                                 support, rhat, c.reason, ", ".join(f"`{p}`" for p in c.reads)]))
    if pattern:
        datasets = sorted({c.dataset for c in pattern})
        lines += [
            "",
            "## Patterns on other data (no verdicts)",
            "",
            f"These case studies ran on {', '.join(f'`{d}`' for d in datasets)}, not on the "
            "papers' Enron data, so the papers' claims are not judged on them: the same "
            "comparisons are shown as patterns of this data, without the papers' numbers.",
            "",
            "| comparison | data | ours | chains × copies | R-hat | outcome | read |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in pattern:
            support, rhat = _support(c)
            lines.append(_cells_row([c.statement, c.dataset, c.ours, support, rhat, c.reason,
                                     ", ".join(f"`{p}`" for p in c.reads)]))
    return "\n".join(lines) + "\n"


def _payload(claims, root: str) -> dict:
    def record(c, judged):
        d = asdict(c)
        d["reads"] = list(c.reads)
        if not judged:
            for key in ("status", "paper", "judged"):
                d.pop(key)
        return d

    return {"results": root, "summary": _summary(claims),
            "claims": [record(c, True) for c in claims if c.judged],
            "pattern": [record(c, False) for c in claims if not c.judged]}


def write_claims(results_root, out_dir) -> tuple[Path, Path]:
    """Check the claims under ``results_root``; write ``claims.md`` and ``claims.json``.

    Parameters
    ----------
    results_root : path-like
        The results folder to read (see :func:`check_claims`).
    out_dir : path-like
        Where to write the two files (created if needed), atomically.

    Returns
    -------
    tuple of pathlib.Path
        The Markdown and JSON paths.
    """
    return _write(check_claims(results_root), results_root, out_dir)


def _write(claims, results_root, out_dir) -> tuple[Path, Path]:
    out = Path(out_dir)
    root = Path(results_root).as_posix()
    md, js = out / "claims.md", out / "claims.json"
    atomic_write_bytes(md, claims_markdown(claims, results_root=root).encode())
    atomic_write_bytes(js, json_bytes(_payload(claims, root)))
    return md, js


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m study.claims",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--results", default="results", help="the results folder to read "
                        "(results, or results/paper for the paper-scale tables)")
    parser.add_argument("--out", default=None, help="where to write claims.md/json "
                        "(default: the results folder)")
    args = parser.parse_args(argv)
    claims = check_claims(args.results)
    md, js = _write(claims, args.results, args.out or args.results)
    counts = _summary(claims)
    print(f"wrote {md} and {js}: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
