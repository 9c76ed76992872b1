"""Scores of a fit against the true counts: the paper's measures for each case study.

These read the true counts, so only evaluation stages call them — never an inference stage.

* topics (Sec. 5.1): reconstruction MAE of ``mu_hat`` over all entries; NPMI and Mimno
  coherence of each topic's top words with the true counts as reference corpus, averaged
  over topics for each saved sample of ``phi``, then over samples;
* communities (Sec. 5.2): MAE over all off-diagonal entries (the diagonal is never modelled)
  and over the held-out entries alone.

The report notebooks are narrative over three calls: score every saved fit of a case study
into a table (:func:`score_topic_fits`, :func:`score_community_fits`), write it
(:func:`write_table`) and draw it (:func:`plot_scores`). The synthetic topic experiment picks
and aligns its topics with :func:`best_aligned_topics`.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from lpp.fits import load_fit
from lpp.io import atomic_write_bytes
from lpp.metrics import (ReferenceCorpus, align_topics, mae, mean_over_topics, mimno_coherence,
                         npmi, top_words)


def topic_scores(fit, true_counts, *, reference: ReferenceCorpus | None = None,
                 n_top: int = 10) -> dict:
    """MAE, NPMI and coherence of a topic-model fit (``fit.samples["phi"]``: S x K x V)."""
    phi = fit.samples.get("phi")
    if phi is None or phi.ndim != 3:
        raise ValueError("the fit holds no saved samples of phi (S x K x V)")
    if fit.mu_hat.shape != tuple(true_counts.shape):
        raise ValueError(f"mu_hat has shape {fit.mu_hat.shape}, the counts {true_counts.shape}")
    reference = reference if reference is not None else ReferenceCorpus(true_counts)
    npmi_per_sample = [mean_over_topics(npmi(top_words(p, n_top), reference)) for p in phi]
    coherence_per_sample = [mean_over_topics(mimno_coherence(top_words(p, n_top), reference))
                            for p in phi]
    return {"mae": mae(fit.mu_hat, true_counts),
            "npmi": float(np.mean(npmi_per_sample)),
            "coherence": float(np.mean(coherence_per_sample)),
            "n_samples": int(phi.shape[0])}


def community_scores(fit, true_counts, heldout: np.ndarray | None) -> dict:
    """MAE over all off-diagonal entries (reconstruction), and over the held-out ones if any."""
    shape = tuple(true_counts.shape)
    if fit.mu_hat.shape != shape or shape[0] != shape[1]:
        raise ValueError(f"mu_hat {fit.mu_hat.shape} and counts {shape} must be the same square shape")
    off_diagonal = ~np.eye(shape[0], dtype=bool)
    held = np.zeros(shape, dtype=bool) if heldout is None else np.asarray(heldout, dtype=bool)
    scores = {"mae": mae(fit.mu_hat, true_counts, off_diagonal)}
    if held.any():
        scores["heldout_mae"] = mae(fit.mu_hat, true_counts, held & off_diagonal)
    return scores


# ---------------------------------------------------------------- every fit of a case study

FIT_FILE = "fit.json"
#: axis labels of the measures in the figures
MEASURE_LABELS = {"mae": "MAE", "heldout_mae": "held-out MAE", "npmi": "NPMI",
                  "coherence": "coherence"}
NONPRIVATE = "nonprivate"


def fit_dirs(fits_dir) -> list[Path]:
    """The fit directories directly under ``fits_dir`` (those holding a ``fit.json``), sorted.

    Raises
    ------
    FileNotFoundError
        If ``fits_dir`` holds no fit.
    """
    found = sorted(p.parent for p in Path(fits_dir).glob(f"*/{FIT_FILE}"))
    if not found:
        raise FileNotFoundError(f"no fit (*/{FIT_FILE}) under {fits_dir}")
    return found


def _score_table(fits_dir, score, columns) -> pd.DataFrame:
    """One row per fit: its name, method, ``columns(fit)`` and ``score(fit)``.

    The run time of each fit is kept in ``table.attrs["seconds"]`` rather than in a column:
    it varies between runs, and the table must repeat to the byte.
    """
    rows, seconds = [], {}
    for fit_dir in tqdm(fit_dirs(fits_dir), desc="scoring fits", unit="fit", leave=False):
        fit = load_fit(fit_dir)
        rows.append({"fit": fit_dir.name, "method": fit.method, **columns(fit), **score(fit)})
        seconds[fit_dir.name] = fit.meta["seconds_total"]
    table = pd.DataFrame(rows)
    table.attrs["seconds"] = seconds
    return table


def score_topic_fits(fits_dir, true_counts, *, n_top: int = 10) -> pd.DataFrame:
    """Score every topic-model fit under ``fits_dir`` against the true counts.

    Parameters
    ----------
    fits_dir : path-like
        A folder of fit directories (``lpp.fits`` format), one per method, level and replicate.
    true_counts : array_like or scipy sparse matrix
        The true document-by-word counts (D x V) the private data were made from.
    n_top : int, optional
        Top words per topic for NPMI and coherence.

    Returns
    -------
    pandas.DataFrame
        Columns ``fit``, ``method``, ``epsilon_over_n`` (None for the non-private fit) and
        those of :func:`topic_scores`; one row per fit in name order.

    Raises
    ------
    FileNotFoundError
        If ``fits_dir`` holds no fit.
    ValueError
        If a fit does not match the counts (see :func:`topic_scores`).
    """
    reference = ReferenceCorpus(true_counts)
    return _score_table(
        fits_dir,
        lambda fit: topic_scores(fit, true_counts, reference=reference, n_top=n_top),
        lambda fit: {"epsilon_over_n": fit.meta["extra"].get("epsilon_over_n")})


def score_community_fits(fits_dir, true_counts, heldout=None) -> pd.DataFrame:
    """Score every community-model fit under ``fits_dir`` against the true counts.

    Parameters
    ----------
    fits_dir : path-like
        A folder of fit directories (``lpp.fits`` format).
    true_counts : array_like or scipy sparse matrix
        The true actor-by-actor counts (square).
    heldout : array_like of bool, optional
        True = held out of inference; adds the ``heldout_mae`` column.

    Returns
    -------
    pandas.DataFrame
        Columns ``fit``, ``method``, ``C`` (communities), ``epsilon_over_n`` and those of
        :func:`community_scores`; one row per fit in name order.

    Raises
    ------
    FileNotFoundError
        If ``fits_dir`` holds no fit.
    ValueError
        If a fit does not match the counts (see :func:`community_scores`).
    """
    y = true_counts.toarray() if hasattr(true_counts, "toarray") else np.asarray(true_counts)
    return _score_table(
        fits_dir, lambda fit: community_scores(fit, y, heldout),
        lambda fit: {"C": fit.meta["extra"]["n_components"],
                     "epsilon_over_n": fit.meta["extra"].get("epsilon_over_n")})


def write_table(table: pd.DataFrame, path) -> Path:
    """Write a score table as CSV atomically, its folder created.

    Floats are written with 6 significant digits, so that the table repeats to the byte
    across machines whose last digits differ.

    Parameters
    ----------
    table : pandas.DataFrame
        A score table (:func:`score_topic_fits`, :func:`score_community_fits`).
    path : path-like
        The CSV file to write.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, table.to_csv(index=False, float_format="%.6g").encode())
    return path


