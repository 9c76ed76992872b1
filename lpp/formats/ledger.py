"""What private folders release, and what a reader of several of them has spent.

Every private folder (:mod:`lpp.formats.privatized`, :mod:`lpp.formats.privatized_blocks`)
states what it releases: ``epsilon``, ``N`` and ``epsilon_over_n``, the mechanism (two-sided
geometric noise, ``fast`` floating-point or ``exact`` integer sampling), where the noise's
randomness came from (``system``, ``secret key``, or ``simulation``: noise that whoever holds
the seed regenerates, not a private release), and its ``ledger``: ``dataset_id`` (a digest
of its rows' and columns' ids: which counts it privatizes), ``copy`` (the replicate) and
``release_sha256`` (a digest of the released values), and ``selection`` (how its rows,
columns and held-out mask were chosen). :func:`read_release` reads that statement;
:func:`composed_epsilon` adds up what a reader of several folders holds.

**What a level means.** A copy at level ``epsilon / N`` adds ``2Geo(exp(-epsilon / N))``
noise to every entry: a change of ``N`` in one entry, or of ``N`` in L1 norm spread over a
person's entries, changes the probability of any output by at most ``exp(epsilon)``; a
change of size ``Delta`` costs ``Delta * epsilon / N``.

**Composition.** Several releases of the same counts compose (basic composition): to a
reader of releases ``j = 1..k`` a change of size ``Delta`` costs
``Delta * sum_j epsilon_j / N_j``. The ledger reports that sum per data set
(``epsilon_over_n``: the composed cost of a unit change) and, where every release has the
same ``N``, the composed ``epsilon = N * sum_j epsilon_j / N_j = sum_j epsilon_j`` at that
``N``. Three copies at ``epsilon / N = 3`` are one release at ``epsilon / N = 9`` — which is
why the median of three such copies equals the true count in almost every entry. The same
release read twice (the same ``release_sha256``: e.g. two folders that hold the same noised
matrix under two held-out masks) is counted once. Folders whose entries overlap — that share a
row id and a column id, or all of them (the same ``dataset_id``) — are taken for copies of the
same counts, so a copy with a row dropped or some ids renamed is matched where its ids
overlap, and the warning says what it matched; the sum is then the cost to the people they
share. Matrices made from the same people's data with other ids (a document-by-word and an
actor-by-actor matrix of the same emails) are separate data sets here, and the ledger's
``total`` — the sum over every data set read — is the bound for a person present in several.

Folders under the temporary names of an unfinished or replaced write are refused
(:func:`lpp.formats.files.read_meta`), so a killed write never counts, nor loads.

**Selections.** A choice of rows, columns or held-out entries made from the true counts
(``from_true_counts``) with no privacy mechanism (``epsilon`` None) is a release outside
epsilon: the ledger lists such choices (:attr:`DatasetBudget.unprotected`). A choice made by
a differentially private mechanism (``epsilon`` a number) is added to its data set's budget
once, however many copies share it.

Command line: ``python -m lpp.formats.ledger FOLDER ...`` prints the budget of a reader of
those folders (and warns when it holds several copies of the same counts).
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lpp.formats.files import FormatError, MissingFileError, read_json_object
from lpp.formats import privatized, privatized_blocks

__all__ = ["Release", "DatasetBudget", "Ledger", "SeveralCopiesWarning", "read_release",
           "composed_epsilon", "main"]


class SeveralCopiesWarning(UserWarning):
    """A reader holds several releases of the same counts: its privacy cost is their sum."""


@dataclass(frozen=True)
class Release:
    """What one private folder releases (read by :func:`read_release`)."""

    path: str
    dataset_id: str
    copy: int | None
    epsilon: float
    N: float
    epsilon_over_n: float
    mechanism: str
    randomness: str
    release_sha256: str
    selection: tuple | None
    source: str
    row_ids: tuple = ()
    column_ids: tuple = ()

    @property
    def simulation(self) -> bool:
        """Whether its noise came from a simulation's seed (not a private release)."""
        return privatized.is_simulation({"randomness": self.randomness})


