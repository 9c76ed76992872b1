"""The topics as words: every fit's top words per topic, aligned across methods.

A score table says how well a method did; the topics themselves are what a reader of a topic
model looks at. :func:`topic_word_table` lists the top words of every topic of every fit in
a folder, each fit's topics matched one to one to the non-private fit's by the Hungarian
algorithm on the Hellinger distance (:func:`lpp.metrics.align_topics`), so that a row of
the table is the same topic across methods and privacy levels. :func:`plot_topic_words`
draws it as a grid: a row per topic, a column per method and level, each cell the topic's
top words, shaded by its distance to the non-private topic.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from lpp.formats.fits import load_fit
from lpp.metrics import align_topics, top_words
from study.figures import save_figure
from study.reports import fit_dirs

__all__ = ["REFERENCE_FIT", "mean_topics", "reference_mean_topics", "fit_word_rows",
           "topic_word_table", "plot_topic_words"]

#: the fit whose topics the others are aligned to (the non-private method's folder name)
REFERENCE_FIT = "nonprivate"
#: the columns of :func:`topic_word_table`
WORD_COLUMNS = ("fit", "method", "epsilon_over_n", "topic", "fitted_topic", "distance", "words")


def mean_topics(fit) -> np.ndarray:
    """The posterior mean topic-word distributions of a fit (K x V, rows summing to 1).

    Each saved sample's rows of ``phi`` are normalised before averaging: a topic's words
    are its distribution, whatever scale the sampler's factors carry.

    Parameters
    ----------
    fit : lpp.formats.fits.SavedFit
        A topic-model fit with saved samples of ``phi`` (S x K x V).

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        If the fit holds no samples of ``phi``, or a topic has no weight in some sample.
    """
    phi = fit.samples.get("phi")
    if phi is None or np.ndim(phi) != 3:
        raise ValueError("the fit holds no saved samples of phi (S x K x V): not a topic-model fit")
    phi = np.asarray(phi, dtype=np.float64)
    totals = phi.sum(axis=2, keepdims=True)
    if np.any(totals <= 0):
        raise ValueError("a topic of the fit has no weight in a saved sample of phi")
    return (phi / totals).mean(axis=0)


def topic_word_table(fits_dir, vocabulary, *, n_words: int = 10,
                     reference: str = REFERENCE_FIT, names=None) -> pd.DataFrame:
    """The top words of every topic of every fit under ``fits_dir``, aligned to ``reference``.

    Parameters
    ----------
    fits_dir : path-like
        A folder of topic-model fit directories (``lpp.formats.fits`` format), one of them named
        ``reference``; a fit of several chains is shown by its first chain.
    vocabulary : sequence of str
        The words, in the order of the fits' columns: the private folders' canonical order
        (``lpp.formats.privatized.canonical_counts(load_counts(...)).column_ids``).
    n_words : int
        Top words listed per topic.
    reference : str
        The fit whose topics number the rows (the non-private fit of the true counts).
    names : iterable of str or mapping, optional
        The fits to list (:func:`study.reports.named_fits`); None: every fit under
        ``fits_dir``. A fit folder of an earlier run is then never read.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`WORD_COLUMNS`: ``topic`` is the reference fit's topic number the row is
        matched to, ``fitted_topic`` the fit's own, ``distance`` the Hellinger distance
        between the two (0 for the reference itself), ``words`` the top words joined by
        spaces, highest weight first. The reference fit's rows come first, then the other
        fits in name order; within a fit, rows in reference topic order.

    Raises
    ------
    FileNotFoundError
        If ``fits_dir`` holds no fit, or none named ``reference``.
    ValueError
        If the fits' vocabulary size differs from ``vocabulary``'s, or a fit has another
        number of topics than the reference.
    """
    dirs = fit_dirs(fits_dir, names)
    names = [d.name for d in dirs]
    if reference not in names:
        raise FileNotFoundError(f"no fit named {reference!r} under {fits_dir} to align the "
                                f"topics to (found {', '.join(names)})")
    dirs.insert(0, dirs.pop(names.index(reference)))
    reference_topics = None
    rows = []
    for fit_dir in dirs:
        fit = load_fit(fit_dir)
        if reference_topics is None:
            reference_topics = reference_mean_topics(fit)
        try:
            rows.extend(fit_word_rows(fit, fit_dir.name, vocabulary, reference_topics,
                                      n_words=n_words, reference=reference))
        except ValueError as error:
            raise ValueError(f"{fit_dir}: {error}") from None
    return pd.DataFrame(rows, columns=list(WORD_COLUMNS))


def reference_mean_topics(fit) -> np.ndarray:
    """The topics the others are aligned to: the reference fit's first chain's
    :func:`mean_topics` (K x V); chains number their topics independently, so one chain's."""
    return mean_topics(fit.chains[0])


