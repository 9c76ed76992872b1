"""What every figure shows besides its data: the settings it was made with, one name and one
colour per method, what its error bars span, and an order of the actors that makes a block
structure visible.

A figure read out of context (in the README, a paper draft) must say which profile, how many
sweeps and how many privatized copies produced it; :func:`settings_caption` builds that line
in one place and :func:`caption_figure` writes it under a figure and saves it again.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lpp.formats.fits import META_FILE as FIT_FILE
from lpp.formats.fits import read_metadata
from lpp.formats.files import atomic_write_bytes

__all__ = ["current_profile", "settings_caption", "caption_figure", "save_figure",
           "community_order", "METHOD_STYLES", "MethodStyle", "method_style", "method_label",
           "method_colour", "method_palette", "n_chains", "spread_note", "CHAIN_COLOURS"]

#: height of the caption strip added under a figure, in inches
CAPTION_INCHES = 0.3


#: the params file whose ``profile`` key names the settings in force (the notebooks run from
#: the repository root)
PARAMS_FILE = "params.yaml"


def current_profile(params_file=PARAMS_FILE) -> str:
    """The name of the settings profile in force: ``params_file``'s top-level ``profile`` key.

    Parameters
    ----------
    params_file : path-like
        The pipeline's settings (``params.yaml``, relative to the working directory).

    Returns
    -------
    str
        E.g. ``"quick"`` or ``"paper"``.

    Raises
    ------
    ValueError
        If the file is missing or names no profile.
    """
    import yaml

    path = Path(params_file)
    if not path.is_file():
        raise ValueError(f"no {path} here ({Path.cwd()}): pass profile= or run from the "
                         "repository root")
    profile = (yaml.safe_load(path.read_text()) or {}).get("profile")
    if not isinstance(profile, str) or not profile:
        raise ValueError(f"{path} names no profile (a top-level 'profile: NAME' key)")
    return profile


def _fits_settings(fits_dir, names=None) -> dict:
    """:func:`schedule_settings` of the fits under ``fits_dir`` (those in ``names`` only, when
    given), read from their fit.json."""
    metas = [read_metadata(p) for p in sorted(Path(fits_dir).glob(f"*/{FIT_FILE}"))
             if names is None or p.parent.name in names]
    if not metas:
        raise FileNotFoundError(f"no fit (*/{FIT_FILE}) under {fits_dir}")
    return schedule_settings(metas)


def schedule_settings(metas) -> dict:
    """Sweeps of the MCMC fits, iterations of the variational ones and privatized copies of
    fits described by ``metas``: their records (:class:`lpp.formats.fits.FitMetadata`, or any
    object with its ``n_iter``, ``burn_in``, ``thin``, ``variational`` and ``data``)."""
    metas = list(metas)
    if not metas:
        raise ValueError("no fit's record to read the settings from")
    # the pipeline's variational fits record their method as ``vi_method`` (infer_vi): their
    # n_iter counts coordinate-ascent iterations to convergence, not sweeps of a chain
    variational = [m for m in metas if m.variational]
    chains = [m for m in metas if not m.variational]

    def values(found_in, key):
        found = sorted({getattr(m, key) for m in found_in})
        return found[0] if len(found) == 1 else "/".join(map(str, found))

    # a private fit's data folder names its copy (data/private/<study>/eps<level>_rep<copy>);
    # the non-private fits' folder (the true counts) names none
    copies = {Path(m.data).name.rpartition("_rep")[2]
              for m in metas if "_rep" in str(m.data or "")}
    settings = {}
    if chains:
        settings["sweeps"] = (f"{values(chains, 'n_iter')} (burn-in "
                              f"{values(chains, 'burn_in')}, thin {values(chains, 'thin')})")
    if variational:
        settings["VI iterations"] = values(variational, "n_iter")
    if copies:
        settings["copies"] = len(copies)
    return settings


def settings_caption(*, profile: str | None = None, fits_dir=None, fit_names=None,
                     fits=None, **settings) -> str:
    """One line naming the settings a figure was made with, for its title or caption.

    Parameters
    ----------
    profile : str, optional
        The settings profile (``quick``, ``paper``); by default the ``profile`` key of
        ``params.yaml`` in the working directory (:func:`current_profile`).
    fits_dir : path-like, optional
        A folder of saved fits (one per sub-folder): adds their sweeps (burn-in, thin) and the
        number of privatized copies, read from the fits themselves.
    fit_names : iterable of str, optional
        The fits of ``fits_dir`` to read (the report's :func:`study.reports.named_fits`);
        None: all of them.
    fits : iterable, optional
        Instead of ``fits_dir``, the fits' records themselves (:func:`schedule_settings`), e.g.
        those a score stage kept (:func:`study.topic_scores.schedules`).
    **settings
        Further ``name=value`` pairs, shown in order as ``name value`` (underscores become
        spaces; lists are joined by commas).

    Returns
    -------
    str
        E.g. ``"profile quick · sweeps 300 (burn-in 150, thin 15) · copies 3"``.

    Raises
    ------
    ValueError
        If no profile is given and ``params.yaml`` names none.
    FileNotFoundError
        If ``fits_dir`` holds no fit.
    """
    shown = {"profile": current_profile() if profile is None else str(profile)}
    if fits_dir is not None:
        shown.update(_fits_settings(fits_dir, fit_names))
    if fits is not None:
        shown.update(schedule_settings(fits))
    shown.update(settings)

    def text(value):
        if isinstance(value, (list, tuple)):
            return ", ".join(map(str, value))
        return str(value)

    return " · ".join(f"{name.replace('_', ' ')} {text(value)}" for name, value in shown.items())


def caption_figure(figure, caption: str, *, fig=None, dpi: int = 100):
    """Write ``caption`` as a line under a figure and save it again (PNG, atomically).

    Parameters
    ----------
    figure : path-like or None
        Where the figure is saved; None only draws the caption.
    caption : str
        The line, e.g. from :func:`settings_caption`.
    fig : matplotlib.figure.Figure, optional
        The figure; by default matplotlib's current one (so a notebook can caption the figure
        its cell just drew).
    dpi : int
        Resolution of the saved PNG.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``caption`` is not a string.
    """
    import matplotlib.pyplot as plt

    if not isinstance(caption, str):
        raise TypeError(f"caption must be a str; got {type(caption).__name__}")
    fig = plt.gcf() if fig is None else fig
    # a strip for the line under everything: the figure grows by CAPTION_INCHES and every
    # axes keeps its size and its place relative to the top (tick labels stay clear)
    height = fig.get_figheight()
    total = height + CAPTION_INCHES
    fig.set_figheight(total)
    for ax in fig.axes:
        box = ax.get_position()
        ax.set_position([box.x0, (CAPTION_INCHES + box.y0 * height) / total, box.width,
                         box.height * height / total])
    fig.text(0.5, 0.08 / total, caption, ha="center", va="bottom", fontsize="small",
             color="0.3")
    if figure is not None:
        save_figure(fig, figure, dpi=dpi)
    return fig


def save_figure(fig, path, *, dpi: int = 100) -> Path:
    """Save ``fig`` as PNG at ``path`` atomically (a reader never sees half a file).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : path-like
        The PNG file; its folder is created.
    dpi : int
        Resolution.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    atomic_write_bytes(path, buffer.getvalue())
    return path


