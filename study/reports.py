"""Score tables and figures of a case study: every saved fit scored against the true counts.

Chains are the statistical unit: a fit of several chains (``n_chains``) gives one row per
chain (column ``chain``) with the fit's worst R-hat beside it (``rhat``), so the spread a
table shows is over chains x privatized copies.

The report notebooks are narrative over three calls: score the saved fits of a case study
into a table (:func:`score_topic_fits`, :func:`score_community_fits`), write it
(:func:`write_table`) and draw it (:func:`plot_scores`). The scores of one fit are the
library's (:mod:`lpp.evaluation`); this module tabulates and draws them for the compendium.
The pipeline scores each topic fit in a stage of its own (:mod:`study.topic_scores`, from
:func:`fit_score_rows`) and its report gathers the rows (:func:`score_frame`): the same table.

A report scores the fits that the current settings name (:func:`named_fits`), not every
folder it finds: DVC never deletes the outputs of a stage that ``params.yaml`` no longer
names, so the fits of an earlier run (another corpus, a dropped level or method) stay in the
folder, and scored against the current true counts they would be wrong rows with no warning.
A named fit that is missing is an error; a folder that no setting names is left out and
reported (:func:`left_out_message`).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from lpp.evaluation import (NONPRIVATE, ORACLE, REFERENCES, ZEROS, community_references,
                            community_scores, heldout_used, topic_references, topic_scores)
from lpp.formats.fits import load_fit
from lpp.formats.files import atomic_write_bytes
from lpp.metrics import ReferenceCorpus
from study.figures import (method_label, method_palette, method_style, n_chains, save_figure,
                           spread_note)
from study.score_tables import is_unmasked

FIT_FILE = "fit.json"
#: the last columns of a score table: which chain of its fit a row scores (0 for a one-chain
#: fit, empty on reference rows), and the fit's worst R-hat over its label-invariant
#: quantities (:func:`lpp.diagnostics.worst_rhat`; NaN for a fit of one chain)
CHAIN_COLUMNS = ("chain", "rhat")
#: the figures' measure of the unmasked fits: their MAE, over every off-diagonal entry
UNMASKED_MAE = "unmasked_mae"
#: axis labels of the measures in the figures
MEASURE_LABELS = {"mae": "MAE", "offdiag_mae": "MAE, all off-diagonal entries",
                  UNMASKED_MAE: "MAE, unmasked runs (all off-diagonal)",
                  "heldout_mae": "held-out MAE", "heldout_loglik": "held-out log-lik per entry",
                  "loglik": "predictive log-lik per entry", "npmi": "NPMI (never = -1)",
                  "npmi_zero": "NPMI (never = 0)", "coherence": "coherence"}


#: the case studies: the folders of their fits under ``results/fits/``, and of their reports
STUDIES = ("topics", "network", "network_rows_cols")
#: the settings (``section.key`` of params.yaml) that name each study's fits (:func:`named_fits`):
#: a report stage declares them in dvc.yaml, so that DVC reruns it when they change, except
#: ``privacy.levels`` (tests/test_pipeline.py: only privatize may declare a privacy setting)
FIT_SETTINGS = {
    "topics": ("privacy.levels", "topics.methods", "topics.replicates", "vi_topics.methods",
               "vi_topics.replicates"),
    "network": ("privacy.levels", "network.methods", "network.replicates", "network.C",
                "network.unmasked_C"),
    "network_rows_cols": ("privacy.levels", "network.methods", "network.replicates",
                          "network.rows_cols_C"),
}
#: how many missing fits an error lists by name
_LISTED = 5


def _path_text(value) -> str:
    """A setting as DVC writes it into a stage's paths (``${item.level}``: ``str``, booleans in
    lower case), e.g. 1.0 -> ``1.0``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _values(settings: dict, key: str) -> list:
    """The list setting ``key`` (``section.name``) of ``settings``."""
    section, _, name = key.partition(".")
    values = (settings.get(section) or {}).get(name)
    if not isinstance(values, list):
        raise KeyError(f"the settings have no list {key} (found {values!r}): it names fits "
                       "of the pipeline's stages")
    return values


