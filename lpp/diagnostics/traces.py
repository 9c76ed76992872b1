"""The trace figure of saved chains: per quantity, each chain's histogram and its values by
sweep."""
from __future__ import annotations

from lpp.diagnostics.export import QUANTITIES, as_inference_data, posterior_of

__all__ = ["plot_traces"]


def plot_traces(data, *, var_names=("log_joint", "total_rate", "mu"), title=None,
                chain_colours=None, **kwargs):
    """Trace figure: a row per quantity, its per-chain histograms (left) and values by sweep
    (right), one colour per chain (``mu``: one line style per followed entry).

    Drawn with matplotlib directly rather than ``arviz.plot_trace``, whose 0.23 release calls
    matplotlib API deprecated in 3.11.

    Parameters
    ----------
    data : arviz.InferenceData, xarray.DataTree or fits
        As for :func:`convergence_summary` (one chain is enough here).
    var_names : sequence of str
        Which quantities to draw.
    title : str, optional
        The figure's title (e.g. the profile, sweeps and data set).
    chain_colours : sequence of colours, optional
        One per chain, cycled; by default matplotlib's colour cycle.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        For quantities that were not exported.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    var_names = list(var_names)
    unknown = set(var_names) - set(QUANTITIES)
    if unknown or not var_names:
        raise ValueError(f"unknown quantities {sorted(unknown)}; choose from {QUANTITIES}")
    posterior = posterior_of(as_inference_data(data, **kwargs))
    sweeps = posterior["draw"].values
    figure, axes = plt.subplots(len(var_names), 2, figsize=(10, 2.4 * len(var_names)),
                                gridspec_kw={"width_ratios": [1, 2.5]}, squeeze=False)
    styles = ["-", "--", ":", "-."]
    for row, name in zip(axes, var_names):
        values = posterior[name].values  # (chain, draw) or (chain, draw, entry)
        values = values[..., None] if values.ndim == 2 else values
        for c in range(values.shape[0]):
            colour = (f"C{c % 10}" if chain_colours is None
                      else chain_colours[c % len(chain_colours)])
            for e in range(values.shape[2]):
                style = styles[e % len(styles)]
                row[0].hist(values[c, :, e], bins="auto", histtype="step", color=colour,
                            linestyle=style)
                row[1].plot(sweeps, values[c, :, e], color=colour, linestyle=style, lw=0.8,
                            label=f"chain {c}" if e == 0 else None)
        row[0].set_title(name)
        row[0].set_yticks([])
        # large values (a log joint of -1.5e6) would overlap with the default ticks
        row[0].xaxis.set_major_locator(plt.MaxNLocator(3))
        row[1].set_xlabel("sweep")
        if values.shape[2] == 1:
            row[1].set_title(name)
            continue
        # the entries' labels (actor names, document and word) are too long for a title
        row[1].set_title(f"{name} at {values.shape[2]} entries (line style)")
        entries = [Line2D([], [], color="0.3", linestyle=styles[e % len(styles)], label=label)
                   for e, label in enumerate(map(str, posterior["entry"].values))]
        row[1].legend(handles=entries, title="row, column", title_fontsize="x-small",
                      fontsize="x-small", loc="best", framealpha=0.7)
    axes[0, 1].legend(fontsize="small", loc="best")
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    return figure
