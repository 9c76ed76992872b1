"""Held-out evaluation of naive Bayes and the HMM, Laplace vs OPS (Foulds et al., Fig. 6).

A uniform random fraction of the (chain, step) pairs is held out; the models are fitted on
the rest — non-privately, from Laplace-released counts (``epsilon`` in total, released once)
and by OPS at ``epsilon`` with Dirichlets truncated at ``a0_d = 1/(M K_d)`` — and scored by
the log-likelihood of the held-out steps' records, per record. As in the paper, the Laplace
and non-private scores average the test log-likelihood over the saved samples, OPS uses the
final sample only (it releases one). The evaluation itself reads the true held-out counts:
it is the analyst's benchmark, not part of any release. Relation: ``"replace"``.
"""
from __future__ import annotations

import numpy as np
from lpp.progress import tqdm

from lpp.randomness import as_generator
from . import hmm, naive_bayes

__all__ = ["heldout_splits", "evaluate_split", "state_occupancy"]


def heldout_splits(n_steps, fraction, n_splits, *, rng=None):
    """``(n_splits, n_steps)`` boolean masks, each holding out ``round(fraction n_steps)`` steps.

    Raises
    ------
    ValueError
        ``fraction`` outside (0, 1) or a split that would hold out nothing.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
    k = int(round(fraction * n_steps))
    if k < 1:
        raise ValueError("the split holds out no step")
    gen = as_generator(rng)
    masks = np.zeros((int(n_splits), n_steps), dtype=bool)
    for i in range(int(n_splits)):
        masks[i, gen.choice(n_steps, size=k, replace=False)] = True
    return masks


def _nb_scores(train_totals, test, epsilon, route, m_factor, n_categories, nb_samples, gen):
    if route == "nonprivate":
        phis = naive_bayes.sample_posterior(train_totals, n_samples=nb_samples, rng=gen)
    elif route == "laplace":
        released = naive_bayes.release_laplace(train_totals, epsilon, rng=gen)
        phis = naive_bayes.sample_posterior(released, n_samples=nb_samples, rng=gen)
    else:
        a0, t = hmm.ops_settings(n_categories, epsilon, m_factor)
        phis = naive_bayes.sample_posterior(train_totals, n_samples=1, temperature=t, a0=a0,
                                            rng=gen)
    lls = [naive_bayes.heldout_loglik(test, [p[i] for p in phis]) for i in range(len(phis[0]))]
    return float(np.mean(lls))


def evaluate_split(data, heldout, epsilons, *, m_factors=(10, 100), n_states=10, n_iter=200,
                   burn_in=100, nb_samples=100, models=("naive_bayes", "hmm"), seed=0,
                   progress=False):
    """Test log-likelihood per held-out record for every model × route × epsilon, one split.

    Parameters
    ----------
    data : lpp.central.simulate.EventLogs
    heldout : array_like of bool, shape (n_steps,)
    epsilons : sequence of float
    m_factors : sequence of float, keyword-only
        OPS truncations ``a0_d = 1/(M K_d)``.
    n_states, n_iter, burn_in : int, keyword-only
        HMM settings (naive Bayes is the one-state model).
    nb_samples : int, keyword-only
        Posterior samples averaged for naive Bayes' non-private and Laplace scores.
    models : sequence of {"naive_bayes", "hmm"}, keyword-only
    seed : int, keyword-only
        Every fit gets its own stream, keyed by ``(seed, model, route, epsilon index)``.
    progress : bool, keyword-only

    Returns
    -------
    list of dict
        Rows ``{"model", "route", "epsilon", "loglik_per_record"}``; the non-private rows
        have ``epsilon`` None.
    """
    held = np.asarray(heldout, dtype=bool)
    n_test = float(data.n_records[held].sum())
    test = tuple(c[held] for c in data.counts)
    train_totals = tuple(c[~held].sum(axis=0) for c in data.counts)
    routes = [("nonprivate", None, None)]
    routes += [("laplace", i, None) for i in range(len(epsilons))]
    routes += [(f"ops_M{m:g}", i, m) for i in range(len(epsilons)) for m in m_factors]
    rows = []
    jobs = [(model, r) for model in models for r in routes]
    for model, (route, e_idx, m) in tqdm(jobs, disable=not progress, desc="fits"):
        gen = np.random.default_rng([seed, models.index(model), routes.index((route, e_idx, m)),
                                     0 if e_idx is None else e_idx])
        eps = None if e_idx is None else float(epsilons[e_idx])
        kind = route if not route.startswith("ops") else "ops"
        if model == "naive_bayes":
            ll = _nb_scores(train_totals, test, eps, kind, m, data.n_categories, nb_samples, gen)
        else:
            kw = dict(n_iter=n_iter, burn_in=burn_in, heldout=held, test_counts=data.counts,
                      rng=gen)
            if kind == "nonprivate":
                fit = hmm.fit_hmm(data.counts, data.chain, n_states, **kw)
                ll = float(fit.heldout_loglik.mean())
            elif kind == "laplace":
                released = hmm.release_laplace(data.counts, eps, rng=gen)
                fit = hmm.fit_hmm(released, data.chain, n_states, **kw)
                ll = float(fit.heldout_loglik.mean())
            else:
                a0, t = hmm.ops_settings(data.n_categories, eps, m)
                fit = hmm.fit_hmm(data.counts, data.chain, n_states, temperature=t, a0=a0, **kw)
                ll = float(fit.heldout_loglik[-1])
        rows.append({"model": model, "route": route, "epsilon": eps,
                     "loglik_per_record": ll / n_test})
    return rows


def state_occupancy(data, epsilon, *, n_states=10, n_iter=200, burn_in=100, threshold=0.05,
                    seed=0):
    """Share of steps per state (largest first) of the non-private and Laplace HMMs.

    Returns
    -------
    dict
        Per route (``"nonprivate"``, ``"laplace"``): ``shares`` (sorted, averaged over the
        saved samples after sorting each) and ``n_used`` (states above ``threshold``).
    """
    out = {}
    for i, route in enumerate(("nonprivate", "laplace")):
        gen = np.random.default_rng([seed, 99, i])
        counts = data.counts if route == "nonprivate" else hmm.release_laplace(
            data.counts, epsilon, rng=gen)
        fit = hmm.fit_hmm(counts, data.chain, n_states, n_iter=n_iter, burn_in=burn_in, rng=gen)
        shares = np.sort(np.stack([np.bincount(z, minlength=n_states) for z in fit.z]), axis=1)
        shares = shares[:, ::-1].mean(axis=0) / data.n_steps
        out[route] = {"shares": shares.tolist(), "n_used": int(np.sum(shares > threshold))}
    return out
