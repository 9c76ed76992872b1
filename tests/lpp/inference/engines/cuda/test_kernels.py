"""The thread bodies and the host backend (lpp.inference.engines.cuda.kernels): the arrays of
:class:`HostBackend`, the segment sums and prefixes every factor's column sums go through, and
the allocation of a count whose topic weights underflow."""
import numpy as np
import pytest
from scipy import stats

from numba import njit

from lpp.inference.engines.cuda.engine import _layout_bitmap
from lpp.inference.engines.cuda.functions import UNDERFLOW, build_functions
from lpp.inference.engines.cuda.kernels import (
    BODIES,
    SCRATCH,
    SEGMENTS,
    HostBackend,
    build_bodies,
)
from lpp.testing import chisquare_gof

_F = build_functions(njit)

pytestmark = pytest.mark.cuda

#: topics of the kernels under test (the engine tests use the same: one compilation)
K = 2
KEY = (np.uint64(0x51ED), np.uint64(0x2701))


@pytest.fixture(scope="module")
def kernels():
    return HostBackend.kernels(K)


def test_host_backend_arrays_are_plain_numpy_copies():
    b = HostBackend()
    assert b.name == "host" and b.threads_per_block is None
    assert "host emulation" in b.describe() and b.free_bytes() is None
    z = b.zeros((3, 4), np.int64)
    assert z.dtype == np.int64 and z.shape == (3, 4) and not z.any()
    a = np.arange(12.0).reshape(3, 4)
    a[1, 2] = 7.5
    b.fill_zero(a)
    assert not a.any()
    source = np.arange(12.0).reshape(4, 3).T  # not C-contiguous
    for copy in (b.to_device(source), b.to_host(source)):
        assert copy.flags.c_contiguous and np.array_equal(copy, source)
        assert not np.shares_memory(copy, source)
        copy[0, 0] = -1.0
        assert source[0, 0] == 0.0


def test_the_kernels_are_every_body_once(kernels):
    assert set(SCRATCH) <= set(BODIES)
    assert all(callable(getattr(kernels, name)) for name in BODIES)
    assert HostBackend.kernels(K) is kernels  # cached per number of topics


def test_a_launch_of_no_items_runs_nothing(kernels):
    out = np.full((K, SEGMENTS), 5.0)
    HostBackend().launch(kernels, "segment_sums", 0, np.ones((3, K)), out)
    assert np.all(out == 5.0)


