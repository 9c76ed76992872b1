"""The naive-Bayes HMM Gibbs sampler (transitions collapsed, emissions sampled).

* Geweke (2004) joint-distribution test of the non-private sampler on a tiny problem.
* The Laplace route conditions on released, non-integer statistics and the OPS route on a
  tempered, truncated posterior: neither is the posterior of a generative model, so each
  chain is compared with exact draws of its target, obtained by enumerating the latent
  states with ``phi`` integrated out (closed form for Dirichlets; for truncated Betas with
  the incomplete beta function), through the same batch-means test (``geweke_test``).
* Power: the same comparison rejects a chain run at the wrong temperature.
"""
import itertools

import numpy as np
import pytest
from scipy import special

from lpp.central import hmm, mechanisms
from lpp.testing import geweke_test

CHAIN = np.array([0, 0, 0, 1, 1])
PREV, NEXT = hmm.chain_neighbours(CHAIN)
N_RECORDS = np.array([3, 2, 3, 2, 3])
KS = (2, 3)
S = 2
BETA, GAMMA = 1.0, 2.0


def _forward_states(gen):
    z = np.empty(CHAIN.size, dtype=np.int64)
    n = np.zeros((S, S))
    for t in range(CHAIN.size):
        if PREV[t] < 0:
            z[t] = gen.integers(S)
        else:
            w = n[z[PREV[t]]] + BETA
            z[t] = gen.choice(S, p=w / w.sum())
            n[z[PREV[t]], z[t]] += 1
    return z


def _data(z, phi, gen):
    return tuple(np.stack([gen.multinomial(N_RECORDS[t], p[z[t]]) for t in range(z.size)])
                 .astype(float) for p in phi)


def _functions(z, phi, counts):
    return {"phi0[0,0]": phi[0][0, 0], "phi0[1,0]": phi[0][1, 0], "phi1[0,2]": phi[1][0, 2],
            "mean z": z.mean(), "switches": np.sum(z[1:] != z[:-1]),
            "c0[0,0]": counts[0][0, 0], "c1[2,1]": counts[1][2, 1]}


def _collect(rows):
    return {k: np.array([r[k] for r in rows]) for k in rows[0]}


@pytest.mark.slow
def test_nonprivate_sampler_gets_it_right():
    gen = np.random.default_rng(21)
    forward = []
    for _ in range(10_000):
        z = _forward_states(gen)
        phi = tuple(gen.dirichlet(np.full(k, GAMMA), size=S) for k in KS)
        forward.append(_functions(z, phi, _data(z, phi, gen)))
    z = _forward_states(gen)
    phi = tuple(gen.dirichlet(np.full(k, GAMMA), size=S) for k in KS)
    counts = _data(z, phi, gen)
    chain = []
    for _ in range(10_000):
        fit = hmm.fit_hmm(counts, CHAIN, S, n_iter=1, burn_in=0, beta=BETA, gamma=GAMMA,
                          init=(z, phi), rng=gen)
        z, phi = fit.z[-1], fit.phi
        counts = _data(z, phi, gen)
        chain.append(_functions(z, phi, counts))
    result = geweke_test(_collect(forward), _collect(chain))
    assert result, f"\n{result}"


# ---------------------------------------------------------------- exact targets by enumeration


def _log_marginal_dirichlet(alpha_post, gamma):
    return np.sum(special.gammaln(alpha_post)) - special.gammaln(alpha_post.sum()) \
        - (alpha_post.size * special.gammaln(gamma) - special.gammaln(alpha_post.size * gamma))


def _log_marginal_truncated_beta(n, gamma, temperature, a0):
    a, b = (gamma + n - 1) / temperature + 1  # tempered prior x likelihood
    mass = special.betainc(a, b, 1 - a0) - special.betainc(a, b, a0)
    return special.betaln(a, b) + np.log(mass)


