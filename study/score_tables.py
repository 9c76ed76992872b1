"""Reading the score tables back: which rows are which design.

A module of its own so that readers of the committed tables (``study.claims``, whose stage
depends on a few files only) need not import the evaluation, which pulls in the samplers.
"""
from __future__ import annotations

import pandas as pd


def is_unmasked(table: pd.DataFrame) -> pd.Series:
    """Rows of a score table that are fits of every entry (``heldout_used`` False).

    A table without the column (one of the masked design only) has none; a table read back
    from CSV may hold the flag as text.

    Parameters
    ----------
    table : pandas.DataFrame
        A score table (:func:`lpp.evaluation.score_community_fits`), or one read back
        from its CSV.

    Returns
    -------
    pandas.Series of bool
        True at the unmasked fits' rows (never at a reference row).
    """
    if "heldout_used" not in table:
        return pd.Series(False, index=table.index)
    return table.heldout_used.astype(object).map(lambda v: str(v).lower() == "false")


def converged(table: pd.DataFrame) -> pd.Series:
    """Rows of the VI benchmark's table (``vi/benchmark.csv``) whose optimiser converged: its
    ``converged`` flag true, as a bool or as text once read back from CSV (empty, False, at the
    MCMC rows, which have no such flag)."""
    return table["converged"].astype(str).str.lower().eq("true")
