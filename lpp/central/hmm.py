"""A naive-Bayes hidden Markov model of categorical event records, by Gibbs sampling.

Data: chains (e.g. regions) of time steps (e.g. months); at each step a bag of records, each
with ``D`` categorical fields. The model gives every step a latent state ``z`` that follows a
Markov chain (transition rows ``~ Dirichlet(beta)``, uniform initial state) and draws the
step's records iid, fields independent given the state: field ``d`` of a record in state
``s`` is ``Categorical(phi[s, d])``, ``phi[s, d] ~ Dirichlet(gamma)``. The data enter only
through the per-step field counts ``c[t, d, k]`` — the sufficient statistics.

The sampler (Foulds et al., Section 5) collapses the transitions (Goldwater & Griffiths
2007) and samples the emission parameters ``phi`` explicitly, so each ``phi`` update is a
conjugate exponential-family draw. Three routes share it:

* non-private: the true counts;
* Laplace: counts released once by :func:`release_laplace` (every field's counts over all
  steps privatised with ``epsilon / D``; relation ``"replace"``); the chain then costs
  nothing more, and targets the posterior with the released counts in place of the true
  ones;
* OPS: the true counts, the posterior tempered at ``T`` (``p(z, phi | X)^(1/T)``) with
  ``phi[s, d]`` truncated to ``phi >= a0_d`` (:func:`ops_settings`); private at the
  stated level only once the chain has converged (the final sample is released).

Held-out steps keep their latent state (sampled from the transition part only); their
counts are never used by the sampler and give the test log-likelihood.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import special
from lpp.progress import tqdm

from lpp.randomness import as_generator
from lpp.validation import real_array
from . import conjugate, mechanisms

__all__ = ["check_fields", "chain_neighbours", "release_laplace", "ops_settings", "HMMFit",
           "fit_hmm", "log_prior_states", "emission_loglik", "heldout_loglik"]


def check_fields(counts, n_steps=None, *, integer=False):
    """Validate per-field count arrays ``(n_steps, K_d)``.

    Parameters
    ----------
    counts : sequence of array_like
    n_steps : int or None
        The steps every field must have (None: the first field's).
    integer : bool, keyword-only
        Read the counts exactly, for a release: int64 integers of at most
        :data:`lpp.central.mechanisms.MAX_STATISTIC`, never through float64 (which would
        round 2**53 + 1 to 2**53). Otherwise float64, as the samplers read them.

    Returns
    -------
    tuple of ndarray
        int64 when ``integer``, else float64.

    Raises
    ------
    TypeError
        Counts of bools, dates or objects (of durations too when ``integer``).
    ValueError
        No field, a field that is not 2-d, fewer than 2 categories, negative or non-finite
        counts, non-integer or too large counts when ``integer``, or a step count that
        disagrees.
    """
    if isinstance(counts, np.ndarray) or not len(counts):
        raise ValueError("counts must be a non-empty sequence of per-field arrays (n_steps, K_d)")
    out = []
    for d, c in enumerate(counts):
        name = f"counts[{d}]"
        arr = (mechanisms.integer_statistics(c, name, non_negative=True) if integer
               else real_array(c, name, low=0.0))
        if arr.ndim != 2 or arr.shape[1] < 2:
            raise ValueError(f"{name} must be (n_steps, K_d) with K_d >= 2, got {arr.shape}")
        n_steps = arr.shape[0] if n_steps is None else n_steps
        if arr.shape[0] != n_steps:
            raise ValueError(f"counts[{d}] has {arr.shape[0]} steps, expected {n_steps}")
        out.append(arr)
    return tuple(out)


def chain_neighbours(chain):
    """``prev``, ``next`` step indices (-1 at a chain's ends) from the chain id of each step.

    Steps of a chain must be consecutive and in time order.

    Raises
    ------
    ValueError
        A chain whose steps are not contiguous.
    """
    chain = np.asarray(chain)
    if chain.ndim != 1 or chain.size == 0:
        raise ValueError("chain must be a non-empty 1-d array of chain ids")
    starts = np.r_[True, chain[1:] != chain[:-1]]
    if np.unique(chain[starts]).size != starts.sum():
        raise ValueError("the steps of each chain must be contiguous")
    prev = np.arange(chain.size) - 1
    prev[starts] = -1
    nxt = np.arange(chain.size) + 1
    ends = np.r_[starts[1:], True]
    nxt[ends] = -1
    return prev, nxt


def release_laplace(counts, epsilon, *, rng=None):
    """Laplace release of every field's per-step counts, ``epsilon / D`` per field.

    Each record adds one to one cell of each field's ``(n_steps, K_d)`` table, so one field's
    table has L1 sensitivity 2 under ``"replace"`` (a record may move to another step, so
    step totals are not public and the projection clips at zero). Sequential composition
    over the ``D`` fields gives ``epsilon`` in total.

    Parameters
    ----------
    counts : sequence of array_like
        True integer counts per field, ``(n_steps, K_d)``.
    epsilon, rng
        As in :func:`lpp.central.mechanisms.release_fields`.

    Returns
    -------
    tuple of ndarray of int64
        Released counts per field: exactly ``counts[d] + noise``, clipped at zero.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_fields` with ``integer=True`` and
        :func:`lpp.central.mechanisms.release_fields`, naming ``counts[d]``.
    """
    return mechanisms.release_fields(check_fields(counts, integer=True), epsilon, "counts", rng)


def ops_settings(n_categories, epsilon, m_factor):
    """Truncations ``a0_d = 1 / (M K_d)`` and the OPS temperature for the whole model.

    One record changes ``log p`` by at most ``sum_d Delta_d``, ``Delta_d`` from
    :func:`lpp.central.mechanisms.ops_sensitivity_dirichlet` (relation ``"replace"``).

    Returns
    -------
    (tuple of float, float)
        ``a0`` per field, and ``T = 2 sum_d Delta_d / epsilon`` (capped below at 1).
    """
    if m_factor <= 1:
        raise ValueError(f"m_factor must be > 1 so that a0 < 1/K, got {m_factor}")
    a0 = tuple(1.0 / (m_factor * k) for k in n_categories)
    delta = sum(mechanisms.ops_sensitivity_dirichlet(a, k) for a, k in zip(a0, n_categories))
    return a0, mechanisms.ops_temperature(epsilon, delta)


def log_prior_states(z, prev, n_states, beta):
    """``log p(z)`` with the transition rows collapsed and a uniform initial state."""
    n = np.zeros((n_states, n_states))
    has = prev >= 0
    np.add.at(n, (z[prev[has]], z[has]), 1.0)
    out = -np.log(n_states) * np.sum(~has)
    out += np.sum(special.gammaln(n + beta) - special.gammaln(beta))
    out += np.sum(special.gammaln(n_states * beta) - special.gammaln(n.sum(1) + n_states * beta))
    return float(out)


def emission_loglik(counts, phi):
    """``L[t, s] = sum_d sum_k c[t, d, k] log phi[s, d, k]`` (counts per field)."""
    return sum(special.xlogy(c[:, None, :], p[None, :, :]).sum(-1) for c, p in zip(counts, phi))


def _transition_logits(t, z, prev, nxt, n, beta, n_states):
    """Collapsed log p(z_t = s | z_-t) up to a constant; ``n`` excludes t's transitions."""
    a, b = prev[t], nxt[t]
    logits = np.zeros(n_states)
    row = n.sum(1)
    sb = n_states * beta
    if a >= 0:
        za = z[a]
        logits += np.log(n[za] + beta) - np.log(row[za] + sb)
    if b >= 0:
        zb = z[b]
        same = np.zeros(n_states)
        if a >= 0:
            same[z[a]] = 1.0
        num = n[:, zb] + beta + same * (z[a] == zb if a >= 0 else 0)
        logits += np.log(num) - np.log(row + sb + same)
    return logits


@njit(cache=True)
def _sweep_states_nb(z, loglik, prev, nxt, n, beta, temperature, u):
    """Compiled sequential sweep (the hot loop): the same arithmetic as the Python twin."""
    n_steps, n_states = loglik.shape
    sb = n_states * beta
    logits = np.empty(n_states)
    for t in range(n_steps):
        a = prev[t]
        b = nxt[t]
        if a >= 0:
            n[z[a], z[t]] -= 1.0
        if b >= 0:
            n[z[t], z[b]] -= 1.0
        for s in range(n_states):
            v = 0.0
            if a >= 0:
                za = z[a]
                row_a = 0.0
                for j in range(n_states):
                    row_a += n[za, j]
                v += np.log(n[za, s] + beta) - np.log(row_a + sb)
            if b >= 0:
                zb = z[b]
                same = 1.0 if (a >= 0 and z[a] == s) else 0.0
                extra = 1.0 if (same == 1.0 and s == zb) else 0.0
                row_s = 0.0
                for j in range(n_states):
                    row_s += n[s, j]
                v += np.log(n[s, zb] + beta + extra) - np.log(row_s + sb + same)
            logits[s] = (v + loglik[t, s]) / temperature
        top = logits.max()
        total = 0.0
        for s in range(n_states):
            logits[s] = np.exp(logits[s] - top)
            total += logits[s]
        target = u[t] * total
        acc = 0.0
        pick = n_states - 1
        for s in range(n_states):
            acc += logits[s]
            if target < acc:
                pick = s
                break
        z[t] = pick
        if a >= 0:
            n[z[a], z[t]] += 1.0
        if b >= 0:
            n[z[t], z[b]] += 1.0


def _sweep_states(z, loglik, prev, nxt, n, beta, temperature, gen):
    """One sequential sweep over the steps; ``n`` (transition counts) is kept up to date."""
    _sweep_states_nb(z, np.ascontiguousarray(loglik, dtype=np.float64), prev, nxt, n,
                     float(beta), float(temperature), gen.random(z.size))


def _sweep_states_py(z, loglik, prev, nxt, n, beta, temperature, gen):
    """Python twin of the compiled sweep (tests compare the two)."""
    n_states = loglik.shape[1]
    u = gen.random(z.size)
    for t in range(z.size):
        a, b = prev[t], nxt[t]
        if a >= 0:
            n[z[a], z[t]] -= 1
        if b >= 0:
            n[z[t], z[b]] -= 1
        logits = (_transition_logits(t, z, prev, nxt, n, beta, n_states) + loglik[t]) / temperature
        w = np.exp(logits - logits.max())
        c = np.cumsum(w)
        z[t] = min(int(np.searchsorted(c, u[t] * c[-1], side="right")), n_states - 1)
        if a >= 0:
            n[z[a], z[t]] += 1
        if b >= 0:
            n[z[t], z[b]] += 1


def _emission_posteriors(counts, z, train, n_states, gamma):
    """Per field ``(n_states, K_d)`` Dirichlet parameters ``gamma + counts of train steps``."""
    onehot = np.zeros((z.size, n_states))
    onehot[np.arange(z.size), z] = train
    return tuple(gamma + onehot.T @ c for c in counts)


def _sample_phi(alphas, temperature, a0, phi, gen):
    out = []
    for d, alpha in enumerate(alphas):
        if a0 is None:
            g = gen.standard_gamma(alpha)
            out.append(g / g.sum(axis=1, keepdims=True))
        else:  # tempered, truncated: one exact pairwise-Gibbs sweep from the current phi
            tempered = (alpha - 1.0) / temperature + 1.0
            out.append(conjugate.truncated_dirichlet_step(phi[d], tempered, a0[d], rng=gen))
    return tuple(out)


@dataclass(frozen=True)
class HMMFit:
    """Saved states ``z`` (n_saved, n_steps), last ``phi`` (per field (S, K_d)), traces."""

    z: np.ndarray
    phi: tuple
    phi_mean: tuple
    heldout_loglik: np.ndarray
    n_states: int
    temperature: float

    def occupancy(self):
        """Share of (train and held-out) steps in each state, averaged over saved samples."""
        return np.stack([np.bincount(z, minlength=self.n_states) for z in self.z]).mean(0) \
            / self.z.shape[1]


def _logsumexp(x):
    top = x.max()  # scipy's logsumexp costs ~0.3 ms a call here, this ~10 us
    return float(top + np.log(np.exp(x - top).sum()))


def heldout_loglik(test_counts, heldout, z, prev, nxt, phi, beta, n_states):
    """Test log-likelihood of held-out steps' counts given one sample.

    Each held-out step's state is predicted from its neighbours' states by the collapsed
    transitions (held-out steps' own transitions excluded), and its records'
    log-likelihood is ``log sum_s q(s) prod_{d,k} phi[s,d,k]^c[t,d,k]``; multinomial
    coefficients are left out (they do not depend on the model).

    Returns
    -------
    float
        The sum over held-out steps.
    """
    n = np.zeros((n_states, n_states))
    has = prev >= 0
    np.add.at(n, (z[prev[has]], z[has]), 1.0)
    loglik = emission_loglik(test_counts, phi)
    total = 0.0
    for t in np.flatnonzero(heldout):
        a, b = prev[t], nxt[t]
        if a >= 0:
            n[z[a], z[t]] -= 1
        if b >= 0:
            n[z[t], z[b]] -= 1
        q = _transition_logits(t, z, prev, nxt, n, beta, n_states)
        total += _logsumexp(q + loglik[t]) - _logsumexp(q)
        if a >= 0:
            n[z[a], z[t]] += 1
        if b >= 0:
            n[z[t], z[b]] += 1
    return total


def fit_hmm(counts, chain, n_states, *, n_iter=200, burn_in=100, temperature=1.0, a0=None,
            heldout=None, test_counts=None, beta=1.0, gamma=1.0, init=None, rng=None,
            progress=False):
    """Gibbs sampler of the naive-Bayes HMM (transitions collapsed, emissions sampled).

    Parameters
    ----------
    counts : sequence of array_like
        Per field ``(n_steps, K_d)`` statistics: true counts, or released (real, >= 0) ones.
    chain : array_like of int, shape (n_steps,)
        Chain id of each step; a chain's steps contiguous and in time order.
    n_states : int
        ``S >= 1`` (1 is naive Bayes).
    n_iter, burn_in : int, keyword-only
        Sweeps, and the first sweeps not saved.
    temperature : float, keyword-only
        ``T >= 1`` (OPS); 1 for the non-private and Laplace routes.
    a0 : None or sequence of float, keyword-only
        Per-field truncation of ``phi`` (OPS), each in ``(0, 1/K_d)``; None: untruncated.
    heldout : array_like of bool, keyword-only
        Steps whose counts the sampler ignores.
    test_counts : sequence of array_like, keyword-only
        True counts of (at least) the held-out steps, for the test log-likelihood of each
        saved sample.
    beta, gamma : float, keyword-only
        Transition and emission Dirichlet parameters (symmetric; >= 1 for OPS).
    init : (z, phi), keyword-only
        Starting state; by default ``z`` uniform at random and ``phi`` at the (truncated)
        simplex's centre.
    rng : Generator, int or None, keyword-only
    progress : bool, keyword-only

    Returns
    -------
    HMMFit

    Raises
    ------
    ValueError
        Bad counts or shapes, ``n_states < 1``, ``burn_in >= n_iter``, ``T < 1``, bad ``a0``,
        held-out steps without test counts.
    """
    fields = check_fields(counts)
    n_steps = fields[0].shape[0]
    prev, nxt = chain_neighbours(chain)
    if prev.size != n_steps:
        raise ValueError(f"chain has {prev.size} steps, counts have {n_steps}")
    if int(n_states) < 1:
        raise ValueError(f"n_states must be >= 1, got {n_states}")
    if not 0 <= burn_in < n_iter:
        raise ValueError("need 0 <= burn_in < n_iter")
    temperature = float(temperature)
    if temperature < 1.0:
        raise ValueError(f"temperature must be >= 1, got {temperature}")
    ks = [f.shape[1] for f in fields]
    if a0 is not None:
        a0 = tuple(float(a) for a in a0)
        if len(a0) != len(fields):
            raise ValueError(f"a0 has {len(a0)} entries for {len(fields)} fields")
        for a, k in zip(a0, ks):
            if not 0.0 < a < 1.0 / k:
                raise ValueError(f"a0 must lie in (0, 1/K_d) per field, got {a} for K_d = {k}")
    held = np.zeros(n_steps, bool) if heldout is None else np.asarray(heldout, bool)
    if held.shape != (n_steps,):
        raise ValueError(f"heldout must have shape ({n_steps},)")
    if held.any():
        if test_counts is None:
            raise ValueError("held-out steps need test_counts for the test log-likelihood")
        test = check_fields(test_counts, n_steps)
        if [t.shape[1] for t in test] != ks:
            raise ValueError("test_counts and counts disagree in their categories")
    train = (~held).astype(float)
    gen = as_generator(rng)
    s = int(n_states)
    if init is None:
        z = gen.integers(0, s, size=n_steps)
        phi = tuple(np.full((s, k), 1.0 / k) for k in ks)
    else:
        z = np.asarray(init[0], dtype=np.int64).copy()
        phi = tuple(np.array(p, dtype=float) for p in init[1])
    trans = np.zeros((s, s))
    has = prev >= 0
    np.add.at(trans, (z[prev[has]], z[has]), 1.0)
    masked = tuple(f * train[:, None] for f in fields)
    saved_z, lls = [], []
    phi_sum = [np.zeros_like(p) for p in phi]
    for it in tqdm(range(n_iter), disable=not progress, desc="Gibbs"):
        phi = _sample_phi(_emission_posteriors(masked, z, train, s, gamma), temperature, a0,
                          phi, gen)
        if s > 1:
            _sweep_states(z, emission_loglik(masked, phi), prev, nxt, trans, beta, temperature,
                          gen)
        if it >= burn_in:
            saved_z.append(z.copy())
            for acc, p in zip(phi_sum, phi):
                acc += p
            if held.any():
                lls.append(heldout_loglik(test, held, z, prev, nxt, phi, beta, s))
    n_saved = n_iter - burn_in
    return HMMFit(np.array(saved_z), phi, tuple(p / n_saved for p in phi_sum),
                  np.array(lls), s, temperature)
