"""The verdict rules: statuses, cells of chains x copies, paired comparisons, and the kinds
of check (:func:`better`, :func:`not_better`, :func:`trend_with_noise`, :func:`almost_same`,
:func:`near_number`, :func:`flag`) that judge them. See :mod:`study.claims`."""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

PASS, FAIL, UNSETTLED = "PASS", "FAIL", "UNSETTLED"
NOT_REPRODUCED, NOT_RUN = "NOT-REPRODUCED", "NOT-RUN"
STATUSES = (PASS, FAIL, UNSETTLED, NOT_REPRODUCED, NOT_RUN)

#: "almost the same": our gap to the reference, spread included, is at most this share of
#: the gap the other method opens, spread excluded (an order of magnitude smaller)
ALMOST_SAME = 0.1
#: ... and it is contradicted where our gap, spread excluded, is at least this share of the
#: other method's, spread included (ours is then off the reference in the way the other is)
AS_FAR_AS = 0.5

#: the case studies' data set when the params file names none: the papers' own
PAPER_DATASET = "enron"
#: the settings the checks read from the params file next to the results (the claims stage
#: declares them, or their sections, in dvc.yaml)
PARAMS_READ = ("profile", "prepare_topics.dataset", "prepare_network.dataset", "vi_benchmark.n")

OURS, NAIVE, NONPRIVATE = "collapsed", "naive", "nonprivate"
#: how the methods are named in the report
#: how the tables and the pages name the methods of the score tables
METHOD_LABELS = {OURS: "ours", NAIVE: "naive", NONPRIVATE: "non-private"}
ICML = "Schein et al. (ICML 2019)"
VI = "Schofield et al. (VI)"
FOULDS = "Foulds et al. (2016)"


class _Missing(Exception):
    """A table the checks need is absent or lacks something: NOT-RUN, not a crash."""


# ---------------------------------------------------------------- cells

@dataclass(frozen=True)
class Cell:
    """The values of one measure for one method at one setting: one per chain of each fit.

    ``fits[i]`` names the fit that ``values[i]`` is a chain of. Where ``unit`` is set
    (``"copy"``, ``"split"``, ``"seed"``), the fit names are the design units the fits ran on,
    shared by construction with other methods' fits on the same unit, and comparisons with a
    cell of the same units are paired; without it the names are the cell's own. ``rhat`` is
    the worst R-hat of the fits (NaN: unknown).
    """

    values: tuple
    fits: tuple
    unit: str | None = None
    rhat: float = math.nan

    @classmethod
    def of(cls, values, fits=None, *, unit=None, rhat=math.nan) -> Cell:
        """A cell from plain values (``fits`` None: each value a fit of one chain).

        Raises
        ------
        ValueError
            ``fits`` does not name one fit per value.
        """
        values = tuple(float(v) for v in np.ravel(values))
        fits = tuple(range(len(values))) if fits is None else tuple(fits)
        if len(fits) != len(values):
            raise ValueError(f"{len(values)} values but {len(fits)} fit names")
        return cls(values, fits, unit, float(rhat))

    @property
    def copies(self) -> int:
        """How many fits (privatized copies, splits, seeds) the values come from."""
        return len(set(self.fits))

    @property
    def n_chains(self) -> int:
        """The fewest chains of any fit in the cell."""
        return min(Counter(self.fits).values()) if self.values else 0

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    @property
    def sd(self) -> float:
        """Standard deviation over every chain and copy (NaN for a single value)."""
        return float(np.std(self.values, ddof=1)) if len(self.values) > 1 else math.nan

    def by_fit(self) -> dict:
        """Each fit's chain values, in the order of first appearance."""
        chains = {}
        for fit, value in zip(self.fits, self.values):
            chains.setdefault(fit, []).append(value)
        return {fit: tuple(v) for fit, v in chains.items()}


def _chain_variance(chains) -> float | None:
    """The chains' variance within one fit; None for a fit of one chain."""
    return float(np.var(chains, ddof=1)) if len(chains) > 1 else None


# ---------------------------------------------------------------- comparing two cells

