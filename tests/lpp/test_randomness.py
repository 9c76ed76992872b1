import numba
import numpy as np
import pytest
from numba import njit, prange

from lpp.randomness import (
    as_generator,
    base_seed,
    block_key,
    new_stream,
    release_seed,
    seed_block,
    standard_exponential,
    uniform,
)


@njit(parallel=True)
def _block_uniforms(seed, iteration, n_blocks, per_block):
    out = np.empty((n_blocks, per_block))
    for b in prange(n_blocks):
        rng = new_stream()
        seed_block(rng, seed, iteration, b)
        for j in range(per_block):
            out[b, j] = uniform(rng)
    return out


def _with_threads(n, fn, *args):
    old = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        return fn(*args)
    finally:
        numba.set_num_threads(old)


def test_streams_do_not_depend_on_thread_count():
    one = _with_threads(1, _block_uniforms, 12345, 7, 64, 50)
    two = _with_threads(min(2, numba.config.NUMBA_NUM_THREADS), _block_uniforms, 12345, 7, 64, 50)
    assert np.array_equal(one, two)


def test_streams_differ_by_seed_iteration_and_block():
    a = _block_uniforms(1, 0, 4, 20)
    assert not np.array_equal(a, _block_uniforms(2, 0, 4, 20))
    assert not np.array_equal(a, _block_uniforms(1, 1, 4, 20))
    assert len({tuple(row) for row in a}) == 4


_M64 = 2**64 - 1


def _splitmix_py(x):
    x = (x + 0x9E3779B97F4A7C15) & _M64
    z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return x, z ^ (z >> 31)


def _xoshiro256plus_py(state, n):
    """The published xoshiro256+ in Python integers: n outputs' top 53 bits as doubles."""
    s0, s1, s2, s3 = state
    out = []
    for _ in range(n):
        out.append(((s0 + s3) & _M64) >> 11)
        t = (s1 << 17) & _M64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & _M64
    return [v * 2.0**-53 for v in out]


def test_seed_block_and_uniform_follow_splitmix64_and_xoshiro256plus():
    """The generator is the published one: state from splitmix64 at the block's key, then
    xoshiro256+'s top 53 bits (an independent Python implementation of both)."""
    rng = new_stream()
    seed_block(rng, 2019, 7, 12)
    x = int(block_key(2019, 7, 12))
    state = []
    for _ in range(4):
        x, z = _splitmix_py(x)
        state.append(z)
    assert [int(w) for w in rng] == state
    assert [uniform(rng) for _ in range(1000)] == _xoshiro256plus_py(state, 1000)


@njit
def _top_bits_of_keys(n_iterations, n_blocks):
    out = np.empty(n_iterations * n_blocks, dtype=np.uint64)
    for it in range(n_iterations):
        for b in range(n_blocks):
            out[it * n_blocks + b] = block_key(5, it, b) >> np.uint64(32)
    return out


def test_blocks_whose_keys_share_32_bits_draw_different_numbers():
    """A 32-bit key (numba's own generator takes no more) gives pairs of blocks the same
    numbers once a chain has some 10^5 blocks; the full 64-bit key does not."""
    top = _top_bits_of_keys(300, 1000)  # 300,000 blocks: about 10 pairs agree in 32 bits
    values, first, counts = np.unique(top, return_index=True, return_counts=True)
    twice = np.flatnonzero(counts > 1)
    assert twice.size > 0  # the pairs a 32-bit key would have merged
    for v in values[twice][:5]:
        (i, j) = np.flatnonzero(top == v)[:2]
        a = _block_uniforms(5, int(i // 1000), 1000, 8)[i % 1000]
        b = _block_uniforms(5, int(j // 1000), 1000, 8)[j % 1000]
        assert not np.array_equal(a, b)


def test_uniforms_lie_on_the_53_bit_grid_of_the_unit_interval():
    u = _block_uniforms(3, 0, 10, 1000).ravel()
    assert ((u >= 0.0) & (u < 1.0)).all()
    assert np.array_equal(u * 2.0**53, np.floor(u * 2.0**53))


def test_standard_exponential_is_exp_one():
    from scipy import stats

    rng = new_stream()
    seed_block(rng, 8, 0, 0)
    x = np.array([standard_exponential(rng) for _ in range(20_000)])
    assert np.isfinite(x).all() and (x >= 0).all()
    assert stats.kstest(x, "expon").pvalue > 1e-3


def test_block_uniforms_are_uniform():
    from scipy import stats

    u = _block_uniforms(99, 3, 200, 500).ravel()
    assert stats.kstest(u, "uniform").pvalue > 1e-3


def test_as_generator_and_base_seed():
    assert base_seed(5) == base_seed(np.random.default_rng(5))
    assert 0 <= base_seed(None) < 2**63
    g = np.random.default_rng(0)
    assert as_generator(g) is g
    with pytest.raises(ValueError, match="non-negative"):
        as_generator(-1)
    with pytest.raises(TypeError, match="Generator"):
        as_generator(np.random.RandomState(0))
    with pytest.raises(TypeError):
        as_generator("7")


@pytest.mark.parametrize("flag", [True, False, np.True_])
def test_a_bool_is_not_a_seed(flag):
    """``rng=True`` reads as "random"; taken as the seed 1 it would repeat one stream."""
    with pytest.raises(TypeError, match="bool"):
        as_generator(flag)
    with pytest.raises(TypeError, match="bool"):
        base_seed(flag)


DIGEST = "03321822ff58f60152c2ae144f261e1556819cee228c51482ab07c53e31b9f11"


def test_a_release_seed_is_keyed_by_the_seed_and_every_bit_of_the_digest():
    seed = release_seed(1, DIGEST)
    assert seed == release_seed(1, DIGEST) and 0 <= seed < 2**63
    assert seed not in (1, release_seed(2, DIGEST))
    # a change in any quarter of the digest gives another seed
    others = {release_seed(1, DIGEST[:i] + ("0" if DIGEST[i] != "0" else "1") + DIGEST[i + 1:])
              for i in (0, 20, 40, 63)}
    assert len(others) == 4 and seed not in others


@pytest.mark.parametrize("digest", ["", DIGEST[:-1], DIGEST.upper(), DIGEST[:-1] + "g", DIGEST + "\n", 7])
def test_a_release_seed_needs_a_sha256_hex_digest(digest):
    with pytest.raises(ValueError, match="release_sha256"):
        release_seed(1, digest)


def test_a_release_seed_takes_a_seed_as_the_fits_do():
    with pytest.raises(ValueError, match="2\\*\\*63"):
        release_seed(-1, DIGEST)
    with pytest.raises(TypeError, match="bool"):
        release_seed(True, DIGEST)