def plot_scores(table: pd.DataFrame, measures, *, by: str | None = None, figure=None):
    """Each private method's score against the privacy level, the non-private fit as a line.

    One panel per measure (and per value of ``by``, e.g. ``"C"``): the private methods'
    mean ± sd over replicates at each ``epsilon_over_n`` (most private level on the right),
    the non-private fit(s) as dashed grey lines. The legend is built from the methods the
    table holds, so every method present gets an entry.

    Parameters
    ----------
    table : pandas.DataFrame
        A score table (:func:`score_topic_fits`, :func:`score_community_fits`).
    measures : sequence of str
        Columns of ``table`` to plot; those missing from the table are skipped.
    by : str, optional
        A column that splits the panels (one panel per value and measure).
    figure : path-like, optional
        Where to save the figure as PNG (atomically, 100 dpi).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If no measure is in the table, or the table has no private fit.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    measures = [m for m in measures if m in table]
    private = table[table.method != NONPRIVATE]
    nonprivate = table[table.method == NONPRIVATE]
    if not measures or private.empty:
        raise ValueError(f"nothing to plot: measures {measures}, {len(private)} private fits")
    groups = [None] if by is None else sorted(table[by].unique())
    panels = [(m, g) for m in measures for g in groups]
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.5), squeeze=False)
    for ax, (measure, group) in zip(axes[0], panels):
        sub = private if group is None else private[private[by] == group]
        sns.pointplot(data=sub, x="epsilon_over_n", y=measure, hue="method", ax=ax,
                      order=sorted(sub.epsilon_over_n.unique(), reverse=True), errorbar="sd")
        lines = nonprivate if group is None else nonprivate[nonprivate[by] == group]
        for value in lines[measure]:
            ax.axhline(value, color="grey", ls="--", label="non-private")
        if group is not None:
            ax.set(title=f"{by} = {group}")
        ax.set(xlabel="ε / N  (privacy increases →)", ylabel=MEASURE_LABELS.get(measure, measure))
    # one entry per label, in order of appearance (the non-private line may be drawn twice)
    legend = {}
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
        if ax.get_legend():
            ax.get_legend().remove()
    fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=len(legend),
               frameon=False)
    # panel titles need a little more room under the legend
    fig.tight_layout(rect=(0, 0, 1, 0.9 if by is None else 0.88))
    if figure is not None:
        figure = Path(figure)
        figure.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        atomic_write_bytes(figure, buffer.getvalue())
    return fig


def best_aligned_topics(fit, true_phi) -> tuple[np.ndarray, float]:
    """The saved ``phi`` of highest joint probability, its rows matched to the true topics.

    The synthetic topic-recovery rule: take the saved sample with the largest log joint
    probability (one point estimate, no averaging over label switches), match its topics to
    ``true_phi`` by the Hungarian algorithm on Hellinger distances, and report the mean
    distance of the matched pairs.

    Parameters
    ----------
    fit : FitResult or SavedFit
        A topic-model fit with saved samples ``samples["phi"]`` (S x K x V) and ``log_joint``.
    true_phi : array_like
        The true topics (K x V, rows need not be normalised).

    Returns
    -------
    phi : numpy.ndarray
        The chosen sample of ``phi`` (K x V), rows reordered to match ``true_phi``.
    distance : float
        Mean Hellinger distance between matched topics.

    Raises
    ------
    ValueError
        If the fit holds no saved ``phi``, or the shapes disagree.
    """
    phi = fit.samples.get("phi")
    if phi is None or phi.ndim != 3 or len(fit.log_joint) != phi.shape[0]:
        raise ValueError("the fit holds no saved samples of phi (S x K x V) with their log joint")
    best = phi[int(np.argmax(fit.log_joint))]
    match = align_topics(best, true_phi)
    return best[match.estimated_topics], float(match.distances.mean())
