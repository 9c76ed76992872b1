"""Statistical checks shared by the test suite and by users who plug in their own samplers
or models.

``chisquare_gof`` checks draws against an exact pmf; ``geweke_test`` compares the two
simulators of Geweke's (2004) joint-distribution test of a posterior sampler (the simulators
of this package's samplers are in ``lpp.inference.geweke``); ``check_model`` checks that a
Poisson factorization model meets the contract of the samplers, Geweke test included.

The tests of this project call these with fixed seeds and a stated false-alarm rate
(``FALSE_ALARM``, per call), so a correct sampler fails a given test with probability
about ``FALSE_ALARM`` for the seed drawn — and, the seeds being fixed, never flakes.
"""
from __future__ import annotations

import signal
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: per-call false-alarm rate used throughout the test suite
FALSE_ALARM = 1e-3


@dataclass(frozen=True)
class GofResult:
    statistic: float
    dof: int
    pvalue: float
    n_bins: int

    def __bool__(self) -> bool:  # truthy when the sampler passes at FALSE_ALARM
        return self.pvalue >= FALSE_ALARM


def _pool(expected: np.ndarray, min_expected: float) -> np.ndarray:
    """Bin labels that pool adjacent cells from both tails until each has ``min_expected``."""
    n = expected.size
    labels = np.empty(n, dtype=np.int64)
    label, acc = 0, 0.0
    for i in range(n):
        labels[i] = label
        acc += expected[i]
        if acc >= min_expected:
            label += 1
            acc = 0.0
    if acc < min_expected and label > 0:  # a thin right tail joins its neighbour
        labels[labels == label] = label - 1
    return labels


def chisquare_gof(draws, support, pmf, *, min_expected: float = 5.0) -> GofResult:
    """Pearson chi-square test of integer ``draws`` against an exact pmf.

    ``support`` is a run of consecutive integers and ``pmf`` their probabilities; together
    they must hold all but 1e-8 of the mass (the rest is added to the right-most cell).
    Adjacent cells are pooled from the left until each expects ``min_expected`` draws, and
    draws outside ``support`` count in the outer cells. Returns statistic, degrees of
    freedom, p-value.
    """
    draws = np.asarray(draws)
    support = np.asarray(support, dtype=np.int64)
    pmf = np.asarray(pmf, dtype=np.float64)
    if support.ndim != 1 or support.shape != pmf.shape or support.size == 0:
        raise ValueError("support and pmf must be 1-d arrays of the same, non-zero length")
    if np.any(np.diff(support) != 1):
        raise ValueError("support must be consecutive integers")
    if np.any(pmf < 0) or not np.isfinite(pmf).all():
        raise ValueError("pmf must be finite and non-negative")
    missing = 1.0 - pmf.sum()
    if abs(missing) > 1e-8:
        raise ValueError(f"support holds {pmf.sum():.12g} of the mass; widen it")
    n = draws.size
    expected = n * pmf
    expected[-1] += n * max(missing, 0.0)
    idx = np.clip(draws.astype(np.int64) - support[0], 0, support.size - 1)
    observed = np.bincount(idx, minlength=support.size).astype(np.float64)
    labels = _pool(expected, min_expected)
    n_bins = int(labels.max()) + 1
    exp_b = np.bincount(labels, weights=expected, minlength=n_bins)
    obs_b = np.bincount(labels, weights=observed, minlength=n_bins)
    if n_bins < 2:
        return GofResult(0.0, 0, 1.0, n_bins)
    stat = float(np.sum((obs_b - exp_b) ** 2 / exp_b))
    dof = n_bins - 1
    return GofResult(stat, dof, float(stats.chi2.sf(stat, dof)), n_bins)


@dataclass(frozen=True)
class GewekeResult:
    """Per test function: ``z``, two-sided ``pvalues``; ``threshold`` is the Bonferroni level."""

    names: tuple[str, ...]
    z: np.ndarray
    pvalues: np.ndarray
    threshold: float
    batch_autocorr: np.ndarray

    def __bool__(self) -> bool:  # truthy when no test function rejects at FALSE_ALARM overall
        return bool(np.all(self.pvalues >= self.threshold))

    def __str__(self) -> str:
        rows = [f"{n:>24s}  z={z:+7.3f}  p={p:.3g}  batch-acf={r:+.2f}"
                for n, z, p, r in zip(self.names, self.z, self.pvalues, self.batch_autocorr)]
        return "\n".join(rows + [f"{'Bonferroni threshold':>24s}  {self.threshold:.3g}"])


