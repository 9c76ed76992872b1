import numba
import numpy as np
import pytest
from numba import njit, prange

from lpp.randomness import as_generator, base_seed, seed_stream, stream_key


@njit(parallel=True)
def _block_uniforms(seed, iteration, n_blocks, per_block):
    out = np.empty((n_blocks, per_block))
    for b in prange(n_blocks):
        seed_stream(seed, iteration, b)
        for j in range(per_block):
            out[b, j] = np.random.random()
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


def test_stream_keys_spread_over_32_bits():
    keys = {int(stream_key(0, it, b)) for it in range(100) for b in range(100)}
    assert len(keys) >= 9_990  # birthday collisions in 2**32: expect ~0.01 of 10^4
    assert max(keys) > 2**31


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