def named_fits(settings: dict, study: str) -> dict[str, str]:
    """The fit folders that the stages of ``study`` write under ``results/fits/<study>/`` for
    ``settings``: the fits a report of the study scores.

    The names are those of dvc.yaml's stages (tests/test_pipeline.py checks that the two
    agree), each level, copy and C written as DVC writes it into a path (``eps1.0``):

    * ``topics``: ``<method>_eps<level>_rep<copy>`` of ``infer_private_topics``
      (``topics.methods`` x ``privacy.levels`` x ``topics.replicates``) and of
      ``infer_vi_topics`` (``vi_topics.methods`` x ``privacy.levels`` x
      ``vi_topics.replicates``), and ``nonprivate`` (``infer_nonprivate_topics``);
    * ``network``: ``<method>_C<C>_eps<level>_rep<copy>`` of ``infer_private_network``
      (``network.methods`` x ``privacy.levels`` x ``network.replicates`` x ``network.C``),
      the same with ``_unmasked`` appended for ``network.unmasked_C``
      (``infer_private_network_unmasked``), and ``nonprivate_C<C>`` (and
      ``nonprivate_C<C>_unmasked``) of the non-private stages;
    * ``network_rows_cols``: ``<method>_C<C>_eps<level>_rep<copy>`` and ``nonprivate_C<C>``
      for ``network.rows_cols_C``.

    Parameters
    ----------
    settings : dict
        The pipeline's settings (``params.yaml`` read with ``yaml.safe_load``); the keys of
        :data:`FIT_SETTINGS` are read.
    study : str
        One of :data:`STUDIES`.

    Returns
    -------
    dict
        {fit folder name: the stage that writes it and the settings that name it}, in name
        order (the order of a score table's rows).

    Raises
    ------
    ValueError
        If ``study`` is not one of :data:`STUDIES`.
    KeyError
        If a setting of :data:`FIT_SETTINGS` is missing or not a list.
    """
    if study not in STUDIES:
        raise ValueError(f"unknown study {study!r}: one of {', '.join(STUDIES)}")
    levels = _values(settings, "privacy.levels")
    fits = {}

    def private(stage, methods, replicates, components=None, suffix=""):
        for method in _values(settings, methods):
            for level in levels:
                for rep in _values(settings, replicates):
                    for c in ([None] if components is None else _values(settings, components)):
                        part = "" if c is None else f"_C{_path_text(c)}"
                        name = (f"{_path_text(method)}{part}_eps{_path_text(level)}"
                                f"_rep{_path_text(rep)}{suffix}")
                        fits[name] = (f"stage {stage}: {methods} {method}, privacy.levels "
                                      f"{level}, {replicates} {rep}"
                                      + ("" if c is None else f", {components} {c}"))

    def nonprivate(stage, components, suffix=""):
        for c in _values(settings, components):
            fits[f"nonprivate_C{_path_text(c)}{suffix}"] = f"stage {stage}: {components} {c}"

    if study == "topics":
        private("infer_private_topics", "topics.methods", "topics.replicates")
        private("infer_vi_topics", "vi_topics.methods", "vi_topics.replicates")
        fits["nonprivate"] = "stage infer_nonprivate_topics (always run)"
    elif study == "network":
        private("infer_private_network", "network.methods", "network.replicates", "network.C")
        private("infer_private_network_unmasked", "network.methods", "network.replicates",
                "network.unmasked_C", suffix="_unmasked")
        nonprivate("infer_nonprivate_network", "network.C")
        nonprivate("infer_nonprivate_network_unmasked", "network.unmasked_C", suffix="_unmasked")
    else:
        private("infer_private_network_rows_cols", "network.methods", "network.replicates",
                "network.rows_cols_C")
        nonprivate("infer_nonprivate_network_rows_cols", "network.rows_cols_C")
    return dict(sorted(fits.items()))


