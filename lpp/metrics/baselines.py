"""Which entries a network's MAE scores, and the reference rows of an MAE table.

Network reconstruction error, as the paper measures it, is over the *observed* data: the
off-diagonal entries the sampler saw, not the held-out ones (those are scored separately, as
link prediction). Scoring all off-diagonal entries mixes the two, and when the held-out set
holds most of the mass it hides the reconstruction pattern. :func:`network_masks` and
:func:`observed_mae` make the split explicit.

Two references belong beside every MAE: predicting **zero everywhere**, which MAE rewards on
sparse counts (the MAE-optimal point prediction is the median, 0 for any Poisson rate below
log 2), and the **oracle** that predicts the true rates where they are known (simulated data),
the error no estimate of the rates can beat on average.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lpp.metrics.accuracy import mae

__all__ = ["network_masks", "observed_mae", "heldout_mae", "zeros_mae", "oracle_mae",
           "mae_baselines"]


def network_masks(shape, heldout=None) -> dict[str, np.ndarray]:
    """Boolean masks of a directed network's scored entries (the diagonal is never scored).

    Parameters
    ----------
    shape : tuple of int
        ``(V, V)``, the network's count matrix shape.
    heldout : array_like of bool, optional
        ``V x V``, True at the held-out entries (those the fit never saw); None when nothing
        was held out.

    Returns
    -------
    dict
        ``"observed"``: off-diagonal and not held out; ``"heldout"``: off-diagonal and held
        out; ``"off_diagonal"``: both together.

    Raises
    ------
    ValueError
        If the shape is not square or the held-out mask has another shape.
    TypeError
        If ``heldout`` is not boolean.
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 2:
        raise ValueError(f"a network's count matrix is square with at least 2 nodes; got {shape}")
    off_diagonal = ~np.eye(shape[0], dtype=bool)
    if heldout is None:
        held = np.zeros(shape, dtype=bool)
    else:
        held = heldout.toarray() if sp.issparse(heldout) else np.asarray(heldout)
        if held.dtype != np.bool_:
            raise TypeError(f"heldout must be boolean (True = held out); got dtype {held.dtype}")
        if held.shape != shape:
            raise ValueError(f"heldout has shape {held.shape}; the network has {shape}")
    return {"observed": off_diagonal & ~held, "heldout": off_diagonal & held,
            "off_diagonal": off_diagonal}


def observed_mae(mu_hat, y, heldout=None) -> float:
    """Reconstruction MAE of a network fit: the off-diagonal entries that were *not* held out.

    Parameters
    ----------
    mu_hat : array_like
        ``V x V`` estimated rates (e.g. the posterior mean).
    y : array_like or scipy.sparse matrix
        ``V x V`` true counts.
    heldout : array_like of bool, optional
        True at the held-out entries, which are excluded; None scores every off-diagonal entry.

    Returns
    -------
    float
        ``mean |mu_hat - y|`` over the observed off-diagonal entries.

    Raises
    ------
    ValueError
        On shapes that disagree, or when every off-diagonal entry is held out.
    """
    return mae(mu_hat, y, network_masks(np.shape(mu_hat), heldout)["observed"])


def heldout_mae(mu_hat, y, heldout) -> float:
    """Link-prediction MAE of a network fit: the held-out off-diagonal entries only.

    Parameters and errors as :func:`observed_mae`; ``heldout`` is required here.
    """
    if heldout is None:
        raise ValueError("heldout_mae needs the held-out mask")
    return mae(mu_hat, y, network_masks(np.shape(mu_hat), heldout)["heldout"])


def zeros_mae(y, mask=None) -> float:
    """MAE of predicting 0 everywhere (the mean count over the scored entries).

    Parameters
    ----------
    y : array_like or scipy.sparse matrix
        True counts.
    mask : array_like of bool, optional
        True marks the scored entries, as in :func:`lpp.metrics.mae`.

    Returns
    -------
    float
    """
    return mae(np.zeros(y.shape), y, mask)


def oracle_mae(true_rates, y, mask=None) -> float:
    """MAE of predicting the true Poisson rates (known for simulated data).

    Parameters
    ----------
    true_rates : array_like
        The rates ``y`` was drawn from, of ``y``'s shape.
    y : array_like or scipy.sparse matrix
        True counts.
    mask : array_like of bool, optional
        True marks the scored entries.

    Returns
    -------
    float
    """
    return mae(true_rates, y, mask)


def mae_baselines(y, mask=None, *, true_rates=None) -> dict[str, float]:
    """The reference rows of an MAE table: ``{"zeros": ..., "oracle": ...}``.

    ``"oracle"`` is present only when ``true_rates`` is given (real data have none).
    Parameters as :func:`zeros_mae` and :func:`oracle_mae`.
    """
    out = {"zeros": zeros_mae(y, mask)}
    if true_rates is not None:
        out["oracle"] = oracle_mae(true_rates, y, mask)
    return out
