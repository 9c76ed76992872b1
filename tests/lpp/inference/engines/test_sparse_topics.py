"""The sparse collapsed sampler of the topic model against exact laws and the dense path
(docs/design.md, *The sparse engine and its cost*).

At fixed factors, one fused draw gives per row: the true count of every entry and the row's
split over topics. Rows of four kinds are stacked (50 000 of each, so one draw gives 50 000 iid
replicates per kind): all entries non-positive; a few positive entries (the alias rejection);
a positive entry holding most of a topic's mass (the explicit fallback over Neg(d), and a topic
whose residual mass must be recomputed); the same with an unobserved entry. Exact laws: an
observed non-positive entry has ``y ~ Pois(alpha mu)``, their row sum ``Pois(alpha sum mu)``,
a positive entry the two-piece conditional, and an all-non-positive row's topic totals
``Pois(alpha theta_k Phi_k)``. Chi-square GOF, Bonferroni over the checks at ``FALSE_ALARM``.
"""
import subprocess
import sys

import numba
import numpy as np
import pytest
from scipy import stats

from lpp.inference import CollapsedPrivacy, GibbsSampler, RunOptions, TopicModel, fit_private
from lpp.inference import kernels, numerics
from lpp.inference.models.topics import kernels as topic_kernels
from lpp.inference.engines import sparse_topics
from lpp.testing.geweke import geweke_simulations
from lpp.inference.models.topics.kernels import allocate_matrix_kernel
from lpp.distributions import FEW_TRIALS, LARGE_COUNT, poisson_nb, rescale_log_weights_nb
from lpp.inference.privacy import noise_levels, sample_true_counts
from lpp.inference.privacy.kernels import sample_true_count_collapsed_nb
from lpp.mechanism import privatize
from lpp.randomness import new_stream, seed_block
from lpp.testing import FALSE_ALARM, chisquare_gof, geweke_test

ROWS = 50_000
THETA = np.array([1.0, 3.0, 2.0])
PHI = np.array([[0.5] * 8,
                [3.0] + [0.1] * 7,      # a positive column 0 leaves 19% of the mass: fallback
                [1.0] + [1e-6] * 7])    # ... and 7e-6 here: the residual is recomputed
KINDS = {  # name: (privatized row, alpha, masked column or None)
    "negative": ([-1, 0, -2, 0, -1, 0, 0, -3], 0.5, None),
    "alias": ([-1, 0, 2, -3, 0, 0, 1, -1], 0.4, None),
    "fallback": ([12, 0, -1, 0, 0, 1, -2, 0], 0.6, None),
    "masked": ([12, 0, -1, 0, 0, 1, -2, 0], 0.6, 3),
}


def _data(alpha_scale=1.0):
    rows, alphas, mask = [], [], []
    for row, alpha, masked in KINDS.values():
        rows.append(np.tile(row, (ROWS, 1)))
        alphas.append(np.full(ROWS, alpha * alpha_scale))
        m = np.zeros((ROWS, 8), dtype=bool)
        if masked is not None:
            m[:, masked] = True
        mask.append(m)
    y_tilde = np.concatenate(rows).astype(np.int64)
    noise = noise_levels(np.concatenate(alphas)[:, None], y_tilde.shape)
    observed = ~np.concatenate(mask)
    theta = np.tile(THETA, (y_tilde.shape[0], 1))
    return y_tilde, noise, observed, theta


def _sparse_draws(alpha_scale=1.0, n_draws=2):
    y_tilde, noise, observed, theta = _data(alpha_scale)
    step = sparse_topics.SparseTopicPrivacy(y_tilde, noise, observed)
    ys, doc_topics = [], []
    for t in range(n_draws):
        draw = step.sample(seed=11, iteration=t)
        doc_topic, _ = draw.realize(theta, PHI)
        ys.append(draw.dense())
        doc_topics.append(doc_topic)
    return ys, doc_topics


