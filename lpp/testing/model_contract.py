"""The contract a Poisson factorization model must meet for the samplers of this package,
checked on a plug-in model: :func:`check_model`."""
from __future__ import annotations

import numpy as np

from lpp.inference import PoissonFactorization
from lpp.inference.chain import observed_entries
from lpp.randomness import as_generator
from lpp.testing.geweke import geweke_simulations, geweke_test

__all__ = ["check_model"]


def _default_shape(model) -> tuple[int, ...]:
    return {2: (4, 4), 3: (2, 3, 2)}.get(model.data_ndim, (3,) * model.data_ndim)


def _check_latents(what: str, state, expected: dict) -> None:
    if not isinstance(state, dict) or set(state) != set(expected):
        raise AssertionError(f"{what} must be a dict with arrays {sorted(expected)}, got "
                             f"{sorted(state) if isinstance(state, dict) else type(state)}")
    for name, shape in expected.items():
        arr = state[name]
        if not isinstance(arr, np.ndarray) or arr.dtype != np.float64 or arr.shape != shape:
            raise AssertionError(f"{what}[{name!r}] must be a float64 array of shape {shape}")
        if not (np.isfinite(arr).all() and np.all(arr > 0)):
            raise AssertionError(f"{what}[{name!r}] must be finite and > 0")


def _unchanged(what: str, before: dict, after: dict) -> None:
    for name, arr in before.items():
        if not np.array_equal(arr, after[name]):
            raise AssertionError(f"{what} modified its input {name!r}; methods must return "
                                 "new arrays")


def check_model(model, shape=None, *, alpha: float = 0.7, rng=0, geweke: bool = True,
                n_geweke: int = 5000) -> None:
    """Check that a Poisson factorization model meets the contract the samplers rely on.

    The counterpart of scikit-learn's ``check_estimator`` for :class:`lpp.inference.
    PoissonFactorization` subclasses: a model that passes plugs into ``fit_private`` and
    ``fit_nonprivate`` with any privacy step.

    Parameters
    ----------
    model : PoissonFactorization
        The model to check (an instance with its hyperparameters).
    shape : tuple of int, optional
        A small data shape the model accepts; by default ``(4, 4)`` for matrices and
        ``(2, 3, 2)`` for 3-way tensors.
    alpha : float
        Noise level of the private Geweke test.
    rng : int, numpy.random.Generator or None
        Seed of every check (fixed by default, so a check never flakes).
    geweke : bool
        Also run Geweke's joint-distribution test of the model's sampler, alone and behind the
        collapsed privacy step (``n_geweke`` draws from each simulator; keep the prior not too
        diffuse, e.g. ``a0 = b0 = 3``, so the chain mixes within a batch).

    Raises
    ------
    AssertionError
        Naming the first part of the contract that the model breaks: latent shapes and
        positivity, non-negative data-shaped rates, inputs never mutated, integer allocation
        statistics that account for every observed count, deterministic draws for a fixed
        seed, a finite log joint, and (optionally) the Geweke test.
    """
    if not isinstance(model, PoissonFactorization):
        raise TypeError(f"check_model needs a PoissonFactorization, got {type(model).__name__}")
    shape = tuple(shape) if shape is not None else _default_shape(model)
    gen = as_generator(rng)
    observed = observed_entries(model, shape, None)
    expected = model.latent_shapes(shape)
    params = model.params()
    if not isinstance(params, dict) or params.get("model") != model.name:
        raise AssertionError("params() must be a dict whose 'model' is the model's name")

    state = model.sample_prior(shape, gen)
    _check_latents("sample_prior()", state, expected)
    before = {k: v.copy() for k, v in state.items()}
    mu = model.rate(state)
    _unchanged("rate()", before, state)
    if not isinstance(mu, np.ndarray) or mu.shape != shape or not np.isfinite(mu).all() \
            or np.any(mu < 0):
        raise AssertionError(f"rate() must return finite, non-negative rates of shape {shape}")

    # counts large enough that every observed entry has some, so the totals are informative
    y = np.where(observed.is_observed, gen.poisson(mu + 2.0), 0).astype(np.int64)
    total = int(y.sum())
    seed = int(gen.integers(2**62))
    stats_ = model.allocate(state, y, observed, seed, 0)
    _unchanged("allocate()", before, state)
    if not isinstance(stats_, dict) or not stats_:
        raise AssertionError("allocate() must return a non-empty dict of statistics")
    for name, arr in stats_.items():
        arr = np.asarray(arr)
        if not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 0):
            raise AssertionError(f"allocate()[{name!r}] must hold non-negative integer counts")
        if total and (arr.sum() == 0 or arr.sum() % total):
            raise AssertionError(f"allocate()[{name!r}] sums to {arr.sum()}, not a multiple of "
                                 f"the {total} observed counts: counts are lost or invented")
    again = model.allocate(state, y, observed, seed, 0)
    if any(not np.array_equal(stats_[k], again[k]) for k in stats_):
        raise AssertionError("allocate() must be a function of its seed and iteration")

    new = model.update_latents(state, stats_, observed, seed, 0)
    _unchanged("update_latents()", before, state)
    _check_latents("update_latents()", new, expected)
    again = model.update_latents(state, stats_, observed, seed, 0)
    if any(not np.array_equal(new[k], again[k]) for k in new):
        raise AssertionError("update_latents() must be a function of its seed and iteration")
    if not np.isfinite(model.log_joint(new, y, observed)):
        raise AssertionError("log_joint() must be finite at a valid state")

    if not geweke:
        return
    for method in ("nonprivate", "collapsed"):
        forward, chain = geweke_simulations(model, shape, method=method, alpha=alpha,
                                            n_forward=n_geweke, n_chain=n_geweke, rng=gen)
        result = geweke_test(forward, chain)
        if not result:
            raise AssertionError(f"Geweke test of the {model.name!r} model ({method}) "
                                 f"fails:\n{result}")
