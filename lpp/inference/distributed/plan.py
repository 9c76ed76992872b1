"""numpy's pairwise summation split at row-block boundaries: the client reassembles, from the
blocks' pieces, exactly the float that the in-process run sums.
"""
from __future__ import annotations

import numpy as np

from lpp.inference.models.base import LOG_DENSITY_BLOCK

#: numpy's pairwise summation: leaves of at most this many terms are summed by an unrolled loop
_PW_BLOCKSIZE = 128


def _pairwise_tree(lo: int, n: int, cuts: np.ndarray):
    """The summation tree numpy uses for ``a[lo:lo + n].sum()`` (a contiguous float64 array),
    cut at ``cuts`` (sorted flat offsets of segment starts).

    A node inside one segment is a request ``("sum", lo, n)``; a leaf (at most
    :data:`_PW_BLOCKSIZE` terms) that straddles a cut is ``("terms", lo, n)`` (its raw terms,
    summed once reassembled); otherwise ``("+", left, right)`` as numpy recurses: ``n2 = n // 2``
    rounded down to a multiple of 8.
    """
    seg = np.searchsorted(cuts, lo, side="right")
    inside = seg >= cuts.size or lo + n <= cuts[seg]
    if inside:
        return ("sum", lo, n)
    if n <= _PW_BLOCKSIZE:
        return ("terms", lo, n)
    n2 = n // 2
    n2 -= n2 % 8
    return ("+", _pairwise_tree(lo, n2, cuts), _pairwise_tree(lo + n2, n - n2, cuts))


def pairwise_plan(n_total: int, starts, blocks=None) -> list:
    """Summation trees of the flat blocks of :data:`LOG_DENSITY_BLOCK` terms, split at the
    segment ``starts`` (flat offsets, the first 0): one tree per block, in order.

    Summing the leaves of each tree as :func:`evaluate_plan` does and adding the trees' values
    to ``0.0`` in order gives exactly the float that the in-process log densities compute over
    the whole flat array. ``blocks`` (``(lo, n)`` pairs) replaces the fixed blocks: with a
    held-out mask the in-process sums run over the observed terms of each fixed block, i.e.
    over blocks of unequal lengths in the coordinates of the observed terms.
    """
    cuts = np.asarray(sorted({int(s) for s in starts} | {0}), dtype=np.int64)[1:]
    if blocks is None:
        blocks = [(lo, min(LOG_DENSITY_BLOCK, n_total - lo))
                  for lo in range(0, n_total, LOG_DENSITY_BLOCK)]
    return [_pairwise_tree(int(lo), int(n), cuts) for lo, n in blocks if n > 0]


def _requests(tree, out):
    if tree[0] == "+":
        _requests(tree[1], out)
        _requests(tree[2], out)
    else:
        out.append(tree)
    return out


def _segment_requests(plan, starts, ends) -> list[list[tuple[int, int]]]:
    """Per segment, the local ``(lo, hi)`` ranges whose sums (or raw terms) it must return."""
    per_seg = [[] for _ in starts]
    for tree in plan:
        for kind, lo, n in _requests(tree, []):
            for s, (a, b) in enumerate(zip(starts, ends)):
                x, y = max(a, lo), min(b, lo + n)
                if x < y:
                    per_seg[s].append((x - a, y - a))
    return per_seg


def evaluate_plan(plan, starts, ends, pieces) -> float:
    """The total of the terms from each segment's answers to :func:`_segment_requests`
    (``pieces[s]``: for each request, a float sum or an array of raw terms)."""
    cursor = [iter(p) for p in pieces]

    def value(tree):
        kind = tree[0]
        if kind == "+":
            left = value(tree[1])
            return left + value(tree[2])
        _, lo, n = tree
        parts = []
        for s, (a, b) in enumerate(zip(starts, ends)):
            if max(a, lo) < min(b, lo + n):
                parts.append(next(cursor[s]))
        if kind == "sum":
            return parts[0]
        return np.concatenate(parts).sum()

    total = 0.0
    for tree in plan:
        total += float(value(tree))
    return total


def _answer(terms: np.ndarray, requests, plan_kinds) -> list:
    return [terms[lo:hi].sum() if kind == "sum" else terms[lo:hi].copy()
            for (lo, hi), kind in zip(requests, plan_kinds)]