def _dense_draws(n_draws=2):
    y_tilde, noise, observed, theta = _data()
    mu = theta @ PHI
    phi_t = np.ascontiguousarray(PHI.T)
    ys, doc_topics = [], []
    for t in range(n_draws):
        y, _ = CollapsedPrivacy().sample(y_tilde, noise, mu, observed, {}, 21, t)
        doc_topic, _ = allocate_matrix_kernel(y, observed, theta, phi_t, 22, t)
        ys.append(y)
        doc_topics.append(doc_topic)
    return ys, doc_topics


def _by_kind(arrays, i):
    return np.concatenate([a[i * ROWS:(i + 1) * ROWS] for a in arrays])


def _exact_checks(ys, doc_topics, exact_posterior):
    """p-values of every exact check, by name."""
    mu_row = THETA @ PHI
    out = {}
    for i, (name, (row, alpha, masked)) in enumerate(KINDS.items()):
        y = _by_kind(ys, i)
        neg = [v for v in range(8) if row[v] <= 0 and v != masked]
        for v in range(8):
            if v == masked:
                assert not y[:, v].any(), "an unobserved entry received counts"
                continue
            lam = alpha * mu_row[v]
            if row[v] <= 0:
                support = np.arange(int(lam + 40 * np.sqrt(lam) + 40))
                pmf = stats.poisson.pmf(support, lam)
            else:
                support, pmf = exact_posterior(row[v], alpha, mu_row[v])
            out[f"{name} y[{v}]"] = chisquare_gof(y[:, v], support, pmf).pvalue
        lam = alpha * mu_row[neg].sum()
        support = np.arange(int(lam + 40 * np.sqrt(lam) + 40))
        out[f"{name} sum over Neg"] = chisquare_gof(y[:, neg].sum(axis=1), support,
                                                    stats.poisson.pmf(support, lam)).pvalue
        if name == "negative":
            dt = _by_kind(doc_topics, i)
            for k in range(PHI.shape[0]):
                lam = alpha * THETA[k] * PHI[k].sum()
                support = np.arange(int(lam + 40 * np.sqrt(lam) + 40))
                out[f"topic total {k}"] = chisquare_gof(dt[:, k], support,
                                                        stats.poisson.pmf(support, lam)).pvalue
    return out


def test_fused_draw_matches_the_exact_laws(exact_posterior):
    pvalues = _exact_checks(*_sparse_draws(), exact_posterior)
    bad = {k: p for k, p in pvalues.items() if p < FALSE_ALARM / len(pvalues)}
    assert not bad, bad


def test_exact_checks_reject_a_misread_alpha(exact_posterior):
    pvalues = _exact_checks(*_sparse_draws(alpha_scale=1.1), exact_posterior)
    assert min(pvalues.values()) < FALSE_ALARM / len(pvalues)


def test_sparse_and_dense_draws_agree():
    """Two-sample chi-square (homogeneity) of every entry's count and every topic total, per
    kind of row: the fused sparse draw and the dense privacy step + allocation."""
    sparse, dense = _sparse_draws(), _dense_draws()
    pvalues = {}
    for i, name in enumerate(KINDS):
        cols = {f"y[{v}]": (_by_kind(sparse[0], i)[:, v], _by_kind(dense[0], i)[:, v])
                for v in range(8)}
        cols.update({f"topic {k}": (_by_kind(sparse[1], i)[:, k], _by_kind(dense[1], i)[:, k])
                     for k in range(PHI.shape[0])})
        for label, (a, b) in cols.items():
            top = max(a.max(), b.max()) + 1
            table = np.stack([np.bincount(a, minlength=top), np.bincount(b, minlength=top)])
            table = table[:, table.sum(axis=0) >= 10]  # drop cells too thin for the test
            if table.shape[1] >= 2:
                pvalues[f"{name} {label}"] = stats.chi2_contingency(table).pvalue
    bad = {k: p for k, p in pvalues.items() if p < FALSE_ALARM / len(pvalues)}
    assert len(pvalues) > 30 and not bad, bad