def _saved_fits(fits_dir) -> list[Path]:
    """The folders directly under ``fits_dir`` that hold a ``fit.json``, sorted."""
    return sorted(p.parent for p in Path(fits_dir).glob(f"*/{FIT_FILE}"))


def fit_dirs(fits_dir, names=None) -> list[Path]:
    """The fit directories directly under ``fits_dir`` (those holding a ``fit.json``), sorted;
    with ``names``, those named only.

    Parameters
    ----------
    fits_dir : path-like
        A folder of fit directories.
    names : iterable of str or mapping, optional
        The fits wanted, by folder name (:func:`named_fits`: a mapping whose values say which
        stage and settings make each fit, for the error). None: every fit under ``fits_dir``.

    Raises
    ------
    FileNotFoundError
        If ``fits_dir`` holds no fit, or a named fit is not there (the error names the
        folder and, with a mapping, the stage and settings that name it).
    """
    found = _saved_fits(fits_dir)
    if names is not None:
        present = {p.name for p in found}
        missing = [name for name in names if name not in present]
        if missing:
            shown = [f"  {Path(fits_dir) / name}"
                     + (f" ({names[name]})" if isinstance(names, Mapping) else "")
                     for name in missing[:_LISTED]]
            if len(missing) > _LISTED:
                shown.append(f"  and {len(missing) - _LISTED} more")
            raise FileNotFoundError(
                f"{len(missing)} fit(s) that the settings name are not under {fits_dir} (no "
                f"{FIT_FILE}):\n" + "\n".join(shown) + "\nrun their stages (dvc repro), or "
                "take them out of the settings (params.yaml)")
        wanted = set(names)
        found = [p for p in found if p.name in wanted]
    if not found:
        raise FileNotFoundError(f"no fit (*/{FIT_FILE}) under {fits_dir}")
    return found


def unnamed_fit_dirs(fits_dir, names) -> list[Path]:
    """The fit directories under ``fits_dir`` that ``names`` does not name, sorted: an earlier
    run's, which a report leaves out (:func:`fit_dirs`)."""
    wanted = set(names)
    return [p for p in _saved_fits(fits_dir) if p.name not in wanted]


def left_out_message(table: pd.DataFrame) -> str | None:
    """A line naming the fit folders that a score table left out (``table.attrs["left_out"]``,
    :func:`score_topic_fits`, :func:`score_community_fits`), or None when it left none out."""
    left_out = table.attrs.get("left_out") or []
    if not left_out:
        return None
    return (f"left out of the table, {len(left_out)} fit folder(s) not named by params.yaml: "
            "an earlier run's; delete them or add them back to the settings: "
            + ", ".join(left_out))


def _score_table(fits_dir, score, columns, references=(), names=None) -> pd.DataFrame:
    """One row per chain of each fit (those of ``names`` only, when given: :func:`fit_dirs`):
    its name, method, ``columns(fit.metadata)``, ``score(chain)``, then :data:`CHAIN_COLUMNS`; then
    the ``references`` rows (columns they lack are NaN).

    The run time of each fit (all its chains) is kept in ``table.attrs["seconds"]`` rather
    than in a column: it varies between runs, and the table must repeat to the byte. The
    names of the fit folders left out (not in ``names``) are in ``table.attrs["left_out"]``.
    """
    rows, seconds = [], {}
    scored = fit_dirs(fits_dir, names)
    left_out = [] if names is None else [p.name for p in unnamed_fit_dirs(fits_dir, names)]
    for fit_dir in tqdm(scored, desc="scoring fits", unit="fit", leave=False):
        fit = load_fit(fit_dir)
        rows.extend(fit_score_rows(fit, fit_dir.name, score, columns))
        seconds[fit_dir.name] = fit.metadata.seconds_total
    table = score_frame(rows, references)
    table.attrs["seconds"] = seconds
    table.attrs["left_out"] = left_out
    return table


