"""The thread bodies and the host backend (lpp.inference.engines.cuda.kernels): the arrays of
:class:`HostBackend`, the segment sums and prefixes every factor's column sums go through, and
the allocation of a count whose topic weights underflow."""
import numpy as np
import pytest
from scipy import stats

from numba import njit

from lpp.inference.engines.cuda.engine import _layout_bitmap
from lpp.inference.engines.cuda.functions import BULK_COUNT, UNDERFLOW, build_functions
from lpp.inference.engines.cuda.kernels import (
    BODIES,
    FEW_TOKENS,
    SCRATCH,
    SEGMENTS,
    HostBackend,
    build_bodies,
)
from lpp.testing import FALSE_ALARM, chisquare_gof

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


# --- counts too large to split token by token ----------------------------------------------------

def _binomial_gof(draws, n, p, bins=20):
    """Chi-square of ``Binom(n, p)`` draws on cells of about equal probability."""
    law = stats.binom(n, p)
    edges = np.unique(law.ppf(np.linspace(0.0, 1.0, bins + 1)[1:-1]))
    edges = edges[law.cdf(edges) < 1.0]
    probs = np.diff(np.concatenate(([0.0], law.cdf(edges), [1.0])))
    observed = np.bincount(np.searchsorted(edges, draws, side="left"), minlength=probs.size)
    return stats.chisquare(observed, probs * draws.size).pvalue


@pytest.mark.parametrize("count", [BULK_COUNT + 1, 10**12, 10**15])
@pytest.mark.parametrize("scale", [1.0, 1e-200])
def test_a_huge_count_is_split_over_topics_in_bulk(kernels, count, scale):
    """Above BULK_COUNT an entry's tokens are split by conditional binomials: every token lands
    and topic 0 gets ``Binom(count, 1/4)`` (weights 1 : 3, also where they underflow)."""
    n = 4_000
    theta = np.tile(np.array([1.0, 3.0]) * scale, (n, 1))
    phi_t = np.full((1, K), scale)
    rows = np.arange(n, dtype=np.int32)
    cols = np.zeros(n, dtype=np.int32)
    values = np.full(n, count, dtype=np.int64)
    doc_topic = np.zeros((n, K), np.int64)
    word_topic = np.zeros((1, K), np.int64)
    HostBackend().launch(kernels, "known_entry", n, rows, cols, values, theta, phi_t, *KEY, 4,
                         doc_topic, word_topic)
    assert np.all(doc_topic >= 0) and np.all(doc_topic.sum(axis=1) == count)
    assert np.array_equal(word_topic[0], doc_topic.sum(axis=0))
    assert _binomial_gof(doc_topic[:, 0], count, 0.25) > FALSE_ALARM


def test_counts_up_to_bulk_count_are_split_token_by_token(kernels):
    """Up to BULK_COUNT the split is the per-token one (its streams, so its draws, unchanged):
    the entry's topic counts are those of ``split_count`` on the same stream."""
    theta, phi_t = np.array([[1.0, 3.0]]), np.ones((1, K))
    cum = np.cumsum(theta[0] * phi_t[0])
    for count in (FEW_TOKENS + 1, BULK_COUNT):
        doc_topic, word_topic = np.zeros((1, K), np.int64), np.zeros((1, K), np.int64)
        HostBackend().launch(kernels, "known_entry", 1, np.zeros(1, np.int32),
                             np.zeros(1, np.int32), np.array([count]), theta, phi_t, *KEY, 4,
                             doc_topic, word_topic)
        hits = np.empty(K, np.int64)
        _F.split_count(count, cum, cum[-1], hits, *KEY, 0, 4, 0)
        assert np.array_equal(doc_topic[0], hits)


def _negative_cell(kernels, n_tokens, phi_row, in_e, to_dense, iteration=0):
    """``negative_tokens`` of the one cell (row 0, topic 0) of a 1-row layout whose E(0) is
    ``in_e``, with ``n_tokens`` tokens and the topic's word weights ``phi_row``: its counts."""
    n_cols = phi_row.size
    indptr = np.array([0, in_e.sum()], np.int64)
    cols = np.nonzero(in_e)[0].astype(np.int32)
    bitmap = _layout_bitmap(indptr, cols, n_cols)
    cum_phi = np.tile(np.cumsum(phi_row), (K, 1))
    guide = np.array([[_F.pick(cum_phi[k], cum_phi[k, -1], b / n_cols) for b in range(n_cols)]
                      for k in range(K)], dtype=np.int32)
    neg_counts = np.array([[n_tokens, 0]], np.int64)
    residuals = np.array([[phi_row[~in_e].sum(), 0.0]])
    counts = np.zeros((1, n_cols) if to_dense else (n_cols, K), np.int64)
    HostBackend().launch(kernels, "negative_tokens", K, bitmap, cum_phi, guide,
                         np.tile(phi_row[:, None], (1, K)), neg_counts, residuals, *KEY,
                         iteration, counts, to_dense)
    return counts[0] if to_dense else counts[:, 0]


@pytest.mark.parametrize("n_tokens,e_mass", [(10**12, 0.5), (3, 1e12), (10**12, 1e12)])
def test_tokens_on_neg_are_split_in_bulk_where_one_by_one_would_not_end(kernels, n_tokens,
                                                                        e_mass):
    """Many tokens, or a few where E(d) holds nearly all of the topic's mass (the rejection
    would take ~1e12 draws a token): they land on Neg(d) only, all of them, by the weights of
    its columns, and the dense redraw places them alike."""
    phi_row = np.array([0.2, e_mass, 0.3, 0.5, e_mass, 1.0, 0.0])
    in_e = np.array([False, True, False, False, True, False, False])
    placed = np.array([_negative_cell(kernels, n_tokens, phi_row, in_e, False, t)
                       for t in range(300)])
    assert np.all(placed >= 0) and np.all(placed.sum(axis=1) == n_tokens)
    assert not placed[:, in_e].any() and not placed[:, -1].any()  # E(d) and a zero weight
    dense = _negative_cell(kernels, n_tokens, phi_row, in_e, True, 299)
    assert np.array_equal(dense, placed[-1])
    p = phi_row[5] / phi_row[~in_e].sum()
    assert _binomial_gof(placed[:, 5], n_tokens, p, bins=10 if n_tokens > 100 else 3) > FALSE_ALARM