def geweke_test(forward, chain, *, n_batches: int = 50) -> GewekeResult:
    """Geweke's (2004) "getting it right" test of a posterior sampler.

    ``forward[name]`` holds iid draws of a test function from the *marginal-conditional*
    simulator (parameters from the prior, data given parameters); ``chain[name]`` holds its
    successive values along the *successive-conditional* simulator (alternate one transition of
    the sampler given the data with fresh data given the parameters). Both target the same
    joint distribution exactly when the sampler is right.

    For each function: ``z = (mean_forward - mean_chain) / sqrt(se_forward^2 + se_chain^2)``,
    the chain's standard error from ``n_batches`` contiguous batch means; the p-value is
    two-sided from Student's t with Welch-Satterthwaite degrees of freedom. The sampler passes
    when every p-value is at least ``FALSE_ALARM / n_functions`` (Bonferroni: overall false-alarm
    rate at most ``FALSE_ALARM``). ``batch_autocorr`` is the lag-1 autocorrelation of each
    function's batch means; values far above ~0.2 mean the batches are too short for the chain's
    mixing and the standard error is optimistic.
    """
    names = tuple(forward)
    if not names or set(names) != set(chain):
        raise ValueError("forward and chain must name the same, non-empty set of test functions")
    if n_batches < 10:
        raise ValueError("use at least 10 batches")
    z, pvals, acf = [], [], []
    for name in names:
        f = np.asarray(forward[name], dtype=np.float64)
        c = np.asarray(chain[name], dtype=np.float64)
        if f.ndim != 1 or c.ndim != 1 or f.size < 10 or c.size < n_batches * 10:
            raise ValueError(f"{name}: need 1-d draws, >= 10 forward and "
                             f">= {10 * n_batches} chain values")
        if not (np.isfinite(f).all() and np.isfinite(c).all()):
            raise ValueError(f"{name}: draws must be finite")
        size = c.size // n_batches
        batches = c[: size * n_batches].reshape(n_batches, size).mean(axis=1)
        v_f = f.var(ddof=1) / f.size
        v_c = batches.var(ddof=1) / n_batches
        if v_f + v_c == 0.0:
            stat = 0.0 if f.mean() == batches.mean() else np.inf
            df = 1.0
        else:
            stat = (f.mean() - batches.mean()) / np.sqrt(v_f + v_c)
            df = (v_f + v_c) ** 2 / (v_f ** 2 / (f.size - 1) + v_c ** 2 / (n_batches - 1))
        z.append(stat)
        pvals.append(float(2.0 * stats.t.sf(abs(stat), df)))
        centred = batches - batches.mean()
        denom = float(np.dot(centred, centred))
        acf.append(float(np.dot(centred[:-1], centred[1:]) / denom) if denom > 0 else 0.0)
    return GewekeResult(names, np.array(z), np.array(pvals), FALSE_ALARM / len(names),
                        np.array(acf))


# ---------------------------------------------------------------------------------------------
# the model contract
# ---------------------------------------------------------------------------------------------

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
    from lpp.randomness import as_generator
    from lpp.inference import PoissonFactorization
    from lpp.inference.chain import observed_entries
    from lpp.inference.geweke import geweke_simulations

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


@contextmanager
def time_limit(seconds: int, what: str = "the call"):
    """Raise ``TimeoutError`` in the main thread when the block runs past ``seconds``.

    For property tests of code that must never hang: a hang becomes a failure instead of a
    test run that never ends. Python code is interrupted between bytecodes and compiled
    kernels when they return, so a kernel that never returns is still caught by the test's
    own process-level timeout only. Unix only (``SIGALRM``).
    """
    def expire(signum, frame):
        raise TimeoutError(f"{what} ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(int(seconds))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)

