"""Random streams that do not depend on the number of threads.

Every compiled kernel that draws random numbers works on fixed *blocks* (rows, or chunks of
entries) and, at the start of each block, seeds a small generator of its own with a key
derived from ``(seed, iteration, block)`` (:func:`seed_block`), then passes it to every draw of
the block (:func:`uniform`, and the samplers of :mod:`lpp.distributions`, which take it as
their first argument). A block always runs on a single thread, so the numbers it sees depend
only on that key: the same seed gives bit-identical results with one or many threads.

The generator is xoshiro256+ (Blackman and Vigna 2021; the top 53 bits of each output make a
double in [0, 1)), its 256-bit state filled by splitmix64 from the block's 64-bit key. Seeding
costs a few nanoseconds, so a kernel can key every row; a draw about one. The key keeps all 64
bits: with a 32-bit key (numba's ``np.random.seed`` takes no more) a chain of 10^7 blocks would
give about 10^4 pairs of blocks the same numbers.

Python-level functions take ``rng`` as a :class:`numpy.random.Generator`, an integer seed
or ``None`` (scipy's SPEC 7) and turn it into a 63-bit *base seed* for the kernels:
:func:`replay_seed` keeps an integer as it is (so a recorded seed replays a run) and draws one
from a Generator or None. The phases of one run (initialisation, privacy step, model step, and
the sub-phases of each) get independent base seeds by :func:`derive_seed` with a phase *tag*;
the tags of every component are in one table, :class:`Tag`.
"""
from __future__ import annotations

import math
import numbers
from functools import lru_cache

import numpy as np
from numba import njit

from lpp.validation import is_sha256_hex

_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)
#: splitmix64's increment (the odd integer nearest 2**64 / golden ratio)
_GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_UNIT = 1.0 / 9007199254740992.0  # 2**-53


def check_rng(rng, name: str = "rng",
              kinds: str = "a numpy.random.Generator, a non-negative int seed or None"):
    """``rng`` unchanged if it is None, an int seed or a ``numpy.random.Generator``; a
    TypeError naming ``name`` and the ``kinds`` its caller takes otherwise. A bool is refused:
    ``rng=True`` reads as "random", not as the seed 1."""
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"{name} must be {kinds}, got the bool {rng!r}")
    if rng is None or isinstance(rng, (numbers.Integral, np.random.Generator)):
        return rng
    raise TypeError(f"{name} must be {kinds}, got {type(rng).__name__}")


def as_generator(rng=None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a Generator, an int seed or ``None``
    (:func:`check_rng`)."""
    if isinstance(check_rng(rng), np.random.Generator):
        return rng
    if rng is not None and int(rng) < 0:
        raise ValueError(f"a seed must be a non-negative integer, got {rng}")
    return np.random.default_rng(rng)


def base_seed(rng=None) -> int:
    """Draw the 63-bit base seed that keys a kernel's block streams."""
    return int(as_generator(rng).integers(0, 2**63 - 1, dtype=np.int64))


def replay_seed(rng=None) -> int:
    """The run's 63-bit base seed: an int is used as is, a Generator or None draws one.

    So ``rng=result.seed`` repeats any run, including one started with ``rng=None``.
    """
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if not 0 <= rng < 2**63:
            raise ValueError(f"an integer seed must be in [0, 2**63), got {rng}")
        return int(rng)
    return base_seed(rng)


@njit(cache=True)
def _splitmix64(x):
    x = (x + _GOLDEN_GAMMA) & _MASK64
    x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK64
    x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK64
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def block_key(seed, iteration, block):
    """64-bit key of the stream for ``(seed, iteration, block)`` (splitmix64 chain)."""
    h = _splitmix64(np.uint64(seed))
    h = _splitmix64(h ^ np.uint64(iteration))
    return _splitmix64(h ^ np.uint64(block))


@njit(cache=True)
def new_stream():
    """The state of one generator (four 64-bit words), to seed with :func:`seed_block`."""
    return np.ones(4, dtype=np.uint64)


@njit(cache=True)
def seed_block(stream, seed, iteration, block):
    """Seed ``stream`` for one block of work: its state is the splitmix64 sequence started at
    :func:`block_key`. Call it at the top of each block (one ``prange`` iteration, or a row)."""
    x = block_key(seed, iteration, block)
    for i in range(4):
        stream[i] = _splitmix64(x)
        x = (x + _GOLDEN_GAMMA) & _MASK64


@njit(cache=True)
def uniform(stream):
    """The next double of ``stream``, uniform on [0, 1) in steps of 2**-53 (xoshiro256+)."""
    s0 = stream[0]
    s1 = stream[1]
    s2 = stream[2]
    s3 = stream[3]
    out = s0 + s3
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    stream[0] = s0
    stream[1] = s1
    stream[2] = s2
    stream[3] = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
    return (out >> np.uint64(11)) * _UNIT


@njit(cache=True)
def standard_exponential(stream):
    """An Exp(1) draw by inversion (``-log(1 - U)``, finite for every ``U`` in [0, 1))."""
    return -math.log1p(-uniform(stream))


@lru_cache(maxsize=4096)
def derive_seed(seed: int, tag: int) -> int:
    """63-bit base seed for phase ``tag`` of a run whose base seed is ``seed``.

    Two phases of one iteration (say the privacy step and the allocation) must not share a
    stream; mixing the tag in by splitmix64 gives each its own.
    """
    mixed = _splitmix64(np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF))
    return int(_splitmix64(mixed ^ np.uint64(int(tag) & 0xFFFFFFFFFFFFFFFF))) >> 1