def fit_score_rows(fit, name: str, score, columns) -> list[dict]:
    """The rows of one fit in a score table (:func:`_score_table`): one per chain, its
    ``name`` (the fit's folder), method, ``columns(fit.metadata)``, ``score(chain)``, then
    :data:`CHAIN_COLUMNS`."""
    rhat = fit.metadata.rhat_max if fit.n_chains > 1 else np.nan
    return [{"fit": name, "method": chain.method, **columns(fit.metadata), **score(chain),
             "chain": c, "rhat": rhat} for c, chain in enumerate(fit.chains)]


def score_frame(rows, references=()) -> pd.DataFrame:
    """A score table of the fits' ``rows`` (:func:`fit_score_rows`, in table order) and the
    ``references`` rows after them (columns they lack are NaN), its columns those of the
    first row."""
    rows = list(rows)
    if not rows:
        raise ValueError("a score table needs at least one fit's rows")
    table = pd.DataFrame(rows + list(references), columns=list(rows[0]))
    table["chain"] = table["chain"].astype("Int64")  # whole numbers; empty on reference rows
    return table


def topic_score(true_counts, *, n_top: int = 10):
    """``(score, columns)`` of a topic fit's rows (:func:`fit_score_rows`): each chain's
    :func:`topic_scores` against ``true_counts`` (one reference corpus built for them all), and
    the privacy level of the fit's data."""
    reference = ReferenceCorpus(true_counts)
    return (lambda chain: topic_scores(chain, true_counts, reference=reference, n_top=n_top),
            lambda meta: {"epsilon_over_n": meta.epsilon_over_n})


def score_topic_fits(fits_dir, true_counts, *, n_top: int = 10,
                     true_rates=None, names=None) -> pd.DataFrame:
    """Score the topic-model fits under ``fits_dir`` against the true counts: those of
    ``names``, or every fit.

    Parameters
    ----------
    fits_dir : path-like
        A folder of fit directories (``lpp.formats.fits`` format), one per method, level and replicate.
    true_counts : array_like or scipy sparse matrix
        The true document-by-word counts (D x V) the private data were made from.
    n_top : int, optional
        Top words per topic for NPMI and coherence.
    true_rates : array_like, optional
        The rates behind the counts, where known: the oracle row (NaN otherwise).
    names : iterable of str or mapping, optional
        The fits to score, by folder name: those the settings name
        (``named_fits(settings, "topics")``). Every other fit folder is left out, its name in
        ``table.attrs["left_out"]`` (:func:`left_out_message`). None: every fit.

    Returns
    -------
    pandas.DataFrame
        Columns ``fit``, ``method``, ``epsilon_over_n`` (None for the non-private fit),
        those of :func:`topic_scores`, then ``chain`` and ``rhat`` (:data:`CHAIN_COLUMNS`);
        one row per chain of each fit, fits in name order, then the reference rows of
        :func:`topic_references`.

    Raises
    ------
    FileNotFoundError
        If ``fits_dir`` holds no fit, or a fit of ``names`` is not there.
    ValueError
        If a fit does not match the counts (see :func:`topic_scores`).
    """
    score, columns = topic_score(true_counts, n_top=n_top)
    return _score_table(fits_dir, score, columns, topic_references(true_counts, true_rates),
                        names)


