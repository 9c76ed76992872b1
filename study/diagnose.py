"""The pipeline's diagnosis of its fits: R-hat, ESS and the chains' agreement of several
cases (a case: one model fitted to one data set by several chains, saved as fit folders),
one table row per quantity, for the ``diagnose`` notebook."""
from __future__ import annotations

import numpy as np
import pandas as pd

from lpp.diagnostics import (
    chain_agreement,
    convergence_summary,
    default_entries,
    to_inference_data,
)
from lpp.formats.fits import load_chains

__all__ = ["CASE_COLUMNS", "diagnose_cases"]

#: the columns of :func:`diagnose_cases`'s table, in order
CASE_COLUMNS = ("case", "quantity", "r_hat", "ess_bulk", "ess_tail", "verdict", "separation",
                "drift_z", "chain_means", "chains", "draws", "n_iter", "burn_in", "thin",
                "seeds")


def diagnose_cases(cases: dict, *, n_entries: int = 4):
    """R-hat and bulk / tail ESS of several diagnosed cases, one table row per quantity.

    The pipeline's diagnosis: each case is one model fitted to one data set by several chains
    (saved fit folders, e.g. the pipeline's own fit and the same run with other seeds).

    Parameters
    ----------
    cases : dict
        ``{name: {"fits": [fit folder, ...], "exclude": mask or None, "names": names or
        None}}`` (a folder of a fit of several chains contributes each of them); ``exclude``
        marks entries never followed (the held-out mask), see :func:`lpp.diagnostics.default_entries`;
        ``names`` (optional) labels the followed entries by the names of their rows and
        columns (:func:`lpp.diagnostics.entry_labels`) instead of their indices.
    n_entries : int
        Entries followed per case: the largest posterior-mean rates of the first chain.

    Returns
    -------
    table : pandas.DataFrame
        Columns :data:`CASE_COLUMNS`; ``quantity`` is ``log_joint``, ``total_rate`` or
        ``mu[i,j]`` (``mu[row name, column name]`` with ``names``); ``verdict`` and
        ``separation`` as :func:`lpp.diagnostics.chain_agreement` gives them, ``drift_z`` the largest
        ``|z|`` of its chains, ``chain_means`` the chains' means (6 significant digits, joined
        by semicolons); ``seeds`` the chains' seeds joined by commas.
    idatas : dict
        ``{name: arviz.InferenceData}`` for the trace figures.

    Raises
    ------
    ValueError
        For a case with fewer than 2 chains, chains that disagree, or too few draws.
    """
    if not isinstance(cases, dict) or not cases:
        raise ValueError("cases must be a non-empty dict {name: {'fits': [...], 'exclude': ...}}")
    rows, idatas = [], {}
    for name, case in cases.items():
        # a fit folder of several chains (n_chains) gives all of them
        fits = [chain for path in case["fits"] for chain in load_chains(path)]
        if len(fits) < 2:
            raise ValueError(f"case {name!r}: R-hat needs at least 2 chains; got "
                             f"{len(fits)}")
        entries = default_entries(fits[0], n_entries, exclude=case.get("exclude"))
        idata = to_inference_data(fits, entries=entries, names=case.get("names"))
        summary = convergence_summary(idata)
        agreement = chain_agreement(idata)
        for quantity, values in summary.iterrows():
            verdict = agreement.loc[quantity]
            rows.append({"case": name, "quantity": quantity, **values.to_dict(),
                         "verdict": verdict["verdict"], "separation": verdict["separation"],
                         "drift_z": float(np.abs(verdict["drift_z"]).max()),
                         "chain_means": ";".join(f"{m:.6g}" for m in verdict["chain_means"]),
                         "chains": len(fits), "draws": int(np.size(fits[0].log_joint)),
                         "n_iter": fits[0].n_iter, "burn_in": fits[0].burn_in,
                         "thin": fits[0].thin, "seeds": idata.posterior.attrs["seeds"]})
        idatas[name] = idata
    return pd.DataFrame(rows, columns=list(CASE_COLUMNS)), idatas