@dataclass(frozen=True)
class DatasetBudget:
    """The composed budget of one data set for one reader.

    A data set is every release whose entries overlap another's: folders that share row ids
    and column ids hold the same people's counts there, whatever else they hold — a copy
    with a row dropped or some ids renamed is still a copy where its ids overlap. Its
    ``dataset_id`` is the first release's; ``dataset_ids`` lists them all, ``matched`` says
    which folders were matched by how many shared rows and columns.

    ``releases``: the distinct releases read (one per ``release_sha256``), ``paths``: every
    folder read; ``epsilon_over_n``: ``sum_j epsilon_j / N_j`` over the distinct releases,
    plus the epsilon of private selections per unit of ``N`` where ``N`` is common;
    ``N``: the releases' common ``N`` (None when they differ); ``epsilon``: the composed
    epsilon at that ``N`` (None when the releases' ``N`` differ); ``selection_epsilon``: the
    epsilon of the private selections, counted once; ``unprotected``: the choices made from
    the true counts that no epsilon covers; ``unstated``: folders that do not say how their
    rows and columns were chosen (read them as chosen from the counts).
    """

    dataset_id: str
    releases: tuple
    paths: tuple
    epsilon_over_n: float
    N: float | None
    epsilon: float | None
    selection_epsilon: float
    unprotected: tuple
    unstated: tuple
    dataset_ids: tuple = ()
    matched: tuple = ()

    @property
    def copies(self) -> int:
        """How many distinct releases of these counts the reader holds."""
        return len(self.releases)


@dataclass(frozen=True)
class Ledger:
    """The budget of a reader of several private folders (:func:`composed_epsilon`).

    ``datasets``: one :class:`DatasetBudget` per ``dataset_id``, in the order first read;
    ``total_epsilon_over_n``: their sum (the bound for a person in every data set read);
    ``total_epsilon``: likewise at the common ``N`` (None when the ``N`` differ).
    """

    reader: str | None
    datasets: dict
    total_epsilon_over_n: float
    total_epsilon: float | None

    @property
    def several_copies(self) -> list:
        """The data sets of which the reader holds more than one release."""
        return [d for d in self.datasets.values() if d.copies > 1]

    def as_dict(self) -> dict:
        """The ledger as plain JSON values (one record per data set)."""
        return {"reader": self.reader, "total_epsilon_over_n": self.total_epsilon_over_n,
                "total_epsilon": self.total_epsilon,
                "datasets": [{
                    "dataset_id": d.dataset_id, "copies": d.copies,
                    "levels": [r.epsilon_over_n for r in d.releases],
                    "copy_numbers": [r.copy for r in d.releases],
                    "epsilon_over_n": d.epsilon_over_n, "N": d.N, "epsilon": d.epsilon,
                    "selection_epsilon": d.selection_epsilon,
                    "unprotected": list(d.unprotected), "unstated": list(d.unstated),
                    "paths": list(d.paths), "dataset_ids": list(d.dataset_ids),
                    "matched": list(d.matched),
                    "simulations": [r.path for r in d.releases if r.simulation]}
                    for d in self.datasets.values()]}

    def table(self) -> str:
        """A short text table: one line per data set, then the total."""
        lines = [f"{'data set':<24} {'copies':>6} {'eps/N sum':>10} {'epsilon':>9}  folders"]
        for d in self.datasets.values():
            eps = "-" if d.epsilon is None else f"{d.epsilon:g}"
            lines.append(f"{d.dataset_id[:24]:<24} {d.copies:>6} {d.epsilon_over_n:>10g} "
                         f"{eps:>9}  {', '.join(d.paths)}")
            for entry in d.unprotected:
                lines.append(f"{'':<24} not covered by epsilon: {entry['what']} chosen from the "
                             f"true counts ({entry['rule']})")
            if d.unstated:
                lines.append(f"{'':<24} selection not stated by: {', '.join(d.unstated)}")
            for text in d.matched:
                lines.append(f"{'':<24} {text}")
            simulated = [r.path for r in d.releases if r.simulation]
            if simulated:  # whoever holds the seed regenerates the noise and subtracts it
                lines.append(f"{'':<24} {privatized.SIMULATION_NOTICE}: "
                             f"{', '.join(simulated)}")
        total = "-" if self.total_epsilon is None else f"{self.total_epsilon:g}"
        lines.append(f"{'total':<24} {'':>6} {self.total_epsilon_over_n:>10g} {total:>9}")
        return "\n".join(lines)