@pytest.mark.parametrize("y_tilde,alpha,mu", [(300, 0.6, 250.0), (3, 0.1, 80.0)])
def test_positive_counts_beyond_the_inversion_range(y_tilde, alpha, mu, exact_posterior):
    """Large counts or mu / alpha > 500 take the log-space two-piece sampler."""
    y = sample_true_counts(np.full(100_000, y_tilde), alpha, np.full(100_000, mu), rng=3)
    assert chisquare_gof(y, *exact_posterior(y_tilde, alpha, mu))


# --- whole sampler -----------------------------------------------------------------------------

@pytest.mark.slow
def test_sparse_sampler_gets_it_right_with_a_mask_and_per_row_alpha():
    mask = np.zeros((3, 4), dtype=bool)
    mask[0, 1] = mask[2, 3] = True
    forward, chain = geweke_simulations(TopicModel(2, a0=3.0, b0=3.0), (3, 4), method="collapsed",
                                        alpha=np.array([[0.5], [0.7], [0.85]]), mask=mask,
                                        rng=3, sparse=True)
    result = geweke_test(forward, chain)
    assert result, f"\n{result}"


@pytest.mark.slow
def test_dense_collapsed_topic_sampler_still_gets_it_right():
    forward, chain = geweke_simulations(TopicModel(2, a0=3.0, b0=3.0), (3, 4),
                                        method=CollapsedPrivacy(), alpha=0.7, rng=4,
                                        sparse=False)
    result = geweke_test(forward, chain)
    assert result, f"\n{result}"


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_bit_identical_with_one_or_two_threads_and_the_serial_twin(threads, monkeypatch):
    rng = np.random.default_rng(5)
    mu = rng.gamma(0.3, 1.0, (160, 4)) @ rng.gamma(0.3, 1.0, (4, 120))
    alpha = rng.uniform(0.2, 0.8, (160, 1))
    y_tilde = privatize(rng.poisson(mu), 0.5, rng=rng)
    mask = rng.random(y_tilde.shape) < 0.05
    assert y_tilde.size >= sparse_topics.SERIAL_BELOW
    runs = []
    for n_threads in (1, 2):
        numba.set_num_threads(n_threads)
        runs.append(fit_private(np.ma.masked_array(y_tilde, mask), alpha, TopicModel(4),
                                method="collapsed",
                                run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9))
    monkeypatch.setattr(sparse_topics, "SERIAL_BELOW", 10**12)
    runs.append(fit_private(np.ma.masked_array(y_tilde, mask), alpha, TopicModel(4),
                            method="collapsed",
                            run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9))
    monkeypatch.undo()
    numba.set_num_threads(2)
    # other chunkings of the rows, and the int64 redraw that guards the int32 partial counts
    monkeypatch.setattr(kernels, "MAX_CHUNKS", 3)
    runs.append(fit_private(np.ma.masked_array(y_tilde, mask), alpha, TopicModel(4),
                            method="collapsed",
                            run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9))
    monkeypatch.setattr(sparse_topics, "PARTIAL_LIMIT", 0)
    runs.append(fit_private(np.ma.masked_array(y_tilde, mask), alpha, TopicModel(4),
                            method="collapsed",
                            run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9))
    monkeypatch.undo()
    # passes in many calls, each a slice of every chunk
    monkeypatch.setattr(numerics, "CALL_STEPS", 200)
    runs.append(fit_private(np.ma.masked_array(y_tilde, mask), alpha, TopicModel(4),
                            method="collapsed",
                            run=RunOptions(n_iter=4, save_counts=True, progress=False), rng=9))
    assert all(r.engine == "sparse" for r in runs)
    for other in runs[1:]:
        for k in ("theta", "phi", "y"):
            assert np.array_equal(runs[0].samples[k], other.samples[k]), k
        assert np.array_equal(runs[0].mu_hat, other.mu_hat)
        assert np.array_equal(runs[0].log_joint, other.log_joint)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_a_chain_whose_thread_count_changes_between_sweeps_re_chunks_without_new_tables(threads):
    rng = np.random.default_rng(8)
    mu = rng.gamma(0.3, 1.0, (160, 4)) @ rng.gamma(0.3, 1.0, (4, 120))
    y_tilde = privatize(rng.poisson(mu), 0.5, rng=rng)
    steady, turns = (GibbsSampler.private(y_tilde, 0.5, TopicModel(4), rng=3) for _ in range(2))
    numba.set_num_threads(2)
    steady.sweep()
    turns.sweep()
    privacy = turns._fused.privacy
    two_chunks = privacy.workspace(4)
    tables = {name: getattr(two_chunks, name)
              for name in ("col_partials", "markers", "cumulative", "free_cols", "hits")}
    for n_threads in (1, 2, 1, 2, 1):
        numba.set_num_threads(2)
        steady.sweep()
        numba.set_num_threads(n_threads)
        turns.sweep()
        ws = privacy.workspace(4)
        assert ws is two_chunks and ws.chunks == n_threads
        for name, table in tables.items():
            assert np.shares_memory(getattr(ws, name), table), name
    assert turns.engine == "sparse"
    for k in ("theta", "phi"):
        assert np.array_equal(steady.state[k], turns.state[k]), k


