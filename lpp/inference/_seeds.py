"""Independent kernel seeds for the phases of one Gibbs sweep.

Each compiled kernel keys its block streams by ``(seed, iteration, block)``; two phases of the
same iteration (say the privacy step and the allocation) must therefore not share a seed.
``derive_seed(seed, tag)`` mixes a phase tag into the run's base seed with splitmix64, in plain
Python integers (no state, no cost worth mentioning).
"""
from __future__ import annotations

from functools import lru_cache

_MASK64 = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


@lru_cache(maxsize=4096)
def derive_seed(seed: int, tag: int) -> int:
    """63-bit seed for phase ``tag`` of a run whose base seed is ``seed``."""
    return _splitmix64(_splitmix64(int(seed) & _MASK64) ^ (int(tag) & _MASK64)) >> 1