def fit_word_rows(fit, name: str, vocabulary, reference_topics, *, n_words: int = 10,
                  reference: str = REFERENCE_FIT) -> list[dict]:
    """The rows of one fit in :func:`topic_word_table`: its first chain's topics matched to
    ``reference_topics`` (:func:`reference_mean_topics` of the reference fit), in reference
    topic order; ``name`` is the fit's folder, ``reference`` the reference fit's (for errors).

    Raises
    ------
    ValueError
        If the fit's vocabulary size differs from ``vocabulary``'s, or it has another number
        of topics than the reference (the message names no file: the caller adds the fit's).
    """
    vocabulary = np.asarray(list(vocabulary), dtype=object)
    # a fit of several chains shows its first: chains number their topics independently
    topics = mean_topics(fit.chains[0])
    if topics.shape[1] != len(vocabulary):
        raise ValueError(f"fitted to {topics.shape[1]} words; the vocabulary has "
                         f"{len(vocabulary)}")
    if topics.shape[0] != reference_topics.shape[0]:
        raise ValueError(f"{topics.shape[0]} topics; the reference fit {reference!r} has "
                         f"{reference_topics.shape[0]}: align fits of one number of topics")
    match = align_topics(topics, reference_topics)
    tops = top_words(topics, min(n_words, len(vocabulary)))
    return [{"fit": name, "method": fit.method, "epsilon_over_n": fit.metadata.epsilon_over_n,
             "topic": int(topic), "fitted_topic": int(fitted), "distance": float(distance),
             "words": " ".join(vocabulary[tops[fitted]])}
            for topic, fitted, distance in zip(match.true_topics, match.estimated_topics,
                                               match.distances)]


def _columns(table: pd.DataFrame) -> list[tuple[str, str]]:
    """(fit, column label) per column of the figure: the reference, then for each method (in
    order of appearance) and level (least private first) its first fit in name order."""
    first, *others = list(dict.fromkeys(table.fit))
    columns = [(first, f"{table.method[table.fit == first].iloc[0]}\n(reference)")]
    rest = table[table.fit.isin(others)].drop_duplicates("fit")
    for method in dict.fromkeys(rest.method):
        fits = rest[rest.method == method]
        levels = fits.epsilon_over_n.dropna().unique()
        for level in sorted(levels, reverse=True):
            fit = sorted(fits.fit[fits.epsilon_over_n == level])[0]
            columns.append((fit, f"{method}\nε/N = {level:g}"))
        for fit in sorted(fits.fit[fits.epsilon_over_n.isna()]):
            columns.append((fit, f"{method}\n{fit}"))
    return columns


def plot_topic_words(table: pd.DataFrame, *, n_show: int = 6, figure=None,
                     title: str | None = None):
    """The topics as a grid of words: a row per topic, a column per method and level.

    Each cell holds the topic's ``n_show`` top words (in two lines), shaded by the Hellinger
    distance to the reference topic of its row (white: the same distribution; dark: nothing
    in common). One column per method and privacy level shows the first fit of that level
    in name order (the first privatized copy), the reference fit first.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`topic_word_table`.
    n_show : int
        Words shown per cell (at most those in the table).
    figure : path-like, optional
        Where to save the figure as PNG (atomically, 100 dpi).
    title : str, optional
        The figure's title (e.g. the data set).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If the table is empty.
    """
    import matplotlib.pyplot as plt

    if table.empty:
        raise ValueError("no topic to draw: the table is empty")
    columns = _columns(table)
    topics = sorted(table.topic.unique())
    distance = np.full((len(topics), len(columns)), np.nan)
    cells = [[""] * len(columns) for _ in topics]
    for j, (fit, _) in enumerate(columns):
        for row in table[table.fit == fit].itertuples():
            i = topics.index(row.topic)
            words = row.words.split()[:n_show]
            half = (len(words) + 1) // 2
            cells[i][j] = " ".join(words[:half]) + "\n" + " ".join(words[half:])
            distance[i, j] = row.distance
    # at least 3 inches high, so that the colour bar's label fits beside a few topics
    fig, ax = plt.subplots(figsize=(1.9 * len(columns) + 1.6, max(0.42 * len(topics) + 1.6, 3)))
    image = ax.imshow(distance, cmap="Oranges", vmin=0, vmax=1, aspect="auto",
                      interpolation="nearest")
    for i, row in enumerate(cells):
        for j, text in enumerate(row):
            ax.text(j, i, text, ha="center", va="center", fontsize=6.5, linespacing=1.1)
    ax.set_xticks(range(len(columns)), [label for _, label in columns], fontsize="small")
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(topics)), [f"topic {t}" for t in topics], fontsize="small")
    ax.set_xticks(np.arange(len(columns) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(topics) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="both", length=0)
    fig.colorbar(image, ax=ax, fraction=0.02, pad=0.01,
                 label="Hellinger distance to\nthe reference topic")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    if figure is not None:
        save_figure(fig, figure, dpi=100)
    return fig
