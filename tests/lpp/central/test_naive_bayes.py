"""Naive Bayes (one-state HMM): Geweke test of the conjugate draw, the OPS law, release, errors."""
import numpy as np
import pytest
from scipy import stats

from lpp.central import hmm
from lpp.central import naive_bayes as nb
from lpp.central.conjugate import truncated_beta_cdf
from lpp.testing import FALSE_ALARM, geweke_test

KS = (2, 3)
GAMMA = 2.0
N_RECORDS = 6


def test_posterior_draw_gets_it_right():
    gen = np.random.default_rng(41)

    def data(phi):
        return tuple(gen.multinomial(N_RECORDS, p[0]).astype(float) for p in phi)

    def functions(phi, c):
        return {"phi0[0]": phi[0][0, 0], "phi1[2]": phi[1][0, 2], "c0[0]": c[0][0],
                "c1[1]": c[1][1]}

    forward, chain = [], []
    for _ in range(10_000):
        phi = tuple(gen.dirichlet(np.full(k, GAMMA))[None] for k in KS)
        forward.append(functions(phi, data(phi)))
    phi = tuple(gen.dirichlet(np.full(k, GAMMA))[None] for k in KS)
    c = data(phi)
    for _ in range(10_000):
        phi = nb.sample_posterior(c, gamma=GAMMA, rng=gen)
        c = data(phi)
        chain.append(functions(phi, c))
    collect = lambda rows: {k: np.array([r[k] for r in rows]) for k in rows[0]}  # noqa: E731
    assert geweke_test(collect(forward), collect(chain))


def test_ops_draw_is_the_tempered_truncated_law():
    totals = (np.array([30.0, 2.0]),)
    a0, t = hmm.ops_settings((2,), 1.0, 10)
    draws = nb.sample_posterior(totals, n_samples=20_000, temperature=t, a0=a0, rng=42)[0][:, 0]
    a, b = (totals[0] + 1.0 - 1.0) / t + 1.0
    cdf = lambda x: truncated_beta_cdf(x, a, b, a0[0], 1 - a0[0])  # noqa: E731
    assert stats.kstest(draws, cdf).pvalue > FALSE_ALARM


def test_release_and_loglik():
    counts = (np.array([[3, 1], [0, 4]]), np.array([[1, 1, 2], [2, 2, 0]]))
    totals = nb.field_totals(counts)
    np.testing.assert_array_equal(totals[0], [3, 5])
    released = nb.release_laplace(totals, 2.0, rng=1)
    assert all(np.all(r >= 0) for r in released)
    phi = (np.array([0.25, 0.75]), np.array([0.2, 0.3, 0.5]))
    want = 3 * np.log(0.25) + 5 * np.log(0.75) + 3 * np.log(0.2) + 3 * np.log(0.3) + 2 * np.log(0.5)
    assert nb.heldout_loglik(counts, phi) == pytest.approx(want)
    with pytest.raises(ValueError, match="epsilon"):
        nb.release_laplace(totals, 0.0)
    with pytest.raises(ValueError, match="temperature"):
        nb.sample_posterior(totals, temperature=0.5)
    with pytest.raises(ValueError, match="a0"):
        nb.sample_posterior(totals, temperature=2.0, a0=(0.1,))


def test_field_totals_are_summed_exactly_and_never_wrapped():
    """Steps of 2**53 and 1 add up to 2**53 + 1 (float64 would give 2**53); 1,024 steps of
    2**53 add up to 2**63, which int64 cannot hold: refused, naming the field, not wrapped."""
    totals = nb.field_totals((np.array([[2**53, 0], [1, 2]]),))
    assert totals[0].dtype == np.int64
    assert [int(v) for v in totals[0]] == [2**53 + 1, 2]
    with pytest.raises(ValueError, match=r"^counts\[0\] add up to 9223372036854775808"):
        nb.field_totals((np.full((1024, 2), 2**53),))
    with pytest.raises(TypeError, match=r"^counts\[1\] must "):
        nb.field_totals((np.ones((3, 2), dtype=np.int64), np.ones((3, 2), dtype="m8[s]")))


def test_release_errors_name_the_callers_totals():
    """A released field is ``totals[d]`` in every error, never the helper's ``counts``; a
    total of 2**53 + 1 is refused (the posteriors read it as float64), not rounded to 2**53."""
    with pytest.raises(ValueError, match=r"^totals\[1\] beyond MAX_STATISTIC = 2\*\*53"):
        nb.release_laplace((np.array([3, 4]), np.array([2**53 + 1, 0])), 1.0, rng=1)
    with pytest.raises(TypeError, match=r"^totals\[0\] must "):
        nb.release_laplace((np.array([3, 4], dtype="m8[s]"),), 1.0, rng=1)
    with pytest.raises(TypeError, match=r"^totals\[0\] must "):
        nb.release_laplace(([True, 4],), 1.0, rng=1)
    with pytest.raises(ValueError, match=r"^totals holds no field"):
        nb.release_laplace((), 1.0)
    released = nb.release_laplace((np.array([2**53, 0]),), 1.0, rng=4)[0]
    raw = nb.mechanisms.privatize_counts(np.array([2**53, 0]), 1.0, project="none", rng=4)
    assert released.dtype == np.int64
    assert [int(v) for v in released] == [max(int(v), 0) for v in raw]
