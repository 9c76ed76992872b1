"""How the compiled kernels run: a parallel twin and a serial one of each (compiled, or the
loop itself run by the interpreter), and when to use which; and the checks of what they return.

The samplers' random draws themselves live in :mod:`lpp.distributions` (Gamma, truncated
Poisson, multinomial allocation). Kernels cannot raise from a parallel loop, so a draw whose
parameters a sampler cannot take is marked instead (-1 for a count, NaN for a Gamma variate)
and the Python side refuses the sweep with :func:`check_counts_drawn` and
:func:`check_latents`.
"""
from __future__ import annotations

import types

import numpy as np
from numba import njit

#: problems with less work than this (entries, or rows x columns) run the serial twin of a kernel
SERIAL_BELOW = 16384
#: elementary steps (a trial of a count's allocation, a term of a tail sum, a token; 5 to 30 ns
#: each) that one kernel call takes at most, roughly. Python handles Ctrl-C only between calls,
#: so kernels whose work grows with the counts run in calls of a fraction of a second
CALL_STEPS = 1 << 24


def parallel_and_serial(loop):
    """Compile ``loop`` (a function with a ``prange`` loop) twice: parallel, and serial.

    In a non-parallel compilation ``prange`` is plain ``range``. Kernels key their random
    streams by block, so both twins give identical results; the serial one avoids the thread
    pool's start-up cost on small problems (milliseconds on a busy machine).

    Both are cached on disk (see :mod:`lpp._numba_cache`). numba names a cache file after the
    function's qualified name, so the serial twin is compiled from a copy of ``loop`` with a
    name of its own; otherwise the twins would overwrite each other's cache entries.
    """
    serial = types.FunctionType(loop.__code__, loop.__globals__, f"{loop.__name__}_serial",
                                loop.__defaults__, loop.__closure__)
    serial.__qualname__ = f"{loop.__qualname__}_serial"
    return njit(parallel=True, cache=True)(loop), njit(cache=True)(serial)


def parallel_and_interpreted(loop):
    """``loop`` (a ``prange`` loop whose body calls a compiled function per chunk) compiled
    parallel, and ``loop`` itself, run by the interpreter, as the twin for small problems.

    Outside numba ``prange`` is ``range``: the interpreted twin makes the same calls of the
    same compiled function in the same order, so it draws the same numbers, at a few
    microseconds per chunk. A compiled serial twin would cost seconds the first time it runs:
    numba compiles a caller together with the machine code of everything it calls, so it
    would compile the chunk function's code a second time.
    """
    return njit(parallel=True, cache=True)(loop), loop


def call_ranges(work, budget: float | None = None) -> list[tuple[int, int]]:
    """Consecutive ranges ``[lo, hi)`` of the items (rows, blocks) whose ``work`` (steps per
    item) adds up to at most ``budget`` (default :data:`CALL_STEPS`) each, an item heavier than
    that alone; ``[(0, n)]`` when all of it fits. The kernels key their random streams by item,
    so the split changes no draw."""
    budget = CALL_STEPS if budget is None else budget
    n = len(work)
    cum = np.cumsum(work, dtype=np.float64)
    if n == 0 or cum[-1] <= budget:
        return [(0, n)]
    ranges, lo, done = [], 0, 0.0
    while lo < n:
        hi = max(int(np.searchsorted(cum, done + budget, side="right")), lo + 1)
        ranges.append((lo, hi))
        done, lo = cum[hi - 1], hi
    return ranges


#: the most the counts of one sweep may add up to: the kernels sum them in int64
MAX_DRAWN_TOTAL = 2.0**62

_DIVERGED = ("the chain's rates left the range its samplers can draw from ({why}): the data's "
             "counts or the prior's scale a0 / b0 are too large for the model; scale the counts "
             "down or choose a smaller prior mean a0 / b0")


def check_counts_drawn(*counts: np.ndarray) -> None:
    """Raise ValueError when counts drawn by a kernel carry the failure mark -1 (a Poisson
    rate that was NaN, infinite or above ``lpp.distributions.poisson.MAX_MEAN``) or add up to
    more than :data:`MAX_DRAWN_TOTAL`."""
    total = 0.0
    for arr in counts:
        if arr.size and arr.min() < 0:
            raise ValueError(_DIVERGED.format(why="a rate that is not finite or above 2**53"))
        total += float(arr.sum(dtype=np.float64))
    if total > MAX_DRAWN_TOTAL:
        raise ValueError(_DIVERGED.format(why=f"counts adding up to {total:.3g}, beyond 2**62"))


def check_latents(state: dict) -> None:
    """Raise ValueError when a latent array of a new state is not finite (a Gamma draw whose
    shape or rate was NaN, infinite or not positive)."""
    for name, arr in state.items():
        if not np.isfinite(arr).all():
            raise ValueError(_DIVERGED.format(why=f"the latent {name!r} is not finite"))