@dataclass(frozen=True)
class Difference:
    """``a - b`` for two cells, paired by their shared unit where they have one.

    ``mean`` is the mean difference (paired: over the units), ``spread`` its spread (NaN:
    unknown), ``paired`` the unit it was paired by (None: unpaired), ``unit_differences`` the
    per-unit differences (paired only) and ``chain_differences`` one tuple per fit of several
    chains, of either cell: each chain's own difference to the other side's value.
    """

    mean: float
    spread: float
    paired: str | None = None
    unit_differences: tuple = ()
    chain_differences: tuple = ()

    def beyond(self, sign: float = 1.0) -> str:
        """``"above"``/``"below"`` where ``sign * (a - b)`` exceeds the spread either way,
        ``"within"`` where it does not, ``"unknown"`` where no spread is known."""
        if not np.isfinite(self.spread):
            return "unknown"
        value = sign * self.mean
        return "above" if value > self.spread else "below" if value < -self.spread else "within"

    def chains_disagree(self, holds) -> bool:
        """Whether the chains of one fit disagree about ``holds(difference)``."""
        return any(len({bool(holds(d)) for d in chains}) > 1
                   for chains in self.chain_differences)

    def describe(self, sign: float, difference: str, ahead: str) -> str:
        """The paired difference in words ('' when unpaired): ``difference`` names it,
        ``ahead`` the units where ``sign`` times it is positive."""
        if not self.paired:
            return ""
        count = sum(sign * d > 0 for d in self.unit_differences)
        n = len(self.unit_differences)
        spread = f" ± {_fmt(self.spread)}" if np.isfinite(self.spread) else ""
        return (f" (paired by {self.paired}: {difference} {_fmt(self.mean)}{spread}; {ahead} "
                f"in {count} of {n})")


def _shared_units(a: Cell, b: Cell) -> list | None:
    """The units two cells are paired by; None when they share none.

    Raises
    ------
    ValueError
        The cells name units of the same kind and share some but not all of them: a table
        with a fit missing on one side.
    """
    if a.unit is None or a.unit != b.unit:
        return None
    mine, theirs = a.by_fit(), b.by_fit()
    shared = [u for u in mine if u in theirs]
    if not shared:
        return None   # e.g. two privacy levels: each has copies of its own
    if len(shared) != len(mine) or len(shared) != len(theirs):
        lone = sorted(map(str, set(mine).symmetric_difference(theirs)))
        raise ValueError(f"the compared cells share some {a.unit}s but not {', '.join(lone)}")
    return shared


def compare(a: Cell, b: Cell) -> Difference:
    """``a - b``: paired by the design unit the two cells share, else unpaired.

    Parameters
    ----------
    a, b : Cell

    Returns
    -------
    Difference
        Paired: the mean of the per-unit differences of the cells' means, with the standard
        deviation of those differences over the units plus the mean within-unit variance of
        each cell's chains as spread. Unpaired: the difference of the means with the square
        root of the summed variances over every chain and copy (NaN where neither cell has
        two values). Every fit of several chains adds its chains' own differences to the
        other side's value (on the same unit when paired).
    """
    shared = _shared_units(a, b)
    mine, theirs = a.by_fit(), b.by_fit()
    if shared is None:
        known = [c.sd ** 2 for c in (a, b) if np.isfinite(c.sd)]
        spread = float(np.sqrt(sum(known))) if known else math.nan
        chains = [tuple(v - b.mean for v in c) for c in mine.values() if len(c) > 1]
        chains += [tuple(a.mean - v for v in c) for c in theirs.values() if len(c) > 1]
        return Difference(a.mean - b.mean, spread, chain_differences=tuple(chains))
    at_a = {u: float(np.mean(mine[u])) for u in shared}
    at_b = {u: float(np.mean(theirs[u])) for u in shared}
    per_unit = tuple(at_a[u] - at_b[u] for u in shared)
    variance = [float(np.var(per_unit, ddof=1))] if len(per_unit) > 1 else []
    for side in (mine, theirs):
        within = [v for v in (_chain_variance(side[u]) for u in shared) if v is not None]
        if within:
            variance.append(float(np.mean(within)))
    spread = float(np.sqrt(sum(variance))) if variance else math.nan
    chains = [tuple(v - at_b[u] for v in mine[u]) for u in shared if len(mine[u]) > 1]
    chains += [tuple(at_a[u] - v for v in theirs[u]) for u in shared if len(theirs[u]) > 1]
    return Difference(float(np.mean(per_unit)), spread, a.unit, per_unit, tuple(chains))


# ---------------------------------------------------------------- verdicts

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


