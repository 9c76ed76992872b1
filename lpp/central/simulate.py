"""Synthetic event logs shaped like the Wikileaks war logs (a stand-in; the logs are not used).

Foulds et al. fit their HMM to the Afghanistan and Iraq war logs: one chain per region code,
one step per month (2004–2009), five categorical fields per log entry — coarse *type*, fine
*category*, and three binarised casualty indicators (friendly/host-nation, civilian, enemy).
The median number of entries per region-month was 972 (Iraq) and 58 (Afghanistan, growing
over time). :func:`make_event_logs` draws data of that shape from the model itself: regimes
that change at a per-chain change point (e.g. a troop surge), emission distributions per
regime, lognormal entries per step. :func:`make_war_logs` gives the two presets. Each log
entry is the protected record.

The presets' number of regimes is drawn at random from :data:`REGIME_RANGE`, never the paper's
finding: Foulds et al. fitted 2 states to Iraq and 3 to Afghanistan, and a stand-in drawn with
exactly those counts would bake the finding ("a private 10-state HMM uses only 2-3 states")
into the data. The stand-ins are synthetic, named so, and test no claim about the war logs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lpp.randomness import as_generator

__all__ = ["WAR_LOG_FIELDS", "REGIME_RANGE", "EventLogs", "make_event_logs", "make_war_logs"]

#: the five fields and their sizes (type, category: stand-in sizes; three binary casualty fields)
WAR_LOG_FIELDS = (("type", 8), ("category", 20), ("friendly_hostnation_casualties", 2),
                  ("civilian_casualties", 2), ("enemy_casualties", 2))


#: the presets' regime counts, drawn uniformly from this range (both ends included): it
#: excludes the 2 and 3 states the paper found on the war logs
REGIME_RANGE = (4, 8)
#: the presets' change points spread over most of the span (fractions of it), so that every
#: regime of up to ``REGIME_RANGE[1]`` lasts several months
PRESET_CHANGE_WINDOW = (0.1, 0.9)


@dataclass(frozen=True)
class EventLogs:
    """Per-step field counts of categorical event records, in chain-major time order.

    ``counts[d]`` is ``(n_steps, K_d)`` int64; ``chain``, ``month``, ``states`` (the true
    regime, or -1 when unknown) and ``n_records`` are ``(n_steps,)``; ``phi`` holds the
    true emission distributions per field (``(n_regimes, K_d)``) or is empty.
    """

    counts: tuple
    chain: np.ndarray
    month: np.ndarray
    states: np.ndarray
    n_records: np.ndarray
    phi: tuple
    field_names: tuple
    name: str = ""

    @property
    def n_steps(self) -> int:
        return int(self.chain.size)

    @property
    def n_categories(self) -> tuple:
        return tuple(c.shape[1] for c in self.counts)


def make_event_logs(n_chains=7, n_months=72, n_regimes=2, *, fields=WAR_LOG_FIELDS,
                    median_records=972.0, records_sigma=0.6, growth=0.0,
                    change_window=(0.4, 0.7), concentration=1.0, name="", rng=None):
    """Draw event logs from a naive-Bayes HMM with regimes that change once per boundary.

    Every chain starts in regime 0 and moves to regime ``r`` at a month drawn uniformly in
    ``change_window`` (fractions of the span, split evenly between the ``n_regimes - 1``
    changes). Entries per step are lognormal with median
    ``median_records * exp(growth * (month - n_months / 2))`` and log-sd ``records_sigma``
    (at least one). Each regime's field distributions are ``Dirichlet(concentration)``.

    Parameters
    ----------
    n_chains, n_months, n_regimes : int
    fields : sequence of (name, K_d), keyword-only
    median_records, records_sigma, growth : float, keyword-only
    change_window : (float, float), keyword-only
    concentration : float, keyword-only
    name : str, keyword-only
    rng : Generator, int or None, keyword-only

    Returns
    -------
    EventLogs

    Raises
    ------
    ValueError
        Sizes < 1, fewer than 2 categories in a field, or a change window outside (0, 1).
    """
    if min(n_chains, n_months, n_regimes) < 1:
        raise ValueError("n_chains, n_months and n_regimes must be >= 1")
    if not fields or any(int(k) < 2 for _, k in fields):
        raise ValueError("every field needs >= 2 categories")
    lo, hi = change_window
    if not 0.0 < lo <= hi < 1.0:
        raise ValueError("change_window must satisfy 0 < low <= high < 1")
    gen = as_generator(rng)
    phi = tuple(gen.dirichlet(np.full(int(k), concentration), size=n_regimes) for _, k in fields)
    months = np.arange(n_months)
    chain, month, states, n_rec = [], [], [], []
    for c in range(n_chains):
        z = np.zeros(n_months, dtype=np.int64)
        for r in range(1, n_regimes):
            a = lo + (hi - lo) * (r - 1) / (n_regimes - 1)
            b = lo + (hi - lo) * r / (n_regimes - 1)
            z[months >= int(gen.uniform(a, b) * n_months)] = r
        median = median_records * np.exp(growth * (months - n_months / 2))
        n = np.maximum(1, np.round(median * np.exp(records_sigma * gen.standard_normal(n_months))))
        chain.append(np.full(n_months, c))
        month.append(months)
        states.append(z)
        n_rec.append(n.astype(np.int64))
    states = np.concatenate(states)
    n_rec = np.concatenate(n_rec)
    counts = tuple(np.stack([gen.multinomial(n_rec[t], p[states[t]]) for t in range(states.size)])
                   .astype(np.int64) for p in phi)
    return EventLogs(counts, np.concatenate(chain), np.concatenate(month), states, n_rec, phi,
                     tuple(f for f, _ in fields), name)


def make_war_logs(kind, *, scale=1.0, n_months=72, n_regimes=None, rng=None):
    """War-logs-shaped presets: ``"iraq"`` (7 regions, median 972 entries per region-month) or
    ``"afghanistan"`` (6 regions, median 58, density growing about 36-fold over the six
    years), each with ``n_regimes`` regimes.

    Parameters
    ----------
    kind : {"iraq", "afghanistan"}
    scale : float, keyword-only
        Multiplies the entries per step (smaller for quick runs).
    n_months : int, keyword-only
    n_regimes : int or None, keyword-only
        Regimes of the generating model; None (default) draws it uniformly from
        :data:`REGIME_RANGE` with ``rng`` (recorded in the data: ``states.max() + 1``).
    rng : Generator, int or None, keyword-only

    Returns
    -------
    EventLogs
        Named ``"synthetic Iraq-shaped"`` / ``"synthetic Afghanistan-shaped"``.

    Raises
    ------
    ValueError
        An unknown ``kind``.
    """
    if kind not in ("iraq", "afghanistan"):
        raise ValueError(f"kind must be 'iraq' or 'afghanistan', got {kind!r}")
    gen = as_generator(rng)
    if n_regimes is None:
        n_regimes = int(gen.integers(REGIME_RANGE[0], REGIME_RANGE[1] + 1))
    if kind == "iraq":
        return make_event_logs(7, n_months, n_regimes, median_records=972.0 * scale,
                               records_sigma=0.6, change_window=PRESET_CHANGE_WINDOW,
                               name="synthetic Iraq-shaped", rng=gen)
    return make_event_logs(6, n_months, n_regimes, median_records=58.0 * scale,
                           records_sigma=0.6, growth=np.log(36.0) / n_months,
                           change_window=PRESET_CHANGE_WINDOW,
                           name="synthetic Afghanistan-shaped", rng=gen)