def community_order(theta) -> np.ndarray:
    """An order of the actors that shows the block structure: by dominant community, then by
    the weight of that community (largest first).

    Parameters
    ----------
    theta : array_like
        Non-negative memberships, actors x communities (the TRUE ones, so every panel of a
        figure uses the same order).

    Returns
    -------
    numpy.ndarray of int64
        A permutation of the actors; index a matrix ``m[np.ix_(order, order)]``.

    Raises
    ------
    ValueError
        If ``theta`` is not a 2-d array of finite non-negative values.
    """
    theta = np.asarray(theta, dtype=np.float64)
    if theta.ndim != 2 or theta.shape[1] == 0:
        raise ValueError(f"theta must be actors x communities; got shape {theta.shape}")
    if not np.isfinite(theta).all() or (theta < 0).any():
        raise ValueError("theta must hold finite non-negative memberships")
    dominant = theta.argmax(axis=1)
    weight = theta[np.arange(theta.shape[0]), dominant]
    # lexsort: last key first; stable, so ties keep the actors' order
    return np.lexsort((-weight, dominant)).astype(np.int64)


# ---------------------------------------------------------------- one name and colour per method

@dataclass(frozen=True)
class MethodStyle:
    """How one method is drawn in every figure: its legend name, colour and marker."""

    label: str
    colour: str
    marker: str = "o"
    linestyle: str = "-"