class Tag:
    """The phase tags of every random stream, in one table (values never change: they key the
    committed results' streams). A tag need only differ from its siblings under the same parent
    seed; the groups below are those siblings.
    """

    # the chain's phases, from the run's base seed
    INIT_PRIOR = 1
    INIT_STEP = 2
    PRIVACY = 3
    MODEL = 4
    CHAINS = 5  # the seeds of a fit's further chains (chain_seeds)
    INIT_FIT = 6  # the deterministic fit of a dispersed start (lpp.vi.dispersed_start)
    INIT_DRAW = 7  # the start's draw around that fit
    RELEASE = 8  # the seed of a fit of one release (release_seed)
    # inside the privacy step (from the PRIVACY seed)
    COUNTS = 11
    LAMBDA = 12
    # inside a model step (from the MODEL seed), then its latent updates in order
    ALLOCATE = 21
    LATENTS = 22
    REASSIGN = 23  # the tokens' reassignment with theta summed out (collapse_theta)
    REASSIGN_THETA = 24  # theta drawn given that reassignment
    # the engine with the topics' directions summed out (collapse_phi), in its order
    FIRST_TOPICS = 25  # the tokens' topics given explicit theta and phi (a start)
    TOPIC_TOKENS = 26  # the token sweep
    TOPIC_MASS = 27  # each topic's total intensity
    TOPIC_THETA = 28  # theta given the tokens and the masses
    TOPIC_PHI = 29  # phi given the tokens and the masses, where it is read
    LATENT_1 = 1
    LATENT_2 = 2
    LATENT_3 = 3
    # inside the fused sparse engine (from the PRIVACY seed)
    PASS1 = 41
    PASS2 = 42
    NEGATIVE_TOTALS = 43  # the GPU engine's topic totals of the non-positive entries


def release_seed(seed: int, release_sha256: str) -> int:
    """The base seed of a fit of one privatized release: ``seed`` mixed with the release's
    digest (the ``ledger.release_sha256`` of its folder).

    Fits of different releases (privatized copies, noise levels, data sets) given the same
    ``seed`` then run on independent streams, so a study's spread over copies is a spread over
    independent chains as well as over noise; fits of one release share their seed, so two
    methods fitted to the same copy stay paired by it, and a fit's further seeds (say
    ``seed + 1`` for an extra chain) stay distinct on it. The digest is public (it is a digest of
    the released values), so the seed reveals nothing the release does not.
    """
    seed = replay_seed(seed)
    digest = release_sha256
    if not is_sha256_hex(digest):
        raise ValueError("release_sha256 must be a sha256 hex digest (64 lowercase hex "
                         f"characters), got {release_sha256!r}")
    keyed = derive_seed(seed, Tag.RELEASE)
    for start in range(0, 64, 16):   # all 256 bits of the digest, 64 at a time
        keyed = derive_seed(keyed, int(digest[start:start + 16], 16))
    return keyed


def chain_seeds(seed: int, n_chains: int) -> list[int]:
    """The base seeds of a fit's ``n_chains`` chains: chain 0 runs on ``seed`` itself (so a
    one-chain fit is the plain run), chain ``c >= 1`` on a seed derived from ``seed`` and
    ``c``; every chain's streams are keyed by its own seed."""
    family = derive_seed(seed, Tag.CHAINS)
    return [int(seed)] + [derive_seed(family, c) for c in range(1, n_chains)]
