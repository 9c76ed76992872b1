"""Reading one cell of a committed score table: a method's values at one setting.

The pages quote a cell as its mean (and sd) over every chain and privatized copy, the spread
the claims judge by, so a cell here is :class:`study.claims.Cell` as
:func:`study.claims.table_cells` builds it.
"""
from __future__ import annotations

import pandas as pd

from study.claims import Cell, table_cells
from study.score_tables import is_unmasked

__all__ = ["cell", "cells", "masked"]


def masked(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the masked design (every row of a table without unmasked runs)."""
    return table[~is_unmasked(table)]


def cells(table: pd.DataFrame, method: str, measure: str, **where) -> dict:
    """``{level: Cell}`` of ``method``'s ``measure`` at each ε/N (one key None for a
    reference without levels), over the rows whose columns equal ``where``'s values.

    Raises
    ------
    KeyError
        When no row matches (naming the method, measure and filter).
    """
    for column, value in where.items():
        table = table[table[column] == value]
    found = table_cells(table, method, measure)
    if not found:
        raise KeyError(f"no {measure} of {method} where {where or 'any'}")
    return found


def cell(table: pd.DataFrame, method: str, measure: str, level: float | None = None,
         **where) -> Cell:
    """The :class:`~study.claims.Cell` of ``method``'s ``measure`` at ε/N ``level`` (None:
    the reference's only cell), over the rows whose columns equal ``where``'s values.

    Raises
    ------
    KeyError
        When there is no such cell.
    """
    found = cells(table, method, measure, **where)
    key = None if level is None else float(level)
    if key not in found:
        raise KeyError(f"no {measure} of {method} at epsilon/N = {level} where {where}")
    return found[key]
