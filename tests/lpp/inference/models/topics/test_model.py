"""The topic model: its allocation is the multinomial, its updates the conjugate Gammas, and
its expected allocation (init="em") sums in one fixed order."""
import numpy as np
import pytest
from scipy import stats

from lpp.inference.models import Observed, TopicModel
from lpp.testing import FALSE_ALARM


@pytest.mark.parametrize("count", [1, 4])
def test_topic_allocation_matches_the_multinomial(count, multinomial_split):
    """One entry's split over topics is Mult(y, theta[d] * phi[:, v] / mu) — chi-square, with
    power. The scan visits the topics heaviest theta first (here 1, 2, 3, 0) and skips the
    topic of zero weight."""
    model = TopicModel(4)
    state = {"theta": np.array([[0.5, 2.0, 1.0, 0.7]]),
             "phi": np.array([[1.0], [0.25], [3.0], [0.0]])}
    y = np.array([[count]])
    obs = Observed(np.ones((1, 1), dtype=bool))
    draws = np.array([model.allocate(state, y, obs, 7, t)["doc_topic"][0] for t in range(20_000)])
    assert np.all(draws[:, 3] == 0)
    assert multinomial_split(draws[:, :3], count, np.array([0.5, 0.5, 3.0]) / 4.0)
    assert not multinomial_split(draws[:, :3], count, [0.2, 0.05, 0.75])


def test_topic_update_draws_the_conjugate_gammas():
    """phi | counts, theta ~ Gamma(a0 + n_kv, b0 + sum_d theta[d, k]); then
    theta | counts, phi ~ Gamma(a0 + n_dk, b0 + sum_v phi[k, v]) — checked by KS against scipy."""
    model = TopicModel(2, a0=0.1, b0=1.0)
    state = {"theta": np.ones((1, 2)), "phi": np.ones((2, 2))}
    counts = {"doc_topic": np.array([[3, 0]]), "topic_word": np.array([[0, 3], [0, 0]])}
    obs = Observed(np.ones((1, 2), dtype=bool))
    draws = [model.update_latents(state, counts, obs, 11, t) for t in range(20_000)]
    phi = np.array([d["phi"] for d in draws])
    theta = np.array([d["theta"][0, 0] for d in draws])
    phi_rate = 1.0 + 1.0  # b0 + sum_d theta[d, k], theta = 1
    assert stats.kstest(phi[:, 0, 1], stats.gamma(3.1, scale=1 / phi_rate).cdf).pvalue > FALSE_ALARM
    assert stats.kstest(phi[:, 1, 0], stats.gamma(0.1, scale=1 / phi_rate).cdf).pvalue > FALSE_ALARM
    rng = np.random.default_rng(0)
    phi_row = rng.gamma(0.1, 1 / phi_rate, 200_000) + rng.gamma(3.1, 1 / phi_rate, 200_000)
    reference = rng.gamma(3.1, 1.0 / (1.0 + phi_row))
    assert stats.ks_2samp(theta, reference).pvalue > FALSE_ALARM
    # power: the same check rejects a rate that forgets b0
    assert stats.ks_2samp(theta, rng.gamma(3.1, 1.0 / phi_row)).pvalue < FALSE_ALARM


def _expected_allocation_in_order(theta, phi, y, obs):
    """The topic expectation kernel's sums in their documented order, in Python floats."""
    n_docs, k = theta.shape
    doc_topic, topic_word = np.zeros((n_docs, k)), np.zeros((k, phi.shape[1]))
    for d in range(n_docs):
        acc = [0.0] * k
        for v in range(phi.shape[1]):
            if y[d, v] <= 0 or not obs[d, v]:
                continue
            mu = 0.0
            for kk in range(k):
                mu += float(theta[d, kk]) * float(phi[kk, v])
            ratio = int(y[d, v]) / mu
            for kk in range(k):
                acc[kk] += ratio * float(phi[kk, v])
                topic_word[kk, v] += float(theta[d, kk]) * ratio
        doc_topic[d] = [float(theta[d, kk]) * acc[kk] for kk in range(k)]
    return doc_topic, topic_word


def _unaligned(a):
    """A copy of ``a`` at an address that is not a multiple of 8, as Dask may hand a worker."""
    buf = np.empty(a.nbytes + 8, dtype=np.uint8)
    start = (3 - buf.ctypes.data) % 8
    out = buf[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def test_expected_allocation_sums_in_a_fixed_order_whatever_the_layout_or_split():
    """The expectation step of init="em" is the same float for any memory layout, thread
    count or row split (the distributed chain runs it on its workers' rows, with factors that
    arrive unaligned): the order of every sum is fixed by the kernel, not by a BLAS kernel."""
    import numba

    from lpp.inference.numerics import SERIAL_BELOW
    from lpp.inference.models.topics.kernels import expected_allocation

    rng = np.random.default_rng(12)
    n_docs, n_words, k = 1100, 40, 5  # blocks of 512 rows x 40 columns: the parallel twin
    assert 512 * n_words >= SERIAL_BELOW
    y = rng.poisson(0.7, (n_docs, n_words))
    obs = rng.random((n_docs, n_words)) > 0.1
    theta, phi = rng.gamma(0.5, size=(n_docs, k)), rng.gamma(0.5, size=(k, n_words))
    want_doc, want_word = _expected_allocation_in_order(theta, phi, y, obs)
    before = numba.get_num_threads()
    try:
        for n_threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(n_threads)
            for t, p in [(theta, phi), (np.asfortranarray(theta), np.asfortranarray(phi)),
                         (_unaligned(theta), _unaligned(phi))]:
                topic_word = np.zeros((k, n_words))
                doc_topic = expected_allocation(t, p, y, obs, topic_word)
                assert np.array_equal(doc_topic, want_doc)
                assert np.array_equal(topic_word, want_word)
    finally:
        numba.set_num_threads(before)
    # a run over rows [lo, hi) continues the running sum of the rows before it exactly
    topic_word, parts = np.zeros((k, n_words)), []
    for lo, hi in [(0, 300), (300, 301), (301, 777), (777, n_docs)]:
        parts.append(expected_allocation(_unaligned(theta[lo:hi]), phi, y[lo:hi], obs[lo:hi],
                                         topic_word))
    assert np.array_equal(np.concatenate(parts), want_doc)
    assert np.array_equal(topic_word, want_word)