def score_community_fits(fits_dir, true_counts, heldout=None, *,
                         true_rates=None, names=None) -> pd.DataFrame:
    """Score the community-model fits under ``fits_dir`` against the true counts: those of
    ``names``, or every fit.

    Parameters
    ----------
    fits_dir : path-like
        A folder of fit directories (``lpp.formats.fits`` format).
    true_counts : array_like or scipy sparse matrix
        The true actor-by-actor counts (square).
    heldout : array_like of bool, optional
        True = held out of inference; adds the ``heldout_mae`` and ``heldout_loglik`` columns.
    true_rates : array_like, optional
        The rates behind the counts, where known: the oracle row (NaN otherwise).
    names : iterable of str or mapping, optional
        The fits to score, by folder name: those the settings name
        (``named_fits(settings, "network")``, or ``"network_rows_cols"``). Every other fit
        folder is left out, its name in ``table.attrs["left_out"]``
        (:func:`left_out_message`). None: every fit.

    Returns
    -------
    pandas.DataFrame
        Columns ``fit``, ``method``, ``C`` (communities), ``epsilon_over_n``,
        ``heldout_used`` (the design: False for a fit of every entry, empty for the
        references), those of :func:`community_scores`, then ``chain`` and ``rhat``
        (:data:`CHAIN_COLUMNS`); one row per chain of each fit, fits in name order, then the
        reference rows of :func:`community_references`.

    Raises
    ------
    FileNotFoundError
        If ``fits_dir`` holds no fit, or a fit of ``names`` is not there.
    ValueError
        If a fit does not match the counts (see :func:`community_scores`).
    """
    y = true_counts.toarray() if hasattr(true_counts, "toarray") else np.asarray(true_counts)
    return _score_table(
        fits_dir, lambda fit: community_scores(fit, y, heldout),
        lambda meta: {"C": meta.model["n_components"], "epsilon_over_n": meta.epsilon_over_n,
                      "heldout_used": meta.heldout_used},
        community_references(y, heldout, true_rates), names)


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


#: how each reference row is drawn in the figures: (legend label, colour, line style), from
#: the one home of every method's name and colour (study.figures.METHOD_STYLES)
REFERENCE_STYLES = {ref: (method_style(ref).label, method_style(ref).colour,
                          method_style(ref).linestyle) for ref in (NONPRIVATE, ZEROS, ORACLE)}


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


def _spread(private: pd.DataFrame, by: str | None) -> str:
    """What the error bars of :func:`plot_scores` span: every chain of every privatized copy
    of a cell (a cell: method, level and ``by`` value; the unmasked fits are cells of their
    own)."""
    cells = ["method", "epsilon_over_n"] + ([by] if by is not None else [])
    runs = private[~is_unmasked(private)] if "heldout_used" in private else private
    if runs.empty:
        runs = private
    chains = n_chains(runs)
    per_cell = runs.groupby(cells, dropna=False).size() // chains
    note = spread_note((max(1, per_cell.min()), max(1, per_cell.max())), chains)
    return f"bars: {note}" if note.startswith("±") else note


def plot_scores(table: pd.DataFrame, measures, *, by: str | None = None, figure=None,
                labels: dict | None = None, title: str | None = None):
    """Each private method's score against the privacy level, the references as lines.

    One panel per measure (and per value of ``by``, e.g. ``"C"``: then one row of panels per
    measure, one column per value): the private methods' mean ± sd over replicates and
    chains (every row counts) at each ``epsilon_over_n`` (most private level on the right);
    the non-private fit (the mean of its chains, with a band of ± 1 sd when it has several)
    and the reference rows (all zeros, oracle) as horizontal lines, those with a missing or
    infinite value left out. Fits of every entry (a
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
    # every figure names and colours a method alike (study.figures.METHOD_STYLES); with
    # unmasked fits a panel holds only the rows that have its measure
    palette = method_palette(private.method.unique())
    private = private.assign(method=private.method.map(method_label))
    hues = list(palette)
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
        # a reference fitted several times (nonprivate_chains) is its mean, with a band of
        # ± 1 sd over its chains
        for method, values in lines.groupby("method", sort=False)[measure]:
            values = values[np.isfinite(values)]
            if values.empty:
                continue
            label, colour, style = REFERENCE_STYLES[method]
            ax.axhline(values.mean(), color=colour, ls=style, label=label)
            if len(values) > 1:
                sd = values.std(ddof=1)
                ax.axhspan(values.mean() - sd, values.mean() + sd, color=colour, alpha=0.15,
                           lw=0)
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
    # what an error bar spans, as the legend's last entry (an invisible handle)
    legend[_spread(private, by)] = plt.Line2D([], [], ls="none")
    fig.legend(list(legend.values()), list(legend), loc="upper center", ncol=len(legend),
               frameon=False, bbox_to_anchor=anchor)
    # panel titles need a little more room under the legend
    fig.tight_layout(rect=(0, 0, 1, top))
    if figure is not None:
        save_figure(fig, figure, dpi=100)
    return fig
