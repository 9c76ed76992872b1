"""Reading the result tables into cells, and the :class:`Check` that each paper's claims are
listed as."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from study.claims.rules import NOT_RUN, PAPER_DATASET, Cell, Verdict, _Missing


# ---------------------------------------------------------------- reading cells from tables

#: a privatized copy in a score table's fit name: its level and replicate
_COPY = re.compile(r"_eps([0-9.]+)_rep(\d+)(?:_|$)")


def _copy_of(fit: str) -> str | None:
    """The privatized copy a fit ran on (``ε/N=1 copy 0``), from its name; None if unnamed.

    Ours and the naive method at one level are fitted to the same copies, so their fits
    name the same copy; another level's copies are other draws of the noise.
    """
    found = _COPY.search(str(fit))
    return f"ε/N={float(found.group(1)):g} copy {found.group(2)}" if found else None


def _rows_cell(rows: pd.DataFrame, measure: str, unit: str | None = None) -> Cell | None:
    """The cell of a score table's rows (one per fit and chain).

    ``unit`` names the column whose values are the design units the fits ran on; without it
    the fits are the privatized copies their names give (``..._eps<ε/N>_rep<k>``), where
    every row names one.
    """
    rows = rows[np.isfinite(pd.to_numeric(rows[measure], errors="coerce"))]
    if rows.empty:
        return None
    rhat = pd.to_numeric(rows["rhat"], errors="coerce").max() if "rhat" in rows else math.nan
    values = rows[measure].astype(float).to_numpy()
    if unit is not None:
        return Cell.of(values, rows[unit].tolist(), unit=unit, rhat=rhat)
    if "fit" not in rows:
        return Cell.of(values, rhat=rhat)
    copies = [_copy_of(f) for f in rows["fit"]]
    if all(copies):
        return Cell.of(values, copies, unit="copy", rhat=rhat)
    return Cell.of(values, rows["fit"].astype(str).tolist(), rhat=rhat)


def table_cells(table: pd.DataFrame, method: str, measure: str,
                level: str = "epsilon_over_n", unit: str | None = None) -> dict:
    """One :class:`Cell` per value of ``level`` for ``method`` (rows: fits and chains).

    A method without levels (the non-private reference) gives one cell keyed None.
    ``unit``: the column naming each row's design unit (see :func:`_rows_cell`).
    """
    rows = table[table.method == method]
    if rows.empty or measure not in rows:
        return {}
    if rows[level].isna().all():
        cell = _rows_cell(rows, measure, unit)
        return {} if cell is None else {None: cell}
    cells = {}
    for value, group in rows.groupby(level):
        cell = _rows_cell(group, measure, unit)
        if cell is not None:
            cells[float(value)] = cell
    return dict(sorted(cells.items(), key=lambda kv: -kv[0]))
# ---------------------------------------------------------------- reading the tables

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
    ``case`` names the case study whose data it needs (``"topics"``/``"network"``), if any;
    ``observation`` marks a comparison of our own that the papers do not state (reported
    with its numbers, never a verdict)."""

    id: str
    where: str
    statement: str
    paper: str
    run: object
    case: str | None = None
    observation: bool = False