def read_release(folder) -> Release:
    """What the private folder ``folder`` (either format; its folder or its ``meta.json``)
    releases, from its ``meta.json`` checked as the format's reader checks it (the data are
    not read: the single-file format's ``release_sha256`` is compared with its payload by
    :func:`lpp.formats.privatized.load_privatized`).

    Raises
    ------
    lpp.formats.files.MissingFileError
        No ``meta.json`` there (also a ``FileNotFoundError``).
    lpp.formats.files.FormatError
        Not a private folder of a version this code reads, or a field not as written.
    """
    path = Path(folder)
    meta_path = path / privatized.META_FILE if path.is_dir() else path
    if not meta_path.is_file():
        raise MissingFileError(f"no {privatized.META_FILE} at {path}")
    kind = read_json_object(meta_path).get("format")
    if kind == privatized_blocks.FORMAT_NAME:
        meta = privatized_blocks.PrivatizedBlocks(meta_path.parent).meta
    elif kind == privatized.FORMAT_NAME:
        meta = privatized.load_privatized_meta(meta_path)
    else:
        raise FormatError(f"{meta_path}: not a private folder (format={kind!r:.60}; expected "
                          f"{privatized.FORMAT_NAME} or {privatized_blocks.FORMAT_NAME})")
    ledger = meta["ledger"]
    selection = meta["selection"]
    return Release(path=str(meta_path.parent), dataset_id=ledger["dataset_id"],
                   copy=ledger["copy"], epsilon=float(meta["epsilon"]), N=float(meta["N"]),
                   epsilon_over_n=float(meta["epsilon_over_n"]), mechanism=meta["mechanism"],
                   randomness=meta["randomness"], release_sha256=ledger["release_sha256"],
                   selection=None if selection is None else tuple(selection),
                   source=meta["source"], row_ids=tuple(meta["row_ids"]),
                   column_ids=tuple(meta["column_ids"]))


