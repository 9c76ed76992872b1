"""Scores of a fit against the true counts: the paper's measures for each case study.

These read the true counts, so only evaluation stages call them — never an inference stage.

* topics (Sec. 5.1): reconstruction MAE of ``mu_hat`` over all entries; NPMI (under both
  conventions for a pair of top words that never co-occur: -1, NPMI's floor, and 0, as in
  Lau et al.'s toolkit) and Mimno coherence of each topic's top words with the true counts
  as reference corpus, averaged over topics for each saved sample of ``phi``, then over
  samples; the Poisson predictive log-likelihood of the true counts;
* communities (Sec. 5.2): reconstruction MAE over the *observed* off-diagonal entries (the
  paper's measure: the entries inference saw; the diagonal is never modelled), MAE over all
  off-diagonal entries, and, on the held-out entries alone, MAE and the Poisson predictive
  log-likelihood (link prediction). A fit that ignored the held-out mask (its ``fit.json``
  records ``heldout_used: false``; the arXiv version of the paper measures reconstruction on
  such separate runs) observed every entry: its MAE is over every off-diagonal entry and it
  has no held-out scores. The table's ``heldout_used`` column tells the two designs apart.

MAE rewards shrinkage on sparse counts, so every table also holds reference rows
(:func:`topic_references`, :func:`community_references`): predicting zero everywhere, and
the oracle that predicts the true rates where they are known (simulated data; real data have
none, and their oracle row is NaN). The predictive log-likelihood is a proper score and
cannot be gamed that way: a rate of zero has log-likelihood ``-inf`` at any positive count.

The report notebooks are narrative over three calls: score every saved fit of a case study
into a table (:func:`score_topic_fits`, :func:`score_community_fits`), write it
(:func:`write_table`) and draw it (:func:`plot_scores`). The synthetic topic experiment picks
and aligns its topics with :func:`best_aligned_topics`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from lpp.figures import save_figure
from lpp.fits import load_fit
from lpp.io import atomic_write_bytes
from lpp.score_tables import is_unmasked
from lpp.metrics import (ReferenceCorpus, align_topics, mae, mean_over_topics, mimno_coherence,
                         network_masks, npmi, predictive_log_likelihood, top_words, zeros_mae)
from lpp.metrics.predictive import pointwise_predictive_log_likelihood

#: rows of a score table that are references, not fits of a private method
NONPRIVATE = "nonprivate"
ZEROS = "zeros"
ORACLE = "oracle"
REFERENCES = (NONPRIVATE, ZEROS, ORACLE)
# rows of rates formed at a time for the predictive log-likelihood of a factorised model:
# a 10,000 x 10,000 rate matrix is 800 MB, a block of rows a few MB
_ROW_BLOCK = 256


def _model_of(fit):
    from lpp.inference import make_model

    params = dict(fit.meta["model"])
    return make_model(params.pop("model"), **params)


def _factor_rates(model, state, rows) -> np.ndarray:
    # the fixed-order product the models use, so the score repeats to the bit on any thread count
    from lpp.inference.models._kernels import product_kernel

    theta, phi = model.row_column_factors(state)
    return product_kernel(np.ascontiguousarray(theta[rows]), phi)


def fit_predictive_log_likelihood(fit, true_counts, mask=None) -> float:
    """Mean Poisson predictive log-likelihood of the true counts under a fit's saved samples.

    The rates of each saved sample are rebuilt from its latents (``model.rate``) a block of
    rows at a time, so a paper-scale topic model never holds a full rate matrix per sample.

    Parameters
    ----------
    fit : lpp.fits.SavedFit
        A fit that saved its latents (``fit.samples``) and names its model in ``fit.meta``.
    true_counts : array_like or scipy sparse matrix
        The true counts (2-d, the fit's shape).
    mask : array_like of bool, optional
        True marks the scored entries; None scores every entry.

    Returns
    -------
    float
        ``mean over scored entries of log((1/S) sum_s Pois(y; mu_s))`` (higher is better).

    Raises
    ------
    ValueError
        If the fit saved no latents, or shapes disagree (see
        :func:`lpp.metrics.predictive_log_likelihood`).
    """
    latents = {name: draws for name, draws in fit.samples.items() if name != "y"}
    if not latents or "model" not in fit.meta.get("model", {}):
        raise ValueError("the fit saved no latents of a known model: its rates are unknown")
    model = _model_of(fit)
    shape = tuple(fit.mu_hat.shape)
    n_saved = next(iter(latents.values())).shape[0]
    if "row_column_factors" not in model.capabilities:
        states = ({k: v[s] for k, v in latents.items()} for s in range(n_saved))
        return predictive_log_likelihood((model.rate(st) for st in states), true_counts, mask)
    y = true_counts.tocsr() if hasattr(true_counts, "tocsr") else np.asarray(true_counts)
    if tuple(y.shape) != shape:
        raise ValueError(f"the counts have shape {y.shape}, the fit {shape}")
    held = None if mask is None else np.asarray(mask, dtype=bool)
    total, count = 0.0, 0
    for start in range(0, shape[0], _ROW_BLOCK):
        rows = slice(start, min(start + _ROW_BLOCK, shape[0]))
        block_mask = None if held is None else held[rows]
        if block_mask is not None and not block_mask.any():
            continue
        rates = (_factor_rates(model, {k: v[s] for k, v in latents.items()}, rows)
                 for s in range(n_saved))
        values = pointwise_predictive_log_likelihood(rates, y[rows], block_mask)
        total += float(values.sum())
        count += values.size
    if count == 0:
        raise ValueError("mask selects no entries; nothing to score")
    return total / count


def topic_scores(fit, true_counts, *, reference: ReferenceCorpus | None = None,
                 n_top: int = 10) -> dict:
    """MAE, NPMI (both conventions), coherence and predictive log-likelihood of a topic fit.

    ``npmi`` scores a pair of top words that never co-occur in the reference corpus -1
    (NPMI's floor), ``npmi_zero`` scores it 0 (Lau et al.'s toolkit); both average over
    topics per saved sample of ``phi`` (S x K x V), then over samples, as the paper does.
    ``loglik`` is :func:`fit_predictive_log_likelihood` of the true counts (every entry).
    """
    phi = fit.samples.get("phi")
    if phi is None or phi.ndim != 3:
        raise ValueError("the fit holds no saved samples of phi (S x K x V)")
    if fit.mu_hat.shape != tuple(true_counts.shape):
        raise ValueError(f"mu_hat has shape {fit.mu_hat.shape}, the counts {true_counts.shape}")
    reference = reference if reference is not None else ReferenceCorpus(true_counts)
    tops = [top_words(p, n_top) for p in phi]
    npmi_per_sample = [mean_over_topics(npmi(t, reference)) for t in tops]
    npmi_zero_per_sample = [mean_over_topics(npmi(t, reference, no_cooccurrence=0.0))
                            for t in tops]
    coherence_per_sample = [mean_over_topics(mimno_coherence(t, reference)) for t in tops]
    return {"mae": mae(fit.mu_hat, true_counts),
            "npmi": float(np.mean(npmi_per_sample)),
            "npmi_zero": float(np.mean(npmi_zero_per_sample)),
            "coherence": float(np.mean(coherence_per_sample)),
            "loglik": fit_predictive_log_likelihood(fit, true_counts),
            "n_samples": int(phi.shape[0])}


def heldout_used(fit) -> bool:
    """Whether a fit was run with the data's held-out mask (the masked design).

    The inference notebooks record it as ``heldout_used`` in the fit's ``extra``; a fit that
    does not record it predates the unmasked design and was masked.

    Parameters
    ----------
    fit : lpp.fits.SavedFit
        A saved fit (its ``meta``).

    Returns
    -------
    bool
        False for a fit of every entry (the arXiv design's reconstruction runs).
    """
    return bool(fit.meta.get("extra", {}).get("heldout_used", True))


def community_scores(fit, true_counts, heldout: np.ndarray | None) -> dict:
    """A network fit's reconstruction and link-prediction scores.

    ``mae``: MAE over the observed off-diagonal entries (those inference saw: the paper's
    reconstruction error); ``offdiag_mae``: over every off-diagonal entry, held-out ones
    included; and when entries were held out, ``heldout_mae`` and ``heldout_loglik`` (mean
    Poisson predictive log-likelihood, :func:`fit_predictive_log_likelihood`) over them.

    A fit that ignored the mask (:func:`heldout_used` false) saw every entry: its ``mae`` is
    over every off-diagonal entry (equal to ``offdiag_mae``) and, when ``heldout`` marks
    entries, its ``heldout_mae`` and ``heldout_loglik`` are NaN (it was trained on them, so
    they measure no prediction).
    """
    shape = tuple(true_counts.shape)
    if fit.mu_hat.shape != shape or shape[0] != shape[1]:
        raise ValueError(f"mu_hat {fit.mu_hat.shape} and counts {shape} must be the same square shape")
    masks = network_masks(shape, None if heldout is None else np.asarray(heldout, dtype=bool))
    if not heldout_used(fit):
        value = mae(fit.mu_hat, true_counts, masks["off_diagonal"])
        scores = {"mae": value, "offdiag_mae": value}
        if masks["heldout"].any():
            scores.update(heldout_mae=np.nan, heldout_loglik=np.nan)
        return scores
    scores = {"mae": mae(fit.mu_hat, true_counts, masks["observed"]),
              "offdiag_mae": mae(fit.mu_hat, true_counts, masks["off_diagonal"])}
    if masks["heldout"].any():
        scores["heldout_mae"] = mae(fit.mu_hat, true_counts, masks["heldout"])
        scores["heldout_loglik"] = fit_predictive_log_likelihood(fit, true_counts,
                                                                 masks["heldout"])
    return scores


def _poisson_loglik(rates, y, mask=None) -> float:
    """Mean Poisson log-likelihood of fixed rates (one "sample"): ``-inf`` where a rate of 0
    meets a positive count, as for a fit."""
    return predictive_log_likelihood(np.asarray(rates, dtype=np.float64)[None], y, mask)


def topic_references(true_counts, true_rates=None) -> list[dict]:
    """The reference rows of a topic score table: predict zero, and the oracle.

    Parameters
    ----------
    true_counts : array_like or scipy sparse matrix
        The true D x V counts.
    true_rates : array_like, optional
        The rates the counts were drawn from, where known (simulated data). Real data have
        none: the oracle row is then NaN, never estimated.

    Returns
    -------
    list of dict
        Rows ``zeros`` and ``oracle`` with ``mae`` and ``loglik`` (the other columns NaN).
    """
    y = true_counts
    zero = np.zeros(y.shape)
    rows = [{"fit": ZEROS, "method": ZEROS, "mae": zeros_mae(y),
             "loglik": _poisson_loglik(zero, y)}]
    if true_rates is None:
        rows.append({"fit": ORACLE, "method": ORACLE, "mae": np.nan, "loglik": np.nan})
    else:
        rows.append({"fit": ORACLE, "method": ORACLE, "mae": mae(true_rates, y),
                     "loglik": _poisson_loglik(true_rates, y)})
    return rows


def community_references(true_counts, heldout=None, true_rates=None) -> list[dict]:
    """The reference rows of a network score table: predict zero, and the oracle.

    Scored on the same entries as :func:`community_scores` (observed, all off-diagonal,
    held-out). Parameters as :func:`topic_references`, with ``heldout`` the held-out mask.

    Returns
    -------
    list of dict
        Rows ``zeros`` and ``oracle`` (NaN when ``true_rates`` is None).
    """
    y = np.asarray(true_counts.toarray() if hasattr(true_counts, "toarray") else true_counts)
    masks = network_masks(y.shape, None if heldout is None else np.asarray(heldout, dtype=bool))

    def row(name, rates):
        if rates is None:
            values = {"mae": np.nan, "offdiag_mae": np.nan}
            if masks["heldout"].any():
                values.update(heldout_mae=np.nan, heldout_loglik=np.nan)
            return {"fit": name, "method": name, **values}
        values = {"mae": mae(rates, y, masks["observed"]),
                  "offdiag_mae": mae(rates, y, masks["off_diagonal"])}
        if masks["heldout"].any():
            values["heldout_mae"] = mae(rates, y, masks["heldout"])
            values["heldout_loglik"] = _poisson_loglik(rates, y, masks["heldout"])
        return {"fit": name, "method": name, **values}

    return [row(ZEROS, np.zeros(y.shape)),
            row(ORACLE, None if true_rates is None else np.asarray(true_rates, dtype=float))]


# ---------------------------------------------------------------- every fit of a case study

FIT_FILE = "fit.json"
#: the figures' measure of the unmasked fits: their MAE, over every off-diagonal entry
UNMASKED_MAE = "unmasked_mae"
#: axis labels of the measures in the figures
MEASURE_LABELS = {"mae": "MAE", "offdiag_mae": "MAE, all off-diagonal entries",
                  UNMASKED_MAE: "MAE, unmasked runs (all off-diagonal)",
                  "heldout_mae": "held-out MAE", "heldout_loglik": "held-out log-lik per entry",
                  "loglik": "predictive log-lik per entry", "npmi": "NPMI (never = -1)",
                  "npmi_zero": "NPMI (never = 0)", "coherence": "coherence"}


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


def _score_table(fits_dir, score, columns, references=()) -> pd.DataFrame:
    """One row per fit: its name, method, ``columns(fit)`` and ``score(fit)``; then the
    ``references`` rows (columns they lack are NaN).

    The run time of each fit is kept in ``table.attrs["seconds"]`` rather than in a column:
    it varies between runs, and the table must repeat to the byte.
    """
    rows, seconds = [], {}
    for fit_dir in tqdm(fit_dirs(fits_dir), desc="scoring fits", unit="fit", leave=False):
        fit = load_fit(fit_dir)
        rows.append({"fit": fit_dir.name, "method": fit.method, **columns(fit), **score(fit)})
        seconds[fit_dir.name] = fit.meta["seconds_total"]
    table = pd.DataFrame(rows + list(references), columns=list(rows[0]))
    table.attrs["seconds"] = seconds
    return table


def score_topic_fits(fits_dir, true_counts, *, n_top: int = 10,
                     true_rates=None) -> pd.DataFrame:
    """Score every topic-model fit under ``fits_dir`` against the true counts.

    Parameters
    ----------
    fits_dir : path-like
        A folder of fit directories (``lpp.fits`` format), one per method, level and replicate.
    true_counts : array_like or scipy sparse matrix
        The true document-by-word counts (D x V) the private data were made from.
    n_top : int, optional
        Top words per topic for NPMI and coherence.
    true_rates : array_like, optional
        The rates behind the counts, where known: the oracle row (NaN otherwise).

    Returns
    -------
    pandas.DataFrame
        Columns ``fit``, ``method``, ``epsilon_over_n`` (None for the non-private fit) and
        those of :func:`topic_scores`; one row per fit in name order, then the reference
        rows of :func:`topic_references`.

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
        lambda fit: {"epsilon_over_n": fit.meta["extra"].get("epsilon_over_n")},
        topic_references(true_counts, true_rates))


def score_community_fits(fits_dir, true_counts, heldout=None, *,
                         true_rates=None) -> pd.DataFrame:
    """Score every community-model fit under ``fits_dir`` against the true counts.

    Parameters
    ----------
    fits_dir : path-like
        A folder of fit directories (``lpp.fits`` format).
    true_counts : array_like or scipy sparse matrix
        The true actor-by-actor counts (square).
    heldout : array_like of bool, optional
        True = held out of inference; adds the ``heldout_mae`` and ``heldout_loglik`` columns.
    true_rates : array_like, optional
        The rates behind the counts, where known: the oracle row (NaN otherwise).

    Returns
    -------
    pandas.DataFrame
        Columns ``fit``, ``method``, ``C`` (communities), ``epsilon_over_n``,
        ``heldout_used`` (the design: False for a fit of every entry, empty for the
        references) and those of :func:`community_scores`; one row per fit in name order,
        then the reference rows of :func:`community_references`.

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
                     "epsilon_over_n": fit.meta["extra"].get("epsilon_over_n"),
                     "heldout_used": heldout_used(fit)},
        community_references(y, heldout, true_rates))


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
    atomic_write_bytes(path, table.to_csv(index=False, float_format="%.6g").encode())
    return path


#: how each reference row is drawn in the figures: (legend label, colour, line style)
REFERENCE_STYLES = {NONPRIVATE: ("non-private", "grey", "--"),
                    ZEROS: ("all zeros", "black", ":"),
                    ORACLE: ("oracle (true rates)", "tab:green", "-.")}


def _split_designs(table: pd.DataFrame) -> pd.DataFrame:
    """The unmasked fits' MAE moved to a measure of its own (:data:`UNMASKED_MAE`).

    Their MAE is over other entries than the masked fits' (every off-diagonal entry, not
    the observed ones), so the figure shows it in a panel of its own, the methods in the
    same colours; the all-zeros and oracle references there are their MAE over the same
    entries.
    """
    unmasked = is_unmasked(table)
    if not unmasked.any():
        return table
    table = table.copy()
    table[UNMASKED_MAE] = np.where(unmasked, table["mae"], np.nan)
    references = table.method.isin((ZEROS, ORACLE))
    if "offdiag_mae" in table:
        table.loc[references, UNMASKED_MAE] = table.loc[references, "offdiag_mae"]
    table.loc[unmasked, [c for c in MEASURE_LABELS if c in table and c != UNMASKED_MAE]] = np.nan
    return table


def plot_scores(table: pd.DataFrame, measures, *, by: str | None = None, figure=None,
                labels: dict | None = None, title: str | None = None):
    """Each private method's score against the privacy level, the references as lines.

    One panel per measure (and per value of ``by``, e.g. ``"C"``: then one row of panels per
    measure, one column per value): the private methods'
    mean ± sd over replicates at each ``epsilon_over_n`` (most private level on the right);
    the non-private fit(s) and the reference rows (all zeros, oracle) as horizontal lines,
    those with a missing or infinite value left out. Fits of every entry (a
    ``heldout_used`` column that is False) get panels of their own, after those of
    ``"mae"``: their MAE over every off-diagonal entry (:data:`UNMASKED_MAE`), with their
    non-private fit and the references' MAE over the same entries as lines. A reference
    row whose ``by`` value is missing (it does not depend on it) is drawn in every panel. The legend is built from
    what the figure draws, so every method present gets an entry.

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
    labels : dict, optional
        Axis labels of the measures, overriding :data:`MEASURE_LABELS`.
    title : str, optional
        A figure title (e.g. the settings: profile, sweeps, copies).

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

    labels = {**MEASURE_LABELS, **(labels or {})}
    table = _split_designs(table)
    designs = UNMASKED_MAE in table
    if designs and "mae" in measures and UNMASKED_MAE not in measures:
        measures = list(measures)
        measures.insert(measures.index("mae") + 1, UNMASKED_MAE)
    measures = [m for m in measures if m in table]
    private = table[~table.method.isin(REFERENCES)]
    references = table[table.method.isin(REFERENCES)]
    # with unmasked fits a panel holds only the rows that have its measure: each method
    # keeps its colour in every panel
    hues = list(private.method.unique())
    palette = dict(zip(hues, sns.color_palette(n_colors=len(hues))))
    if not measures or private.empty:
        raise ValueError(f"nothing to plot: measures {measures}, {len(private)} private fits")
    groups = [None] if by is None else sorted(private[by].unique())
    panels = [(m, g) for m in measures for g in groups]
    # one row of panels, or with ``by`` one row per measure and one column per group
    n_rows, n_cols = (1, len(panels)) if by is None else (len(measures), len(groups))
    # at least 9 inches wide, so that a one-line legend of every method and reference fits
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(max(4 * n_cols, 9), 3.2 * n_rows + 0.3),
                             squeeze=False)
    for ax, (measure, group) in zip(axes.ravel(), panels):
        sub = private if group is None else private[private[by] == group]
        hue_style = {}
        if designs:
            sub = sub[sub[measure].notna()]
            present = [h for h in hues if (sub.method == h).any()]
            hue_style = {"hue_order": present, "palette": {h: palette[h] for h in present}}
        if not sub.empty:
            sns.pointplot(data=sub, x="epsilon_over_n", y=measure, hue="method", ax=ax,
                          order=sorted(sub.epsilon_over_n.unique(), reverse=True),
                          errorbar="sd", **hue_style)
        else:  # e.g. no unmasked fit for this C: an empty panel, no reference lines
            ax.text(0.5, 0.5, "not run", ha="center", va="center", transform=ax.transAxes)
            ax.set(xticks=[], yticks=[])
        lines = references if group is None else references[
            (references[by] == group) | references[by].isna()]
        if sub.empty:
            lines = lines.iloc[:0]
        for method, value in zip(lines.method, lines[measure]):
            if np.isfinite(value):
                label, colour, style = REFERENCE_STYLES[method]
                ax.axhline(value, color=colour, ls=style, label=label)
        if group is not None:
            ax.set(title=f"{by} = {group:g}" if isinstance(group, float) else f"{by} = {group}")
        ax.set(xlabel="ε / N  (privacy increases →)", ylabel=labels.get(measure, measure))
    # one entry per label, in order of appearance (a reference line may be drawn twice)
    legend = {}
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
        if ax.get_legend():
            ax.get_legend().remove()
    # room for the legend (and title) above the panels, in inches
    height = fig.get_figheight()
    top = 1 - (0.35 if by is None else 0.42) / height
    anchor = (0.5, 1.0)
    if title:
        fig.suptitle(title, y=1 - 0.02 / height, fontsize="medium")
        anchor, top = (0.5, 1 - 0.22 / height), top - 0.22 / height
    fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=len(legend),
               frameon=False, bbox_to_anchor=anchor)
    # panel titles need a little more room under the legend
    fig.tight_layout(rect=(0, 0, 1, top))
    if figure is not None:
        save_figure(fig, figure, dpi=100)
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