@pytest.mark.parametrize("n_topics", [3, 8, 13, 50])
def test_an_entrys_rate_is_summed_in_its_documented_order(n_topics):
    """The rate of an entry (the total the collapsed step and the allocation use) is the same
    float on every CPU: eight running sums in order, added pairwise, then the remainder, in
    plain double arithmetic (no reassociation, no FMA)."""
    rng = np.random.default_rng(n_topics)
    theta, phi_t = rng.gamma(0.3, size=(40, n_topics)), rng.gamma(0.3, size=(30, n_topics))
    weights, excluded = np.empty(n_topics), np.zeros(n_topics)
    for d, v in [(d, v) for d in range(40) for v in range(30)]:
        got = sparse_topics._entry_weights(theta, phi_t, d, v, excluded, weights)
        products = [float(theta[d, k]) * float(phi_t[v, k]) for k in range(n_topics)]
        whole = n_topics - n_topics % 8
        lanes = [0.0] * 8
        for k in range(whole):
            lanes[k % 8] += products[k]
        want = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + (
            (lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
        for k in range(whole, n_topics):
            want += products[k]
        assert got == want and np.array_equal(weights, products)
    np.testing.assert_allclose(excluded, 40 * phi_t.sum(axis=0), rtol=1e-12)  # each call adds


@numba.njit
def _reference_pass1_rows(indptr, cols, values, alpha_rows, theta, phi_t, phi_sums, seed,
                          iteration, first_row, row_lo, row_hi, pos_y, neg_counts, residual,
                          doc_topic, col_partial, marker):
    """Pass 1 built from its definitions: the rate of ``_entry_weights``, the collapsed draw of
    ``sample_true_count_collapsed_nb``, the split of ``allocate_entry_nb`` over
    ``row_topic_order``; the engine's kernel writes them out."""
    n_topics = theta.shape[1]
    weights = np.empty(n_topics)
    cells = np.empty(n_topics, dtype=np.int64)
    hits = np.empty(n_topics, dtype=np.int64)
    excluded = np.empty(n_topics)
    need = np.zeros(n_topics, dtype=np.bool_)
    rng = new_stream()
    for d in range(row_lo, row_hi):
        seed_block(rng, seed, iteration, first_row + d)
        order = topic_kernels.row_topic_order(theta, d)
        alpha = alpha_rows[d]
        lo, hi = indptr[d], indptr[d + 1]
        excluded[:] = 0.0
        for idx in range(lo, hi):
            v = cols[idx]
            total = sparse_topics._entry_weights(theta, phi_t, d, v, excluded, weights)
            if values[idx] <= 0:
                pos_y[idx] = 0
                continue
            y = sample_true_count_collapsed_nb(rng, values[idx], alpha, total)
            pos_y[idx] = y
            if y == 0:
                continue
            if not total > 1e-280:
                for k in range(n_topics):
                    weights[k] = np.log(theta[d, k]) + np.log(phi_t[v, k])
                total = rescale_log_weights_nb(weights)
            topic_kernels.allocate_entry_nb(rng, y, d, v, n_topics, weights, total, order, cells,
                                            hits, doc_topic, col_partial)
        for k in range(n_topics):
            residual[d, k] = phi_sums[k] - excluded[k]
            need[k] = residual[d, k] < sparse_topics.RESIDUAL_RECOMPUTE * phi_sums[k]
        if need.any():
            sparse_topics._complement_sums(cols, lo, hi, phi_t, marker, -(d + 1), need, excluded)
            for k in range(n_topics):
                if need[k]:
                    residual[d, k] = excluded[k]
            need[:] = False
        for k in range(n_topics):
            rate = alpha * theta[d, k] * residual[d, k]
            n = poisson_nb(rng, rate) if rate != 0.0 else 0
            neg_counts[d, k] = n
            doc_topic[d, k] += n


@pytest.mark.parametrize("n_topics", [5, 13, 43])
@pytest.mark.parametrize("case", ["plain", "underflow", "ties", "zeros", "counts", "rates",
                                  "nan", "deep"])
def test_pass1_is_its_definitions_written_out(case, n_topics):
    """The engine's pass-1 kernel draws what the pass built from its definitions draws, bit
    for bit, on the paths it takes out of line or rarely: log-space weights where the products
    underflow (reachable with y > 0 only at a noise level below the public floor), ties among a
    row's topics, zero weights (the walk back off them, entries of rate 0), counts above the
    token-by-token split and above LARGE_COUNT, privatized counts beyond the written-out
    inversion (log-space pieces) and rates where its bracket fails (the whole inversion at the
    same uniform), NaN and infinite factors (the failure mark), and unobserved entries; with
    fewer topics than the eagerly summed ones and more, over several blocks of them; and where
    most tokens lie beyond the first blocks ("deep": the row's heaviest topics have the
    lightest words)."""
    rng = np.random.default_rng(n_topics)
    n_rows, n_cols = 40, 30
    y_tilde = privatize(rng.poisson(2.0, (n_rows, n_cols)), 0.5, rng=rng)
    observed = rng.random(y_tilde.shape) < 0.85
    alpha_rows = rng.uniform(0.3, 0.9, n_rows)
    theta = rng.gamma(0.3, 1.0, (n_rows, n_topics))
    phi = rng.gamma(0.3, 1.0, (n_topics, n_cols))
    if case == "underflow":  # subnormal products (their ratios lose digits), rates near alpha
        alpha_rows[:12] = 1e-323
        theta[:12] *= 1e-150
        phi[:, :15] *= 1e-172
    elif case == "ties":
        theta[3] = theta[3, 0]
        theta[4, ::2] = theta[4, 1]
    elif case == "zeros":
        phi[:, 5] = 0.0
        theta[6, :3] = 0.0
        phi[:3, 7] = 0.0
    elif case == "counts":
        y_tilde[0, :6] = [FEW_TRIALS + 3, 40, LARGE_COUNT + 7, 300, 5000, 257]
        y_tilde[1, :3] = [FEW_TRIALS, FEW_TRIALS + 1, 2 * FEW_TRIALS]
        observed[:2, :6] = True
        theta[:2] *= 3e4
        alpha_rows[:2] = 0.9
    elif case == "rates":  # alpha mu above y~ + 2 (the bracket fails), and mu above 500 alpha
        theta *= 40.0
        alpha_rows[::2] = 0.95
        alpha_rows[1::4] = 0.01
    elif case == "nan":
        theta[2, 1] = np.nan
        theta[5, 0] = np.inf
    elif case == "deep":  # the row's order is 0, 1, ...; the weights grow along it
        theta = np.broadcast_to(0.8 ** np.arange(n_topics), theta.shape).copy()
        phi *= 0.7 ** -np.arange(n_topics)[:, None]
    layout = sparse_topics.SparseLayout(y_tilde, observed, alpha_rows)
    phi_t = np.ascontiguousarray(phi.T)
    phi_sums = phi.sum(axis=1)
    runs = []
    for kernel in ("engine", "reference"):
        out = (np.full(layout.nnz, -7, dtype=np.int64), np.zeros(n_rows),
               np.zeros((n_rows, n_topics), dtype=np.int64), np.zeros((n_rows, n_topics)),
               np.zeros((n_rows, n_topics), dtype=np.int64),
               np.zeros((n_cols, n_topics), dtype=np.int32), np.zeros(n_cols, dtype=np.int64))
        pos_y, row_drawn, *rest = out
        args = (layout.indptr, layout.cols, layout.values, layout.alpha_rows, theta, phi_t,
                phi_sums, 1234, 3, 0, 0, n_rows, pos_y)
        if kernel == "engine":
            sparse_topics._pass1_rows(*args, row_drawn, *rest)
            assert np.array_equal(row_drawn < 0, [np.any(pos_y[a:b] < 0) for a, b in
                                                   zip(layout.indptr[:-1], layout.indptr[1:])])
        else:
            _reference_pass1_rows(*args, *rest)
        runs.append(out[:1] + out[2:6])
    for got, want in zip(*runs):
        assert np.array_equal(got, want)
    if case == "deep":  # tokens reached the last block and the rest
        split = runs[0][4].sum(axis=0)  # the positive entries' tokens by topic
        rest = n_topics - n_topics % topic_kernels.EAGER_SUMS  # the rest is scanned a sum at a time
        assert split[rest:].sum() > 0
        assert rest == 0 or split[rest - topic_kernels.EAGER_SUMS:rest].sum() > 0
    pos_y = runs[0][0]
    if case == "counts":
        assert pos_y[:layout.indptr[2]].max() > LARGE_COUNT
    if case == "nan":
        assert (pos_y == -1).any()
    if case == "underflow":
        rows = np.repeat(np.arange(n_rows), np.diff(layout.indptr))
        assert (pos_y[rows < 12] > 0).sum() > 20


def test_chunks_cover_the_rows_in_shares_of_equal_work():
    rng = np.random.default_rng(2)
    per_row = rng.zipf(1.6, 500).clip(max=300)
    per_row[:100] += 200  # long rows first: equal numbers of rows would be 10,000 units off
    indptr = np.concatenate(([0], np.cumsum(per_row)))
    n_topics, chunks = 20, 8
    bounds = sparse_topics.chunk_bounds(indptr, n_topics, chunks)
    assert bounds[0] == 0 and bounds[-1] == 500 and np.all(np.diff(bounds) >= 0)
    assert bounds.size == chunks + 1
    work = per_row + n_topics
    shares = np.add.reduceat(work, bounds[:-1])[np.diff(bounds) > 0]
    # each share is within one row's work of the ideal
    assert np.all(np.abs(shares - work.sum() / chunks) <= work.max())


def test_chunks_take_the_rows_work_where_given():
    """With each row's own work given (the known-counts engine: tokens as well as entries),
    the shares are equal in it, not in entries."""
    rng = np.random.default_rng(5)
    per_row = rng.integers(10, 20, 600)
    row_work = per_row * np.where(np.arange(600) < 100, 30.0, 1.0)  # the first rows' tokens
    indptr = np.concatenate(([0], np.cumsum(per_row)))
    chunks = 6
    bounds = sparse_topics.chunk_bounds(indptr, 20, chunks, row_work=row_work)
    assert bounds[0] == 0 and bounds[-1] == 600 and bounds.size == chunks + 1
    shares = np.add.reduceat(row_work, bounds[:-1])
    assert np.all(np.abs(shares - row_work.sum() / chunks) <= row_work.max())
    by_entries = np.add.reduceat(row_work, sparse_topics.chunk_bounds(indptr, 20, chunks)[:-1])
    assert by_entries.max() > 2 * row_work.sum() / chunks  # what the entries alone would do


def test_each_call_takes_a_share_of_every_chunk(monkeypatch):
    """Every call runs rows of every chunk (all threads busy in each), the calls cover each
    chunk's rows once and in order, and none holds much more than its budget."""
    rng = np.random.default_rng(4)
    per_row = rng.zipf(1.5, 400).clip(max=500).astype(float)
    indptr = np.concatenate(([0], np.cumsum(per_row))).astype(np.int64)
    bounds = sparse_topics.chunk_bounds(indptr, 10, 8)
    assert len(sparse_topics.chunked_calls(bounds, per_row)) == 1
    monkeypatch.setattr(numerics, "CALL_STEPS", per_row.sum() / 5)
    calls = sparse_topics.chunked_calls(bounds, per_row)
    assert 5 <= len(calls) <= 6
    for c in range(bounds.size - 1):
        rows = np.concatenate([np.arange(starts[c], ends[c]) for starts, ends in calls])
        assert np.array_equal(rows, np.arange(bounds[c], bounds[c + 1]))
    for starts, ends in calls:
        assert starts.size == ends.size == bounds.size - 1
        work = sum(per_row[a:b].sum() for a, b in zip(starts, ends))
        assert work <= per_row.sum() / 5 + (bounds.size - 1) * per_row.max()
    busy = np.mean([np.count_nonzero(ends > starts) for starts, ends in calls])
    assert busy >= 6  # most chunks have rows in every call (a chunk of one heavy row cannot)


def test_engine_selection(topic_data):
    _, _, y_tilde, alpha = topic_data

    class OwnRates(TopicModel):
        def rate(self, state):
            return super().rate(state)

    def engine(*args, **kwargs):
        return GibbsSampler.private(y_tilde, *args, rng=1, **kwargs).engine

    assert engine(alpha, TopicModel(3)) == "sparse"
    assert engine(np.full((30, 1), alpha), TopicModel(3)) == "sparse"
    assert engine(np.full((30, 25), alpha), TopicModel(3)) == "dense"  # per-entry alpha
    assert engine(alpha, TopicModel(3), method="bessel") == "dense"
    assert engine(alpha, OwnRates(3)) == "dense"
    assert engine(alpha, TopicModel(3), sparse=False) == "dense"
    with pytest.raises(ValueError, match="sparse=True"):
        engine(np.full((30, 25), alpha), TopicModel(3), sparse=True)
    with pytest.raises(TypeError, match="sparse"):
        engine(alpha, TopicModel(3), sparse="yes")


def test_a_draw_is_made_once_and_only_after_allocation(topic_data):
    _, _, y_tilde, alpha = topic_data
    step = sparse_topics.SparseTopicPrivacy(y_tilde, noise_levels(alpha, y_tilde.shape),
                                            np.ones(y_tilde.shape, dtype=bool))
    draw = step.sample(1, 0)
    with pytest.raises(RuntimeError, match="realize"):
        draw.dense()
    theta, phi = np.ones((30, 3)), np.ones((3, 25))
    draw.realize(theta, phi)
    with pytest.raises(RuntimeError, match="already"):
        draw.realize(theta, phi)
    with pytest.raises(ValueError, match="do not fit"):
        step.sample(1, 1).realize(np.ones((30, 2)), phi)


def test_bulk_split_of_many_tokens_matches_the_exact_laws(exact_posterior, monkeypatch):
    # every (row, topic) with Neg(d) tokens split by one multinomial over Neg(d)'s columns
    monkeypatch.setattr(sparse_topics, "BULK_MIN", 0)
    monkeypatch.setattr(sparse_topics, "BULK_PER_COLUMN", 0)
    ys, doc_topics = _sparse_draws()
    pvalues = _exact_checks(ys, doc_topics, exact_posterior)
    bad = {k: p for k, p in pvalues.items() if p < FALSE_ALARM / len(pvalues)}
    assert not bad, bad
    for y, doc_topic in zip(ys, doc_topics):
        assert np.array_equal(y.sum(axis=1), doc_topic.sum(axis=1))


def test_huge_noise_token_counts_are_split_in_bulk_not_listed_one_by_one():
    """Counts near 1e7 beside non-positive entries: with rank-1 factors fitted to them (a rate of
    about 5e6 everywhere), each non-positive entry gets millions of noise tokens, 4e9 in a
    sweep, which listed one by one would take 16 GB of token columns and minutes. The rows
    whose non-positive entries hold that many are split in bulk: few tokens are listed, and the
    counts still add up row by row."""
    y_tilde = np.where(np.add.outer(np.arange(40), np.arange(40)) % 2 == 0, 10**7, -3)
    step = sparse_topics.SparseTopicPrivacy(y_tilde, noise_levels(0.5, y_tilde.shape),
                                            np.ones(y_tilde.shape, dtype=bool))
    rate = y_tilde.clip(0).mean()
    theta, phi = np.full((40, 1), np.sqrt(rate)), np.full((1, 40), np.sqrt(rate))
    draw = step.sample(1, 0)
    doc_topic, _ = draw.realize(theta, phi)
    negative_tokens = doc_topic.sum() - draw.pos_y.sum()
    assert negative_tokens > 1e9  # the case is as heavy as it says
    bulk_ptr, _, bulk_counts = draw.bulk
    assert draw.token_cols.size == 0 and np.all(np.diff(bulk_ptr) > 0)  # every row in bulk
    assert bulk_counts.sum() == negative_tokens
    assert np.array_equal(draw.dense().sum(axis=1), doc_topic.sum(axis=1))


@pytest.mark.parametrize("small", [False, True])
def test_pass2_plan_is_its_definition_row_by_row(small):
    """Which topic totals pass 2 splits in bulk, its tokens, bulk columns and work per row, and
    the totals' sum for the failure check, against their definitions over the whole D x K
    tables (the thresholds' edges and a failed draw's mark -1 included)."""
    rng = np.random.default_rng(3)
    n_rows, n_cols, n_topics = 40, 30, 7
    indptr = np.concatenate(([0], np.cumsum(rng.integers(0, n_cols + 1, n_rows))))
    n_free = n_cols - np.diff(indptr)
    threshold = np.maximum(sparse_topics.BULK_MIN, sparse_topics.BULK_PER_COLUMN * n_free)
    neg_counts = rng.integers(0, 4, (n_rows, n_topics))
    edge = rng.random((n_rows, n_topics))
    neg_counts[edge < 0.2] = threshold[:, None].repeat(n_topics, 1)[edge < 0.2]
    neg_counts[edge > 0.8] = threshold[:, None].repeat(n_topics, 1)[edge > 0.8] + 1
    phi_sums = rng.random(n_topics) + 0.5
    residual = rng.random((n_rows, n_topics)) * phi_sums
    bulk = np.empty((n_rows, n_topics), dtype=np.bool_)
    row_tokens, row_bulk, row_steps = (np.empty(n_rows, dtype=np.int64) for _ in range(3))
    row_drawn = np.empty(n_rows)
    neg_counts[5, 3] = -1  # a failed draw's mark
    sparse_topics._pass2_plan[small](indptr, n_cols, neg_counts, residual, phi_sums, bulk,
                                     row_tokens, row_bulk, row_steps, row_drawn)
    np.testing.assert_array_equal(row_drawn, np.where((neg_counts < 0).any(axis=1), -1,
                                                      neg_counts.sum(axis=1)))
    neg_counts[5, 3] = 0
    sparse_topics._pass2_plan[small](indptr, n_cols, neg_counts, residual, phi_sums, bulk,
                                     row_tokens, row_bulk, row_steps, row_drawn)
    want_bulk = neg_counts > threshold[:, None]
    np.testing.assert_array_equal(bulk, want_bulk)
    assert want_bulk.any() and not want_bulk.all()
    np.testing.assert_array_equal(row_tokens, np.where(want_bulk, 0, neg_counts).sum(axis=1))
    np.testing.assert_array_equal(row_bulk, np.where(want_bulk.any(axis=1), n_free, 0))
    inverted = ((neg_counts > 0) & ~want_bulk
                & (residual < sparse_topics.ALIAS_MIN_ACCEPTANCE * phi_sums))
    assert inverted.any() and not inverted.all()
    np.testing.assert_array_equal(row_steps, row_tokens + row_bulk * (want_bulk.sum(axis=1) + 1)
                                  + inverted.sum(axis=1) * n_cols + np.diff(indptr))