#: every method's name and colour, keyed by the name the pipeline gives it (a fit's
#: ``method``, a VI fit's pipeline name, a central-model route). Every figure takes its names
#: and colours from here, so a method looks the same in all of them.
METHOD_STYLES = {
    "collapsed": MethodStyle("ours (collapsed)", "tab:blue"),
    "bessel": MethodStyle("ours (Bessel sampler)", "tab:cyan", "D"),
    "naive": MethodStyle("naive", "tab:orange", "s"),
    "nonprivate": MethodStyle("non-private", "0.35", "^", "--"),
    "collapsed_cavi": MethodStyle("collapsed CAVI", "tab:green", "o"),
    "paper_cavi": MethodStyle("Schofield et al. CAVI", "tab:red", "o"),
    "naive_cavi": MethodStyle("naive CAVI", "tab:brown", "s"),
    "vi_started": MethodStyle("VI-started MCMC", "tab:olive", "P"),
    # Foulds et al.'s central-model routes
    "laplace": MethodStyle("Laplace", "tab:purple"),
    "ops": MethodStyle("OPS", "goldenrod", "v"),
    "ops_M10": MethodStyle("OPS, M = 10", "goldenrod", "v"),
    "ops_M100": MethodStyle("OPS, M = 100", "darkred", "v", "-."),
    # the score tables' reference rows
    "zeros": MethodStyle("all zeros", "black", "", ":"),
    "oracle": MethodStyle("oracle (true rates)", "tab:gray", "", "-."),
}
#: colours of the chains of one method (trace figures): greys and colours no method has, so
#: that a chain is never read as another method
CHAIN_COLOURS = ("#222222", "#9a9a9a", "#5e3c99", "#1b7837", "#b35806", "#2166ac")
#: other names of the same methods (the beta-Bernoulli figures' non-private posterior sample)
METHOD_ALIASES = {"posterior": "nonprivate", "non-private": "nonprivate"}


def method_style(method: str) -> MethodStyle:
    """The :class:`MethodStyle` of ``method`` (a key or alias of :data:`METHOD_STYLES`).

    Raises
    ------
    KeyError
        If the method has no style: add it to :data:`METHOD_STYLES`, so that it gets one
        name and one colour in every figure.
    """
    key = METHOD_ALIASES.get(method, method)
    if key not in METHOD_STYLES:
        raise KeyError(f"no figure style for method {method!r}: add it to "
                       "study.figures.METHOD_STYLES")
    return METHOD_STYLES[key]


def _known(method: str) -> bool:
    return METHOD_ALIASES.get(method, method) in METHOD_STYLES


def method_label(method: str) -> str:
    """The name ``method`` has in every figure's legend (:data:`METHOD_STYLES`); a method
    without a style (a user's own sampler) keeps its own name."""
    return method_style(method).label if _known(method) else str(method)


def method_colour(method: str) -> str:
    """The colour ``method`` has in every figure (:data:`METHOD_STYLES`).

    Raises
    ------
    KeyError
        If the method has no style (:func:`method_style`); :func:`method_palette` gives
        such methods spare colours.
    """
    return method_style(method).colour


#: colours for methods without a style (a user's own sampler), in order of appearance
SPARE_COLOURS = ("#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d")


def method_palette(methods) -> dict:
    """``{legend name: colour}`` of ``methods`` in the order of :data:`METHOD_STYLES` (every
    legend lists the methods alike), for seaborn's ``palette`` and ``hue_order`` (with
    ``hue`` on the legend names, :func:`method_label`). Methods without a style come last,
    in their given order, in :data:`SPARE_COLOURS`."""
    order = list(METHOD_STYLES)
    keys = list(dict.fromkeys(METHOD_ALIASES.get(m, m) for m in methods))
    known = sorted((m for m in keys if m in METHOD_STYLES), key=order.index)
    unknown = [m for m in keys if m not in METHOD_STYLES]
    palette = {method_label(m): method_colour(m) for m in known}
    palette.update({str(m): SPARE_COLOURS[i % len(SPARE_COLOURS)]
                    for i, m in enumerate(unknown)})
    return palette


# ---------------------------------------------------------------- error bars

#: the column of a score table that numbers the chains of one fit (absent: one chain)
CHAIN_COLUMN = "chain"


def n_chains(table) -> int:
    """Chains per fit in a score table: distinct values of its ``chain`` column, 1 without."""
    if CHAIN_COLUMN not in table or table[CHAIN_COLUMN].isna().all():
        return 1
    return int(table[CHAIN_COLUMN].nunique())


def spread_note(n_copies, chains: int = 1) -> str:
    """The caption part that says what an error bar spans, e.g. ``± sd over 3 copies × 2
    chains``; a figure of one run per point says so (``one run per point: no error bar``).

    Parameters
    ----------
    n_copies : int or (int, int)
        Privatized copies (or seeds) per point; a pair ``(fewest, most)`` where the points
        of a figure have different numbers.
    chains : int
        Chains per copy.
    """
    low, high = (n_copies, n_copies) if np.ndim(n_copies) == 0 else n_copies
    low, high, chains = int(low), int(high), int(chains)
    if high * chains <= 1:
        return "one run per point: no error bar"
    copies = str(high) if low == high else f"{low}–{high}"
    parts = [f"{copies} {'copy' if high == 1 else 'copies'}"]
    if chains > 1:
        parts.append(f"{chains} chains")
    return "± sd over " + " × ".join(parts)