def _enumerate(counts, temperature=1.0, a0=None):
    """All state sequences and their probabilities under the (tempered) target."""
    configs = np.array(list(itertools.product(range(S), repeat=CHAIN.size)))
    logp = []
    for z in configs:
        lp = hmm.log_prior_states(z, PREV, S, BETA) / temperature
        for c in counts:
            for s in range(S):
                n = c[z == s].sum(axis=0)
                if a0 is None:
                    lp += _log_marginal_dirichlet(GAMMA + n, GAMMA)
                else:
                    lp += _log_marginal_truncated_beta(n, GAMMA, temperature, a0)
        logp.append(lp)
    logp = np.array(logp)
    return configs, np.exp(logp - special.logsumexp(logp))


def _state_functions(z):
    return {"mean z": z.mean(), "z0": z[0], "z2": z[2], "switches": np.sum(z[1:] != z[:-1]),
            "z0==z4": float(z[0] == z[4])}


def _compare(counts, chain_temperature, target_temperature=None, a0=None, seed=0):
    target_temperature = chain_temperature if target_temperature is None else target_temperature
    configs, probs = _enumerate(counts, target_temperature, a0)
    gen = np.random.default_rng(seed)
    draws = configs[gen.choice(len(configs), size=20_000, p=probs)]
    forward = _collect([_state_functions(z) for z in draws])
    a0s = None if a0 is None else (a0,) * len(counts)
    fit = hmm.fit_hmm(counts, CHAIN, S, n_iter=20_500, burn_in=500,
                      temperature=chain_temperature, a0=a0s, beta=BETA, gamma=GAMMA, rng=seed)
    chain = _collect([_state_functions(z) for z in fit.z])
    return geweke_test(forward, chain)


RELEASED = (np.array([[2.7, 0.0], [0.4, 1.9], [3.3, 0.2], [0.0, 2.6], [1.1, 1.8]]),
            np.array([[0.0, 2.2, 1.3], [1.6, 0.0, 0.5], [0.0, 3.1, 0.9], [2.5, 0.3, 0.0],
                      [0.0, 0.7, 2.4]]))


@pytest.mark.slow
def test_laplace_route_targets_the_posterior_given_released_statistics():
    result = _compare(RELEASED, 1.0, seed=31)
    assert result, f"\n{result}"


BINARY = (np.array([[3, 0], [2, 0], [0, 3], [0, 2], [1, 2]], dtype=float),
          np.array([[2, 1], [2, 0], [0, 3], [1, 1], [0, 3]], dtype=float))


@pytest.mark.slow
def test_ops_route_targets_the_tempered_truncated_posterior():
    result = _compare(BINARY, 1.7, a0=0.1, seed=32)
    assert result, f"\n{result}"


@pytest.mark.slow
def test_comparison_rejects_the_wrong_temperature():
    assert not _compare(BINARY, 1.0, target_temperature=3.0, a0=0.1, seed=33)


# ---------------------------------------------------------------- API


def test_errors_and_settings():
    counts = (np.ones((5, 2)), np.ones((5, 3)))
    with pytest.raises(ValueError, match="steps"):
        hmm.fit_hmm(counts, np.zeros(4), 2)
    with pytest.raises(ValueError, match="contiguous"):
        hmm.chain_neighbours([0, 1, 0])
    with pytest.raises(ValueError, match="temperature"):
        hmm.fit_hmm(counts, CHAIN, 2, temperature=0.5)
    with pytest.raises(ValueError, match="a0"):
        hmm.fit_hmm(counts, CHAIN, 2, temperature=2.0, a0=(0.1, 0.4))
    with pytest.raises(ValueError, match="test_counts"):
        hmm.fit_hmm(counts, CHAIN, 2, heldout=np.r_[True, False, False, False, False])
    with pytest.raises(ValueError, match="counts\\[1\\]"):
        hmm.fit_hmm((np.ones((5, 2)), -np.ones((5, 3))), CHAIN, 2)
    with pytest.raises(ValueError, match="integers"):
        hmm.release_laplace((np.full((5, 2), 0.5),), 1.0)
    a0, t = hmm.ops_settings((2, 4), 1.0, 10)
    assert a0 == (1 / 20, 1 / 40)
    assert t == pytest.approx(2 * (np.log(19.0) + np.log(37.0)))