def _documented_sums(mat):
    """The column totals and prefixes in the documented order: each of SEGMENTS runs of
    ``ceil(n / SEGMENTS)`` rows summed in order from 0.0, then the runs in order."""
    n = mat.shape[0]
    length = -(-n // SEGMENTS)
    totals, cum = [], np.empty(mat.T.shape)
    for k in range(mat.shape[1]):
        total = 0.0
        for s in range(SEGMENTS):
            acc = total
            for r in range(s * length, min((s + 1) * length, n)):
                acc += float(mat[r, k])
                cum[k, r] = acc
            part = 0.0
            for r in range(s * length, min((s + 1) * length, n)):
                part += float(mat[r, k])
            total += part
        totals.append(total)
    return np.array(totals), cum


@pytest.mark.parametrize("rows", [1, 5, 63, 64, 65, 130, 1000])
def test_segment_sums_and_prefixes_are_numpys_to_rounding(kernels, rows):
    """Fewer rows than segments, a multiple of them, and neither."""
    b = HostBackend()
    mat = np.random.default_rng(rows).gamma(0.5, 2.0, (rows, K))
    partial, offsets = b.zeros((K, SEGMENTS), np.float64), b.zeros((K, SEGMENTS), np.float64)
    totals, cum = b.zeros(K, np.float64), b.zeros((K, rows), np.float64)
    b.launch(kernels, "segment_sums", K * SEGMENTS, mat, partial)
    b.launch(kernels, "segment_offsets", K, partial, offsets, totals)
    b.launch(kernels, "segment_prefix", K * SEGMENTS, mat, offsets, cum)
    np.testing.assert_allclose(totals, mat.sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(cum, np.cumsum(mat, axis=0).T, rtol=1e-13)
    assert np.all(np.diff(cum, axis=1) >= 0)
    want_totals, want_cum = _documented_sums(mat)
    assert np.array_equal(totals, want_totals) and np.array_equal(cum, want_cum)


@pytest.mark.parametrize("scale", [1.0, 1e-145, 1e-200])
def test_counts_are_split_by_the_topic_weights_even_where_they_underflow(kernels, scale):
    """A count of 3 on an entry with topic weights 1 : 3, scaled so that their sum is normal,
    below UNDERFLOW (the weights redone in log space), or zero in double precision: the split is
    Multinomial(3, (1/4, 3/4)) every time."""
    n = 40_000
    theta = np.tile(np.array([1.0, 3.0]) * scale, (n, 1))
    phi_t = np.full((1, K), scale)
    plain = float(theta[0] @ phi_t[0])
    assert (plain > UNDERFLOW) == (scale == 1.0)
    rows = np.arange(n, dtype=np.int32)  # one entry per row: the rows' splits are independent
    cols = np.zeros(n, dtype=np.int32)
    values = np.full(n, 3, dtype=np.int32)
    doc_topic = np.zeros((n, K), np.int64)
    word_topic = np.zeros((1, K), np.int64)
    HostBackend().launch(kernels, "known_entry", n, rows, cols, values, theta, phi_t, *KEY, 4,
                         doc_topic, word_topic)
    assert np.all(doc_topic.sum(axis=1) == 3)
    assert np.array_equal(word_topic[0], doc_topic.sum(axis=0))
    support = np.arange(4)
    assert chisquare_gof(doc_topic[:, 0], support, stats.binom.pmf(support, 3, 0.25))


def test_the_guide_table_picks_what_the_binary_search_picks():
    """``guided_pick`` (Chen and Asau's indexed search) starts from a guide cell and steps to
    the first cumulative weight above ``u * total``: the column ``pick`` finds, for any guide
    (here the engine's own, and one that is off by a few cells either way)."""
    bodies = build_bodies(njit, None, 2)
    rng = np.random.default_rng(4)
    for _ in range(50):
        weights = rng.gamma(0.3, 1.0, size=int(rng.integers(1, 60)))
        weights[rng.random(weights.size) < 0.3] = 0.0  # empty columns are never picked
        weights[-1] += 1e-3
        cum = np.cumsum(weights)
        guide = np.array([_F.pick(cum, cum[-1], b / cum.size) for b in range(cum.size)],
                         dtype=np.int32)
        shaken = np.clip(guide + rng.integers(-3, 4, guide.size), 0, cum.size - 1)
        shaken = shaken.astype(np.int32)
        for u in np.concatenate((rng.random(40), [0.5 / 2**52, 1.0 - 0.5 / 2**52])):
            expected = _F.pick(cum, cum[-1], u)
            assert bodies.guided_pick(cum, guide, u) == expected
            assert bodies.guided_pick(cum, shaken, u) == expected
            assert weights[expected] > 0.0


def test_the_layout_bitmap_marks_the_entries_of_e():
    """One bit per cell, set exactly on the entries of E (the tokens' rejection test)."""
    bodies = build_bodies(njit, None, 2)
    rng = np.random.default_rng(5)
    dense = rng.random((7, 70)) < 0.2
    indptr = np.concatenate(([0], np.cumsum(dense.sum(axis=1)))).astype(np.int64)
    cols = np.nonzero(dense)[1].astype(np.int32)
    bitmap = _layout_bitmap(indptr, cols, dense.shape[1])
    marked = np.array([[bodies.in_layout(bitmap, d, v) for v in range(dense.shape[1])]
                       for d in range(dense.shape[0])], dtype=bool)
    assert np.array_equal(marked, dense)