def _overlapping(releases: Sequence[Release]) -> tuple[list, list]:
    """The releases grouped into data sets: two releases are of one data set when they share
    a ``dataset_id`` or, where both list their ids, a row id and a column id (their entries
    overlap); and, per group, what was matched by ids, in words."""
    parent = list(range(len(releases)))

    def root(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    rows = [frozenset(r.row_ids) for r in releases]
    cols = [frozenset(r.column_ids) for r in releases]
    notes = []
    for i, a in enumerate(releases):
        for j in range(i):
            b = releases[j]
            if a.dataset_id == b.dataset_id:
                parent[root(i)] = root(j)
                continue
            shared_rows, shared_cols = len(rows[i] & rows[j]), len(cols[i] & cols[j])
            if shared_rows and shared_cols:
                parent[root(i)] = root(j)
                notes.append((j, f"matched by their ids: {a.path} shares {shared_rows} of its "
                                 f"{len(rows[i])} rows and {shared_cols} of its {len(cols[i])} "
                                 f"columns with {b.path}"))
    groups: dict[int, list] = {}
    for k in range(len(releases)):
        groups.setdefault(root(k), []).append(k)
    ordered = list(groups.values())
    matched = [[text for j, text in notes if root(j) == root(group[0])] for group in ordered]
    return [[releases[k] for k in group] for group in ordered], matched


def _budget(dataset: str, read: Sequence[Release], matched=()) -> DatasetBudget:
    distinct = {}
    for release in read:
        distinct.setdefault(release.release_sha256, release)
    releases = tuple(distinct.values())
    per_unit = sum(r.epsilon / r.N for r in releases)
    ns = {r.N for r in releases}
    common_n = ns.pop() if len(ns) == 1 else None
    private_choices, unprotected = {}, []
    for release in read:
        for entry in release.selection or ():
            if entry["epsilon"] is not None:
                key = json.dumps(entry, sort_keys=True)
                private_choices[key] = float(entry["epsilon"])
            elif entry["from_true_counts"] and entry not in unprotected:
                unprotected.append(dict(entry))
    selection_epsilon = sum(private_choices.values())
    epsilon = None if common_n is None else common_n * per_unit + selection_epsilon
    if common_n is not None:
        per_unit += selection_epsilon / common_n
    return DatasetBudget(
        dataset_id=dataset, releases=releases, paths=tuple(r.path for r in read),
        epsilon_over_n=per_unit, N=common_n, epsilon=epsilon,
        selection_epsilon=selection_epsilon, unprotected=tuple(unprotected),
        unstated=tuple(r.path for r in read if r.selection is None),
        dataset_ids=tuple(dict.fromkeys(r.dataset_id for r in read)), matched=tuple(matched))


def composed_epsilon(folders: Iterable, *, reader: str | None = None,
                     warn: bool = True) -> Ledger:
    """The privacy budget a reader of ``folders`` has spent, under basic composition.

    Parameters
    ----------
    folders : iterable of path-like or :class:`Release`
        Private folders (either format), or releases read already.
    reader : str, optional
        Who reads them (a stage's name, say), for the warning and the table.
    warn : bool, optional
        Warn (:class:`SeveralCopiesWarning`) when the reader holds more than one release of
        the same counts.

    Returns
    -------
    Ledger
        Per data set, the distinct releases and ``sum_j epsilon_j / N_j`` (with the
        composed ``epsilon`` at a common ``N``); and the total over data sets (module
        docstring, *Composition*).

    Raises
    ------
    ValueError
        If ``folders`` is empty; the format readers' errors for a folder that is not a
        private folder.
    """
    releases = [f if isinstance(f, Release) else read_release(f) for f in folders]
    if not releases:
        raise ValueError("no private folder to compose")
    groups, matched = _overlapping(releases)
    datasets = {read[0].dataset_id: _budget(read[0].dataset_id, read, notes)
                for read, notes in zip(groups, matched)}
    total = sum(d.epsilon_over_n for d in datasets.values())
    ns = {d.N for d in datasets.values()}
    common = ns.pop() if len(ns) == 1 else None
    ledger = Ledger(reader=reader, datasets=datasets, total_epsilon_over_n=total,
                    total_epsilon=None if common is None else sum(
                        d.epsilon for d in datasets.values()))
    if warn:
        for d in ledger.several_copies:
            who = f"{reader} reads" if reader else "one reader reads"
            at = (f"epsilon = {d.epsilon:g} at N = {d.N:g}" if d.epsilon is not None
                  else "the releases' N differ")
            how = ("; " + "; ".join(d.matched)) if d.matched else (
                f" (the same rows and columns, {d.dataset_id[:24]}…)")
            warnings.warn(
                f"{who} {d.copies} privatized copies of the same counts "
                f"({', '.join(r.path for r in d.releases)}{how}): by basic composition they "
                f"cost epsilon/N = {d.epsilon_over_n:g} per unit of change ({at}) to the people "
                "they share, not the level of any one copy", SeveralCopiesWarning, stacklevel=2)
    return ledger


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m lpp.formats.ledger [--reader NAME] [--json] FOLDER ...``"""
    parser = argparse.ArgumentParser(
        prog="python -m lpp.formats.ledger",
        description="The privacy budget of a reader of several private folders "
                    "(basic composition over copies of the same counts).")
    parser.add_argument("folders", nargs="+", help="private folders (either format)")
    parser.add_argument("--reader", help="who reads them (shown in the output)")
    parser.add_argument("--json", action="store_true", help="print the ledger as JSON")
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SeveralCopiesWarning)
            warnings.simplefilter("ignore", privatized.SimulationWarning)  # the table says it
            ledger = composed_epsilon(args.folders, reader=args.reader)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(ledger.as_dict(), indent=1) if args.json else ledger.table())
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