def test_fit_is_reproducible_and_reports_heldout_loglik():
    gen = np.random.default_rng(5)
    counts = (gen.integers(0, 5, size=(5, 2)).astype(float),)
    held = np.array([False, True, False, False, True])
    a = hmm.fit_hmm(counts, CHAIN, 2, n_iter=30, burn_in=10, heldout=held, test_counts=counts,
                    rng=7)
    b = hmm.fit_hmm(counts, CHAIN, 2, n_iter=30, burn_in=10, heldout=held, test_counts=counts,
                    rng=7)
    np.testing.assert_array_equal(a.z, b.z)
    np.testing.assert_array_equal(a.heldout_loglik, b.heldout_loglik)
    assert a.heldout_loglik.shape == (20,) and np.all(a.heldout_loglik < 0)
    np.testing.assert_allclose(a.occupancy().sum(), 1.0)


def test_compiled_sweep_matches_its_python_twin():
    gen = np.random.default_rng(9)
    chain = np.repeat([0, 1, 2], [7, 1, 12])
    prev, nxt = hmm.chain_neighbours(chain)
    z0 = gen.integers(0, 4, size=chain.size)
    loglik = gen.normal(0, 3, size=(chain.size, 4))
    n0 = np.zeros((4, 4))
    np.add.at(n0, (z0[prev[prev >= 0]], z0[prev >= 0]), 1.0)
    for temperature in (1.0, 2.5):
        z1, z2, n1, n2 = z0.copy(), z0.copy(), n0.copy(), n0.copy()
        hmm._sweep_states(z1, loglik, prev, nxt, n1, 0.7, temperature, np.random.default_rng(3))
        hmm._sweep_states_py(z2, loglik, prev, nxt, n2, 0.7, temperature,
                             np.random.default_rng(3))
        np.testing.assert_array_equal(z1, z2)
        np.testing.assert_array_equal(n1, n2)
        assert not np.array_equal(z1, z0)


def test_release_is_reproducible_integer_valued_and_clipped():
    counts = (np.array([[3, 0], [1, 4]]), np.array([[0, 2, 1], [5, 0, 0]]))
    a = hmm.release_laplace(counts, 1.0, rng=3)
    b = hmm.release_laplace(counts, 1.0, rng=3)
    for x, y, c in zip(a, b, counts):
        np.testing.assert_array_equal(x, y)
        assert x.shape == c.shape and np.all(x >= 0) and np.all(x == np.round(x))
    with pytest.raises(ValueError, match="categories"):
        hmm.fit_hmm(counts, [0, 0], 2, heldout=[True, False],
                    test_counts=(np.ones((2, 2)), np.ones((2, 4))))


def test_release_reads_counts_exactly_and_names_the_callers_field():
    """A count of 2**53 + 1 went through float64 and was released as 2**53 + noise; now it is
    refused by name. Durations and bools are not counts; released counts are exact int64."""
    with pytest.raises(ValueError, match=r"^counts\[0\] beyond MAX_STATISTIC = 2\*\*53"):
        hmm.release_laplace((np.array([[2**53 + 1, 0], [1, 0]]),), 1.0, rng=1)
    with pytest.raises(TypeError, match=r"^counts\[1\] must "):
        hmm.release_laplace((np.ones((2, 2), dtype=np.int64), np.ones((2, 2), dtype="m8[s]")),
                            1.0, rng=1)
    with pytest.raises(TypeError, match=r"^counts\[0\] must "):
        hmm.release_laplace(([[True, 0], [1, 0]],), 1.0, rng=1)
    counts = (np.array([[2**53, 0], [1, 5]]),)
    released = hmm.release_laplace(counts, 1.0, rng=6)[0]
    raw = mechanisms.privatize_counts(counts[0], 1.0, project="none", rng=6)
    assert released.dtype == np.int64
    assert [int(v) for v in released.ravel()] == [max(int(v), 0) for v in raw.ravel()]