def _all_of(*verdicts: Verdict, ours: str | None = None) -> Verdict:
    """Verdicts that must all hold, as one: FAIL if any fails, PASS if all pass, otherwise
    NOT-RUN, UNSETTLED or NOT-REPRODUCED (the first that any of them has); reasons joined."""
    statuses = [v.status for v in verdicts]
    for status in (FAIL, NOT_RUN, UNSETTLED, NOT_REPRODUCED, PASS):
        if status in statuses:
            break
    known = [v for v in verdicts if v.chains is not None]
    rhats = [v.rhat for v in known if v.rhat is not None]
    return Verdict(status, verdicts[0].ours if ours is None else ours,
                   "; ".join(v.reason for v in verdicts),
                   min((v.chains for v in known), default=None),
                   min((v.copies for v in known), default=None), max(rhats, default=None))


def _fmt(value) -> str:
    """Three significant digits: the tables repeat to the byte across machines."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{float(value):.3g}"


def _fmt_cell(cell: Cell) -> str:
    return _fmt(cell.mean) + (f" ± {_fmt(cell.sd)}" if np.isfinite(cell.sd) else "")


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


def _side_by_side(pairs, diffs, sign, names, level) -> str:
    return "; ".join(f"{_label(k, level)}: {names[0]} {_fmt_cell(a)}, {names[1]} "
                     f"{_fmt_cell(b)}"
                     f"{diffs[k].describe(sign, f'{names[0]} − {names[1]}', f'{names[0]} ahead')}"
                     for k, (a, b) in pairs.items())


#: how many levels of ``n`` a claim needs, by its quantifier
_QUANTIFIERS = {"every": lambda n: n, "most": lambda n: n // 2 + 1, "somewhere": lambda n: 1}


def _quantifier_text(need: str, n: int) -> str:
    """The levels a claim needs, in words: ``all 3 levels``, ``at least 2 of 3 levels``."""
    if need == "every":
        return f"all {n} levels"
    if need == "most":
        return f"at least {_QUANTIFIERS['most'](n)} of {n} levels"
    return f"one or more of {n} levels, and worse at none"


# ---------------------------------------------------------------- the kinds of check

def better(mine: dict, theirs: dict, *, higher_is_better: bool, need: str = "every",
           names=("ours", "the other"), level: str = "ε/N") -> Verdict:
    """``mine`` beats ``theirs`` at the levels ``need`` asks for.

    Parameters
    ----------
    mine, theirs : dict of Cell
        Cells keyed by level (``theirs`` may hold one cell keyed None: a reference that
        faces every level). Cells of the same units are compared paired (:func:`compare`).
    higher_is_better : bool
        The direction of the measure.
    need : {"every", "most", "somewhere"}
        ``"every"``: at every level; ``"most"``: at a majority (the papers' "generally", "in
        most settings"); ``"somewhere"``: at some level and worse at none (the papers'
        "superior" over a range where the methods meet at its low-privacy end).
    names : (str, str)
        How the two sides are named in the verdict.
    level : str
        The name of the level in the verdict's text.

    Returns
    -------
    Verdict
        PASS where enough levels are better beyond the spread; FAIL where levels worse
        beyond it rule the claim out; UNSETTLED where it is undecided and, at a level within
        the spread, one fit's chains disagree about the ordering; otherwise NOT-REPRODUCED.
    """
    if need not in _QUANTIFIERS:
        raise ValueError(f"need must be one of {', '.join(_QUANTIFIERS)}, not {need!r}")
    if not mine or not theirs:
        return Verdict(NOT_RUN, "n/a", f"no values for {names[0] if not mine else names[1]}")
    pairs = _pairs(mine, theirs)
    sign = 1.0 if higher_is_better else -1.0
    diffs = {k: compare(a, b) for k, (a, b) in pairs.items()}
    outcome = {k: d.beyond(sign) for k, d in diffs.items()}
    wins = [k for k, o in outcome.items() if o == "above"]
    losses = [k for k, o in outcome.items() if o == "below"]
    n, required = len(pairs), _QUANTIFIERS[need](len(pairs))
    ours = _side_by_side(pairs, diffs, sign, names, level)
    cells = [c for ab in pairs.values() for c in ab]
    passes = len(wins) >= required and not (need == "somewhere" and losses)
    fails = bool(losses) if need in ("every", "somewhere") else n - len(losses) < required
    if passes:
        nowhere = ", worse at none" if need == "somewhere" else ""
        return _verdict(PASS, ours, f"{names[0]} better beyond the spread at {len(wins)} of "
                        f"{n} levels{nowhere}", cells)
    if fails:
        return _verdict(FAIL, ours, f"{names[0]} worse than {names[1]} beyond the spread at "
                        f"{_keys(losses, level)}", cells)
    quantifier = _quantifier_text(need, n)
    split = [k for k, o in outcome.items()
             if o == "within" and diffs[k].chains_disagree(lambda d: sign * d > 0)]
    if split:
        return _verdict(UNSETTLED, ours, f"undecided ({names[0]} better beyond the spread at "
                        f"{len(wins)}, needs {quantifier}); inside the spread at "
                        f"{_keys(split, level)}, where one fit's chains disagree about the "
                        "ordering", cells)
    if "unknown" in outcome.values():
        point = sum(sign * d.mean > 0 for d in diffs.values())
        return _verdict(NOT_REPRODUCED, ours, f"one value per cell (one chain of one copy): "
                        f"no spread to judge by; by the point values {names[0]} is better at "
                        f"{point} of {n} levels", cells)
    return _verdict(NOT_REPRODUCED, ours, f"{names[0]} better beyond the spread at "
                    f"{len(wins)} of {n} levels, worse beyond it at {len(losses)} (needs "
                    f"{quantifier})", cells)


def not_better(mine: dict, theirs: dict, *, higher_is_better: bool, need: str = "every",
               names=("ours", "the other"), level: str = "ε/N") -> Verdict:
    """``mine`` does not beat ``theirs`` at the levels ``need`` asks for.

    ``need`` is ``"every"`` (at no level better) or ``"most"`` (not better at a majority of
    the levels: the papers' "competitive with"). A level holds where ``mine`` is worse or
    within the spread (with no spread known: worse by the point value); a level within the
    spread where one fit's chains disagree about the ordering is undecided. FAIL where too
    many levels are better beyond the spread for the claim to hold; PASS where enough levels
    hold; UNSETTLED where undecided levels leave it open; otherwise NOT-REPRODUCED.
    """
    if need not in ("every", "most"):
        raise ValueError(f"need must be 'every' or 'most', not {need!r}")
    if not mine or not theirs:
        return Verdict(NOT_RUN, "n/a", f"no values for {names[0] if not mine else names[1]}")
    pairs = _pairs(mine, theirs)
    sign = 1.0 if higher_is_better else -1.0
    diffs = {k: compare(a, b) for k, (a, b) in pairs.items()}
    above, holds, split, undecided = [], [], [], []
    for k, d in diffs.items():
        outcome = d.beyond(sign)
        if outcome == "above":
            above.append(k)
        elif outcome == "within" and d.chains_disagree(lambda x: sign * x > 0):
            split.append(k)
        elif outcome == "unknown" and sign * d.mean > 0:
            undecided.append(k)
        else:
            holds.append(k)
    n, required = len(pairs), _QUANTIFIERS[need](len(pairs))
    ours = _side_by_side(pairs, diffs, sign, names, level)
    cells = [c for ab in pairs.values() for c in ab]
    if n - len(above) < required:
        return _verdict(FAIL, ours, f"{names[0]} above {names[1]} beyond the spread at "
                        f"{_keys(above, level)}", cells)
    if len(holds) >= required:
        where = "nowhere" if not above else f"at {len(holds)} of {n} levels not"
        return _verdict(PASS, ours, f"{names[0]} {where} above {names[1]} beyond the spread "
                        f"({n} levels)", cells)
    if split:
        return _verdict(UNSETTLED, ours, f"{names[0]} inside the spread of {names[1]} at "
                        f"{_keys(split, level)}, where one fit's chains disagree about the "
                        "ordering", cells)
    return _verdict(NOT_REPRODUCED, ours, f"{names[0]} above {names[1]} at "
                    f"{_keys(undecided, level)}, one value per cell: no spread to judge by",
                    cells)


def trend_with_noise(cells: dict, *, worsens: bool = True, higher_is_better: bool) -> Verdict:
    """The score gets worse (``worsens``) as the noise grows, each step judged by its spread.

    ``cells`` maps a noise level's label, ordered from least to most noise, to its
    :class:`Cell` (cells of the same units, such as seeds, are compared paired). PASS where
    the change from the least to the most noise goes the claimed way beyond its spread and no
    step goes against it beyond its own; FAIL where a step or the whole change goes against it
    beyond the spread; UNSETTLED where the whole change lies inside its spread and one fit's
    chains disagree about its direction; otherwise NOT-REPRODUCED.
    """
    items = [(k, c) for k, c in cells.items() if c is not None and np.isfinite(c.mean)]
    if len(items) < 2:
        return Verdict(NOT_RUN, "n/a", "fewer than two noise levels")
    sign = 1.0 if worsens != higher_is_better else -1.0   # + : the claimed direction
    all_cells = [c for _, c in items]
    steps = [compare(b, a) for (_, a), (_, b) in pairwise(items)]
    total = compare(items[-1][1], items[0][1])
    ours = " → ".join(f"{k}: {_fmt_cell(c)}" for k, c in items)
    ours += total.describe(sign, "change from the least to the most noise", "the claimed way")
    word = "worse" if worsens else "better"
    if not np.isfinite(total.spread):
        going = sum(sign * d.mean > 0 for d in steps)
        return _verdict(NOT_REPRODUCED, ours, f"one value per cell (one chain of one copy): no "
                        f"spread to judge by; {going} of {len(steps)} steps go the claimed way",
                        all_cells)
    against = [d for d in steps if d.beyond(sign) == "below"]
    if against or total.beyond(sign) == "below":
        return _verdict(FAIL, ours, f"{len(against)} of {len(steps)} steps, or the whole "
                        f"change, go against the claim beyond the spread", all_cells)
    if total.beyond(sign) == "above":
        dips = sum(sign * d.mean <= 0 for d in steps)
        extra = f" ({dips} step(s) against it within the spread)" if dips else ""
        return _verdict(PASS, ours, f"{word} from the least to the most noise beyond the "
                        f"spread{extra}", all_cells)
    if total.chains_disagree(lambda d: sign * d > 0):
        return _verdict(UNSETTLED, ours, "the change from the least to the most noise lies "
                        "within the spread, and one fit's chains disagree about its direction",
                        all_cells)
    return _verdict(NOT_REPRODUCED, ours, "the change from the least to the most noise lies "
                    "within the spread", all_cells)


def _at_level(cells: dict, k):
    """The cell of level ``k``, or the one reference without levels."""
    return cells[None] if list(cells) == [None] else cells[k]


def almost_same(mine: dict, reference: dict, other: dict, other_reference: dict | None = None,
                *, names=("ours", "non-private", "naive"), level: str = "ε/N") -> Verdict:
    """``mine`` is almost the same as ``reference``, judged by the gap ``other`` opens.

    Parameters
    ----------
    mine, other : dict of Cell
        The two methods' cells by level.
    reference, other_reference : dict of Cell
        What each is measured against, by level, or one cell keyed None for every level;
        ``other_reference`` defaults to ``reference``.
    names : (str, str, str)
        How ``mine``, the reference and ``other`` are named.
    level : str
        The name of the level in the verdict's text.

    Returns
    -------
    Verdict
        PASS where at every level our gap (:func:`compare`), spread included, is at most
        :data:`ALMOST_SAME` of the other's gap, spread excluded; FAIL where at some level our
        gap, spread excluded, is at least :data:`AS_FAR_AS` of the other's, spread included;
        UNSETTLED where neither and, at an undecided level, one fit's chains disagree about
        being within :data:`ALMOST_SAME` of the other's gap; otherwise NOT-REPRODUCED (also
        with no spread known).
    """
    other_reference = reference if other_reference is None else other_reference
    if not mine or not other or not reference or not other_reference:
        return Verdict(NOT_RUN, "n/a", "no values for one of the compared methods")
    if set(mine) != set(other):
        raise _Missing(f"{names[0]} and {names[2]} were not run at the same levels")
    gaps, yardsticks, cells, parts = {}, {}, [], []
    for k, cell in mine.items():
        ref, theirs, their_ref = _at_level(reference, k), other[k], _at_level(other_reference, k)
        gaps[k], yardsticks[k] = compare(cell, ref), compare(theirs, their_ref)
        cells += [cell, ref, theirs, their_ref]
        per_level = list(reference) != [None]
        parts.append(f"{_label(k, level)}: {names[0]} {_fmt_cell(cell)} (gap "
                     f"{_fmt(gaps[k].mean)}{f' from {_fmt_cell(ref)}' if per_level else ''}), "
                     f"{names[2]} {_fmt_cell(theirs)} (gap {_fmt(yardsticks[k].mean)}"
                     f"{f' from {_fmt_cell(their_ref)}' if per_level else ''})")
    ours = "; ".join(parts)
    if list(reference) == [None]:
        ours += f"; {names[1]} {_fmt_cell(reference[None])}"
    close, far, unknown, open_ = [], [], [], []
    for k, gap in gaps.items():
        yard = yardsticks[k]
        if not (np.isfinite(gap.spread) and np.isfinite(yard.spread)):
            unknown.append(k)
        elif abs(gap.mean) + gap.spread <= ALMOST_SAME * (abs(yard.mean) - yard.spread):
            close.append(k)
        elif abs(gap.mean) - gap.spread >= AS_FAR_AS * (abs(yard.mean) + yard.spread):
            far.append(k)
        else:
            open_.append(k)
    shares = [abs(g.mean) / abs(yardsticks[k].mean) for k, g in gaps.items()
              if yardsticks[k].mean != 0]
    largest = (f"the largest {max(shares):.1%} of the gap of {names[2]}" if shares
               else "no gap to compare")
    if far:
        return _verdict(FAIL, ours, f"gap of {names[0]} to {names[1]}, spread excluded, at "
                        f"least {AS_FAR_AS:.0%} of the gap of {names[2]}, spread included, at "
                        f"{_keys(far, level)}", cells)
    if len(close) == len(gaps):
        return _verdict(PASS, ours, f"gap of {names[0]} to {names[1]}, spread included, at "
                        f"most {ALMOST_SAME:.0%} of the gap of {names[2]}, spread excluded, at "
                        f"every level ({largest})", cells)
    split = [k for k in open_ if gaps[k].chains_disagree(
        lambda d, k=k: abs(d) <= ALMOST_SAME * abs(yardsticks[k].mean))]
    if split:
        return _verdict(UNSETTLED, ours, f"undecided at {_keys(split, level)}, where one fit's "
                        f"chains disagree about being within {ALMOST_SAME:.0%} of the gap of "
                        f"{names[2]}", cells)
    if unknown:
        return _verdict(NOT_REPRODUCED, ours, f"one value per cell: no spread to judge by "
                        f"({largest})", cells)
    return _verdict(NOT_REPRODUCED, ours, f"gap of {names[0]} between {ALMOST_SAME:.0%} and "
                    f"{AS_FAR_AS:.0%} of the gap of {names[2]} once the spreads are counted, "
                    f"at {_keys(open_, level)} ({largest})", cells)


def near_number(ours, paper: float, *, rel_tol: float, better_if_lower: bool,
                cell: Cell | None = None) -> Verdict:
    """A printed number of the paper matched within ``rel_tol``, or beaten.

    Our settings differ from the paper's, so a miss is NOT-REPRODUCED, never FAIL. ``cell``
    (optional) gives our value's chains and copies; ``ours`` is then its mean. UNSETTLED
    where that mean lies within the cell's spread of the tolerance's edge and one fit's
    chains disagree about the match.
    """
    if cell is not None:
        ours = cell.mean
    if ours is None or not np.isfinite(ours):
        return Verdict(NOT_RUN, "n/a", "no number of ours")
    edge = paper + (1.0 if better_if_lower else -1.0) * rel_tol * abs(paper)

    def matches(value):
        return value <= edge if better_if_lower else value >= edge

    beats = ours <= paper if better_if_lower else ours >= paper
    gap = abs(ours - paper) / abs(paper)
    text = _fmt_cell(cell) if cell is not None else _fmt(ours)
    cells = [cell] if cell is not None else []
    if cell is not None and np.isfinite(cell.sd) and abs(ours - edge) <= cell.sd:
        chains = compare(cell, Cell.of([edge]))
        if chains.chains_disagree(lambda d: matches(d + edge)):
            return _verdict(UNSETTLED, text, f"within the spread of the tolerance's edge "
                            f"({_fmt(edge)}), and one fit's chains disagree about matching "
                            f"the paper's {_fmt(paper)}", cells)
    if matches(ours):
        how = "beats" if beats else f"within {rel_tol:.0%} of"
        return _verdict(PASS, text, f"ours {how} the paper's {_fmt(paper)}", cells)
    return _verdict(NOT_REPRODUCED, text,
                    f"{gap:.0%} from the paper's {_fmt(paper)} (tolerance {rel_tol:.0%})", cells)


def flag(value, ours: str, *, holds: str, fails: str) -> Verdict:
    """A yes/no result a stage computed itself (e.g. a crossing check)."""
    if value is None:
        return Verdict(NOT_RUN, ours, "the stage did not record this check")
    return Verdict(PASS, ours, holds) if bool(value) else Verdict(FAIL, ours, fails)
