"""Entry points of variational inference: ``fit_variational``, ``fit_variational_nonprivate``.

Methods (for privatized counts ``y_tilde`` and the mechanism's ``alpha``):

* ``"collapsed"`` — exact collapsed CAVI: the noise is integrated out, each true count gets its
  optimal factor ``q(y) ∝ G^y / y! alpha^|y_tilde - y|`` (:mod:`lpp.vi.counts`), the allocation
  ``Mult(y, G_ik / G_i)`` and the latents Gamma factors. Its bound is exact and is tracked every
  iteration; it never decreases. The topic model uses the sparse engine (work on positive
  entries only) when ``alpha`` is constant within rows.
* ``"bessel"`` — the paper's CAVI (:mod:`lpp.vi.paper`): Bessel mode point mass, noise
  rates' Gamma factors, delta-method geometric expectations; the authors' surrogate objective
  and stopping rule.
* ``"naive"`` — standard CAVI on ``max(y_tilde, 0)`` as if it were the true counts.

Both take the data, the model and how to run in the same few arguments: ``run=VIOptions(...)``
holds the iteration cap, the tolerance, the start and the engine choice. Convergence of the
collapsed and naive CAVI: the relative change of the bound between two iterations is below
``tol`` (default 1e-4, the paper's rule, so that the methods stop alike), or ``max_iter``
(default 500) is reached. An interrupted fit (Ctrl-C) returns what it has, with
``interrupted=True``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

import numpy as np

from lpp.randomness import as_generator, replay_seed
from lpp.validation import (
    count_array,
    masked_input,
    moved_keywords,
    non_negative_float,
    non_negative_int,
    positive_int,
    split_options,
    warn_moved,
)
from lpp.inference import Observed
from lpp.inference.chain import observed_entries
from lpp.inference.privacy import NoiseLevels, noise_levels
from lpp.inference.result import ChainResult, FitResult
from lpp.inference.runner import run_chain
from lpp.vi.adapters import TopicVI, VariationalModel, variational_model
from lpp.vi.engines import DenseCounts, SparseTopicCounts
from lpp.vi.gamma import GammaFactor
from lpp.vi.paper import PAPER_MAX_ITER, PAPER_TOL, paper_entries_step

#: named, as on the Gibbs side, after the privacy step each is built on
METHODS = ("collapsed", "bessel", "naive")
DEFAULT_TOL = 1e-4
DEFAULT_MAX_ITER = 500
#: EM-like sweeps of the default start, and the shape of the Gamma factors centred on it
DEFAULT_EM_SWEEPS = 200
START_CONCENTRATION = 100.0
#: for true (or naive) counts of the topic model, the sparse engine is chosen when at most this
#: share of the entries are positive or missing
SPARSE_MAX_SHARE = 0.5


@dataclass(frozen=True)
class VIOptions:
    """How a variational fit runs: the settings :func:`fit_variational` and
    :func:`fit_variational_nonprivate` take whole, as ``run=VIOptions(...)``.

    Attributes
    ----------
    max_iter : int or None
        Iteration cap; None gives the method's (500; 200 for ``"bessel"``, the authors' cap).
    tol : float or None
        Relative change of the objective that stops the fit; None gives 1e-4 (every method).
    progress : bool
        Show a progress bar.
    init : dict of GammaFactor or None
        Start from these factors (e.g. a previous result's ``q``).
    em_sweeps : int
        Without ``init``: EM-like sweeps (point values) on the naive counts
        ``max(y_tilde, 0)`` (the true counts for :func:`fit_variational_nonprivate`) from a
        prior draw, on which the factors are centred (default 200; the same start for every
        method). 0 gives a random start near the data's scale (topics: word rates from random
        data rows).
    sparse : bool or None
        Topic model only: force (True) or forbid (False) the sparse engine; None chooses.
    """

    max_iter: int | None = None
    tol: float | None = None
    progress: bool = False
    init: dict | None = None
    em_sweeps: int = DEFAULT_EM_SWEEPS
    sparse: bool | None = None

    @classmethod
    def split(cls, settings: dict) -> "tuple[VIOptions, dict]":
        """``(VIOptions of the fields among settings, the other settings)``: for code that
        forwards keyword settings to a fit, e.g. ``run, rest = VIOptions.split(kwargs);
        fit_variational(y_tilde, mechanism, model, run=run, **rest)``."""
        return split_options(cls, settings)


def _arguments(function: str, run, deprecated: dict):
    """``(run, mask)`` of a variational fit: ``run`` a :class:`VIOptions`, and the mask of
    missing entries given by the keyword of earlier releases (a ``numpy.ma`` array's own mask
    is read with the data). The keywords of earlier releases (``deprecated``) are mapped to
    these with a FutureWarning that names the new place of each."""
    run, rest = moved_keywords(function, deprecated, VIOptions, run, public="lpp.vi.VIOptions",
                               others=("mask",))
    if deprecated:
        warn_moved(function, deprecated,
                   "give the fit's settings as run=VIOptions(...) and missing entries as a "
                   "numpy.ma masked array (np.ma.masked_array(y, mask))", stacklevel=3)
    return run if run is not None else VIOptions(), rest.get("mask")


@dataclass
class VIResult(ChainResult):
    """A variational fit: a :class:`lpp.inference.ChainResult` whose one saved "sample" is the
    variational means, so that it saves, scores and diagnoses through the same calls as a
    Gibbs fit; plus what only an optimiser has.

    As a chain: ``method`` is the privacy step the CAVI is built on (``"collapsed"``,
    ``"bessel"`` for the paper's CAVI, ``"naive"``) or ``"nonprivate"``; ``n_iter`` and
    ``iterations_done`` are the iterations run, the last one the saved iteration
    (``burn_in = n_iter - 1``, ``thin = 1``); ``samples`` and ``state`` hold ``E_q`` of each
    latent; ``mu_hat`` is ``E_q[mu]``; ``log_joint`` holds the final objective; ``engine`` is
    ``"sparse"`` or ``"dense"``.

    Attributes
    ----------
    q : dict of GammaFactor
        The latents' Gamma factors (``q[name].shape``, ``q[name].rate``).
    objective : ndarray
        The tracked objective per iteration (the exact bound for the collapsed, naive and
        non-private methods; the paper's surrogate for ``"bessel"``).
    seconds : float
        Total wall time (set-up and start included).
    start_seconds : float
        Wall time of the start (the EM-like sweeps).
    converged : bool
    tol, max_iter : float, int
    extra : dict
        Method-specific final state (the paper's Bessel modes and noise-rate shapes).
    """

    q: dict = field(default_factory=dict, repr=False)
    objective: np.ndarray = field(default_factory=lambda: np.empty(0))
    seconds: float = 0.0
    start_seconds: float = 0.0
    converged: bool = False
    tol: float = 0.0
    max_iter: int = 0
    extra: dict = field(default_factory=dict, repr=False)

    @property
    def iterations(self) -> int:
        """CAVI iterations run (``iterations_done``)."""
        return self.iterations_done

    def means(self) -> dict:
        """``E_q`` of every latent array."""
        return {name: f.mean for name, f in self.q.items()}

    def to_init(self, rng=None) -> dict:
        """Start values for :func:`lpp.inference.fit_private` (``init=``).

        Parameters
        ----------
        rng : numpy.random.Generator, int or None
            ``None`` gives the variational means; otherwise one draw of every latent from ``q``
            (near the means: the factors are concentrated where the data are informative).

        Returns
        -------
        dict of ndarray
        """
        if rng is None:
            return self.means()
        gen = as_generator(rng)
        return {name: f.sample(gen) for name, f in self.q.items()}

    def as_fit(self, method: str | None = None) -> FitResult:
        """The fit as a :class:`lpp.inference.FitResult` of one chain with one saved "sample"
        (the means), as it is saved.

        Parameters
        ----------
        method : str, optional
            The name the fit goes under (default its own ``method``); the pipeline's names
            (``"collapsed_cavi"``, :data:`lpp.vi.fits.PIPELINE_METHODS`) differ from the Gibbs
            methods', so that the two kinds are separate series of the score tables.

        Returns
        -------
        FitResult
            ``n_iter = burn_in + 1 = iterations`` and one saved iteration (the last);
            ``iter_seconds`` are the CAVI iterations' times, the first with the start and
            set-up added, so that their sum (the saved fit's ``seconds_total``) is the fit's
            wall time.

        Raises
        ------
        ValueError
            If the fit ran no iteration or ``method`` is empty or not a string.
        """
        method = self.method if method is None else method
        if not isinstance(method, str) or not method:
            raise ValueError(f"method must be a non-empty string, got {method!r}")
        if self.iterations < 1:
            raise ValueError("the variational fit ran no iteration: nothing to save")
        times = np.array(self.iter_seconds, dtype=float)
        times[0] += max(self.seconds - float(times.sum()), 0.0)
        own = {f.name: getattr(self, f.name) for f in fields(ChainResult)}
        return FitResult([ChainResult(**{**own, "method": method, "iter_seconds": times,
                                         "mu_hat": np.asarray(self.mu_hat), "state": {},
                                         "aux": {}})])

    def save(self, out_dir, *, data: str, method: str | None = None,
             extra: dict | None = None):
        """Write the fit as a fit directory (:mod:`lpp.formats.fits`), as :meth:`as_fit`
        gives it: it loads, scores and diagnoses as a Gibbs fit does.

        Parameters
        ----------
        out_dir : path-like
            The fit directory (created).
        data : str
            What the fit was fitted to.
        method : str, optional
            The name the fit goes under (:meth:`as_fit`).
        extra : dict, optional
            Settings recorded under ``extra`` (e.g. ``epsilon_over_n``), followed by the
            optimiser's own record: ``vi_method`` (the method it ran), ``converged``,
            ``seconds`` and ``start_seconds`` (read back as
            :class:`lpp.formats.fits.FitMetadata`'s ``vi_method``, ``converged``, ...).

        Returns
        -------
        pathlib.Path
            ``out_dir``.
        """
        own = {"vi_method": self.method, "converged": self.converged, "seconds": self.seconds,
               "start_seconds": self.start_seconds}
        return self.as_fit(method).save(out_dir, data=data, extra={**(extra or {}), **own})


def _sparse_capable(adapter: VariationalModel) -> bool:
    """Whether the sparse topic engine can run this adapter: the topic model's adapter, on a
    model that vouches for ``mu = theta phi`` (as the Gibbs side's fused engine requires)."""
    return isinstance(adapter, TopicVI) and "row_column_factors" in adapter.model.capabilities


def _sparse_pays(counts, obs: Observed, private: bool) -> bool:
    """Whether the sparse engine is the faster one (``bench/vi.py``, part ``engines``).

    For privatized counts it always is: both engines evaluate the count factor of every
    positive entry, which dominates. For true (or naive) counts the sparse engine's
    per-entry loops over the components lose to the dense engine's matrix products once a
    large share of the entries is positive or missing (measured: sparse 1.9x faster at 29%
    positive, dense 3.2x faster at 72%).
    """
    if private:
        return True
    visited = np.count_nonzero((counts > 0) | ~obs.is_observed)
    return bool(visited <= SPARSE_MAX_SHARE * counts.size)


def prepare_fit(model, shape, mask):
    """The model's adapter and the entries that carry likelihood (as the Gibbs side finds them)."""
    adapter = variational_model(model)
    return adapter, observed_entries(adapter.model, shape, mask)


def _em_start(engine, adapter, shape, seed, sweeps):
    """Gamma factors (shape ``START_CONCENTRATION``) centred on ``sweeps`` EM-like sweeps
    from a prior draw, run by ``engine`` (the counts' engine for true counts; for privatized
    counts, the naive engine on ``max(y_tilde, 0)``).

    CAVI converges to a local optimum that depends on its start. On dense data a random
    start leaves the components exchangeable for tens of iterations and ends in a poor
    optimum; point-value sweeps from a sparse prior draw (the Gamma(a0 < 1) prior puts most
    of each factor's mass near zero) separate the components at once, and CAVI from there
    reaches a far higher bound (measured in ``bench/vi.py``). The sweeps only have to find
    the components, so for privatized data they run on the naive counts, where a sweep is a
    few matrix products with no count factor to evaluate: on the benchmark data the optima
    reached are as good as from sweeps on the private count factors (bounds and MAE within
    the spread between seeds) at a fraction of the time.
    """
    point = adapter.model.sample_prior(shape, seed)
    for _ in range(sweeps):
        point = engine.expectation_sweep(point)
    return {n: GammaFactor(np.full(x.shape, START_CONCENTRATION), START_CONCENTRATION / x)
            for n, x in point.items()}


def _init_q(adapter, shape, counts, obs, seed, init, start_engine=None, em_sweeps=0):
    if init is None and start_engine is not None and em_sweeps > 0:
        return _em_start(start_engine, adapter, shape, seed, em_sweeps)
    if init is not None:
        if not isinstance(init, dict) or not all(isinstance(v, GammaFactor)
                                                 for v in init.values()):
            raise TypeError("init must be a dict of GammaFactor (e.g. a previous result's q)")
        expected = adapter.model.latent_shapes(shape)
        if set(init) != set(expected) or any(init[n].shape.shape != s
                                             for n, s in expected.items()):
            raise ValueError(f"init must hold factors of shapes {expected}")
        return dict(init)
    return adapter.init_factors(counts, obs, np.random.default_rng(seed))


class CollapsedEngine:
    """One collapsed (or non-private) CAVI iteration: the count step, bound, Gamma updates."""

    def __init__(self, adapter: VariationalModel, counts, levels: NoiseLevels | None,
                 obs: Observed, private: bool, sparse):
        self.adapter, self.obs, self.private = adapter, obs, private
        self.counts = counts
        per_row = None
        forced = sparse
        capable = _sparse_capable(adapter)
        if sparse is None:
            sparse = _sparse_pays(counts, obs, private) if capable else False
        if capable and sparse:
            per_row = levels.per_row() if private else np.zeros(counts.shape[0])
        if forced is True and per_row is None:
            raise ValueError("the sparse engine needs the topic model with alpha constant "
                             "within rows")
        self.sparse = (SparseTopicCounts(counts, per_row, obs.is_observed, private)
                       if per_row is not None else None)
        # the entry-sized alpha only where it is read: the sparse engine keeps one per row
        self.dense = (DenseCounts(counts, levels.full() if private else np.full(counts.shape, 0.5),
                                  obs.is_observed, private)
                      if self.sparse is None else None)
        self.name = "sparse" if self.sparse is not None else "dense"

    def bound_and_stats(self, q):
        """``(bound at q with q(y) optimal, allocation statistics)``."""
        g = self.adapter.geometric(q)
        if self.sparse is not None:
            doc_topic, topic_word, entries = self.sparse.step(g["theta"], g["phi"])
            stats = {"theta": doc_topic, "phi": topic_word}
            e_theta, e_phi = q["theta"].mean, q["phi"].mean
            mu_sum = float(e_theta.sum(axis=0) @ e_phi.sum(axis=1))
            if not self.obs.complete:
                mu_sum -= self.sparse.missing_sums(e_theta, e_phi)[2]
        else:
            g_rate = self.adapter.geometric_rate(g)
            r, entries = self.dense.step(g_rate)
            stats = self.adapter.allocation_stats(g, r, self.obs)
            mu_sum = self.adapter.observed_mean_sum(q, self.obs)
        return entries - mu_sum + self.adapter.prior_term(q), stats

    def iterate(self, q):
        bound, stats = self.bound_and_stats(q)
        return bound, self.adapter.update(q, stats, self.obs), {}

    def expectation_sweep(self, point: dict) -> dict:
        """One EM-like sweep on point values of the latents: the count step and allocation
        with ``G`` replaced by the latents themselves (``E[y | y_tilde, mu]`` for private
        data), then each latent set to the mean of its Gamma conditional."""
        as_q = {n: GammaFactor(x, np.ones_like(x)) for n, x in point.items()}
        if self.sparse is not None:
            doc_topic, topic_word, _ = self.sparse.step(point["theta"], point["phi"])
            stats = {"theta": doc_topic, "phi": topic_word}
        else:
            r, _ = self.dense.step(self.adapter.model.rate(point), bound=False)
            stats = self.adapter.allocation_stats(point, r, self.obs)
        return {n: f.mean for n, f in self.adapter.update(as_q, stats, self.obs).items()}


class _PaperEngine:
    """One iteration of the paper's CAVI (dense, any adapter)."""

    name = "dense"

    def __init__(self, adapter, y_tilde, alpha_full, obs: Observed):
        self.adapter, self.obs, self.y_tilde = adapter, obs, y_tilde
        self.lam_rate = 1.0 / alpha_full
        # q(lam±) start at the prior's shape 1 with the rate the updates give (1 / alpha)
        self.lp_shape = np.ones(y_tilde.shape)
        self.lm_shape = np.ones(y_tilde.shape)
        self.mode = np.zeros(y_tilde.shape, dtype=np.int64)

    def iterate(self, q):
        adapter = self.adapter
        e_mu, v_mu = adapter.rate_moments(q)
        g = adapter.geometric(q)
        g_rate = adapter.geometric_rate(g)
        r, lp, lm, mode, ey_log_g = paper_entries_step(
            self.y_tilde, self.obs.is_observed, e_mu, v_mu, g_rate, self.lp_shape, self.lm_shape,
            self.lam_rate)
        mu_sum = float(e_mu.sum() if self.obs.complete else e_mu[self.obs.is_observed].sum())
        objective = ey_log_g - mu_sum + adapter.prior_term(q)
        stats = adapter.allocation_stats(g, r, self.obs)
        new_q = adapter.update(q, stats, self.obs)
        self.lp_shape, self.lm_shape, self.mode = lp, lm, mode
        return objective, new_q, {}

    def extra(self):
        return {"bessel_mode": self.mode, "lam_plus_shape": self.lp_shape,
                "lam_minus_shape": self.lm_shape, "lam_rate": self.lam_rate}


class _CoordinateAscent:
    """The CAVI iterations as a chain of the run loop (:func:`lpp.inference.runner.run_chain`):
    a sweep is one iteration, which commits the new factors, their objective and whether the
    objective's relative change fell below ``tol`` in one assignment."""

    def __init__(self, engine, q, *, adapter, method, seed, tol, stop_rule):
        self.engine_step, self.q, self.adapter = engine, q, adapter
        self.model, self.method, self.engine, self.seed = adapter.model, method, engine.name, seed
        self.tol, self.stop_rule = tol, stop_rule
        self.iteration, self.value, self.converged = 0, None, False

    def sweep(self) -> None:
        value, new_q, _ = self.engine_step.iterate(self.q)
        converged = self.iteration > 0 and self.stop_rule(self.value, value, self.tol)
        # the update never lowers the bound: the new q is at least as good as recorded
        self.q, self.value, self.converged, self.iteration = (new_q, value, converged,
                                                             self.iteration + 1)


class _ObjectiveRecord:
    """The objective and wall time of every completed iteration."""

    names = ()

    def __init__(self):
        self.entries = []

    @property
    def last_t(self) -> int:
        return len(self.entries)

    def book(self, chain: _CoordinateAscent, seconds: float) -> None:
        self.entries.append((chain.value, seconds))


def _run(engine, q, *, method, adapter, tol, max_iter, progress, seed, start, stop_rule):
    chain = _CoordinateAscent(engine, q, adapter=adapter, method=method, seed=seed, tol=tol,
                              stop_rule=stop_rule)
    record = _ObjectiveRecord()
    interrupted = run_chain(chain, record, n_iter=max_iter, progress=progress,
                            stop=lambda c: c.converged, status=lambda c: f"objective={c.value:.6g}",
                            desc=f"VI ({method})")
    n = len(record.entries)
    means = {name: f.mean for name, f in chain.q.items()}
    objective = np.array([v for v, _ in record.entries])
    return VIResult(
        method=method, model=adapter.model.params(), seed=seed, n_iter=n, burn_in=max(n - 1, 0),
        thin=1, iterations_done=n, interrupted=interrupted,
        saved_iterations=np.array([n] if n else [], dtype=np.int64),
        samples={name: mean[None] for name, mean in means.items()} if n else {},
        mu_hat=adapter.mean_rate(chain.q), log_joint=objective[-1:],
        iter_seconds=np.array([t for _, t in record.entries]), state=means, aux={},
        engine=engine.name, q=chain.q, objective=objective,
        seconds=time.perf_counter() - start, converged=chain.converged, tol=tol,
        max_iter=max_iter, extra=engine.extra() if hasattr(engine, "extra") else {})


def _relative_change(old, new, tol):
    return abs(new - old) <= tol * abs(new)


def fit_variational(y_tilde, mechanism, model, *, method: str = "collapsed", run=None,
                    rng=None, **deprecated) -> VIResult:
    """Coordinate-ascent variational inference from privatized counts.

    Parameters
    ----------
    y_tilde : array_like of int or numpy.ma.MaskedArray
        Privatized counts (may be negative), shaped as the model expects; a scipy.sparse
        matrix is densified. **Missing entries** (held out: no likelihood) are the masked
        entries of a ``numpy.ma`` masked array (True = missing), e.g.
        ``np.ma.masked_array(y_tilde, heldout)``.
    mechanism : GeometricMechanism, float, array_like or None
        The mechanism the counts were privatized with (:class:`lpp.mechanism.GeometricMechanism`)
        or its noise level(s) alpha in (0, 1), broadcastable to ``y_tilde``. Optional for
        ``method="naive"``.
    model : TopicModel, CommunityModel, CPTensorModel or VariationalModel
        The model (its priors ``a0``, ``b0`` and number of components).
    method : {"collapsed", "bessel", "naive"}
        See the module notes.
    run : VIOptions, optional
        How the fit runs (default ``VIOptions()``): ``max_iter`` (None: 500; 200 for
        ``"bessel"``, the authors' cap), ``tol`` (None: 1e-4 for every method), ``progress``
        (a progress bar), ``init`` (a dict of GammaFactor to start from, e.g. a previous
        result's ``q``), ``em_sweeps`` (without ``init``: EM-like sweeps, point values, on the
        naive counts ``max(y_tilde, 0)`` from a prior draw, on which the factors are centred;
        default 200, the same start for every method; 0 gives a random start near the data's
        scale, for topics word rates from random data rows), ``sparse`` (topic model only:
        force, True, or forbid, False, the sparse engine; None chooses).
    rng : numpy.random.Generator, int or None
        Randomness of the start (recorded as ``seed``).
    **deprecated
        The keywords of earlier releases (``max_iter=``, ``tol=``, ``mask=``, ...), accepted
        with a FutureWarning that names their place in the arguments above.

    Returns
    -------
    VIResult

    Raises
    ------
    ValueError
        Bad counts, ``alpha`` outside (0, 1) or of the wrong shape, a mask of the wrong shape,
        an unknown method, ``max_iter < 1`` or ``tol < 0``.
    TypeError
        Non-integer counts, a model without an adapter, arguments of the wrong type (``run``
        that is not a :class:`VIOptions`, an unknown keyword).

    Examples
    --------
    >>> import numpy as np
    >>> from lpp.inference import TopicModel
    >>> from lpp.mechanism import GeometricMechanism, privatize
    >>> from lpp.vi import VIOptions, fit_variational
    >>> mechanism = GeometricMechanism(epsilon=1.0, N=1)
    >>> y = np.random.default_rng(0).poisson(2.0, size=(30, 40))
    >>> y_tilde = privatize(y, mechanism, rng=1)
    >>> fit = fit_variational(y_tilde, mechanism, TopicModel(3), run=VIOptions(max_iter=50),
    ...                       rng=2)
    >>> fit.q["phi"].mean.shape
    (3, 40)
    """
    start = time.perf_counter()
    run, mask = _arguments("fit_variational", run, deprecated)
    alpha = mechanism
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    y_tilde, mask = masked_input(y_tilde, mask, "y_tilde")
    y_tilde = count_array(y_tilde, "y_tilde", signed=True)
    # the naive method ignores the noise: alpha is optional for it (validated when given)
    levels = (None if method == "naive" and alpha is None
              else noise_levels(alpha, y_tilde.shape))
    adapter, obs = prepare_fit(model, y_tilde.shape, mask)
    paper = method == "bessel"
    max_iter = run.max_iter
    if max_iter is None:
        max_iter = PAPER_MAX_ITER if paper else DEFAULT_MAX_ITER
    max_iter = positive_int(max_iter, "max_iter")
    tol = non_negative_float(run.tol if run.tol is not None
                             else (PAPER_TOL if paper else DEFAULT_TOL), "tol")
    em_sweeps = non_negative_int(run.em_sweeps, "em_sweeps")
    init, sparse = run.init, run.sparse
    seed = replay_seed(rng)
    naive_engine = None
    if method == "naive" or (init is None and em_sweeps > 0):
        naive_engine = CollapsedEngine(adapter, np.maximum(y_tilde, 0), None, obs, False, sparse)
    if method == "naive":
        engine = naive_engine
    elif paper:
        engine = _PaperEngine(adapter, y_tilde, levels.full(), obs)
    else:
        engine = CollapsedEngine(adapter, y_tilde, levels, obs, True, sparse)
    t0 = time.perf_counter()
    q = _init_q(adapter, y_tilde.shape, y_tilde, obs, seed, init, naive_engine, em_sweeps)
    start_seconds = time.perf_counter() - t0
    res = _run(engine, q, method=method, adapter=adapter, tol=tol, max_iter=max_iter,
               progress=run.progress, seed=seed, start=start, stop_rule=_relative_change)
    res.start_seconds = start_seconds
    return res


def fit_variational_nonprivate(y, model, *, run=None, rng=None, **deprecated) -> VIResult:
    """Standard CAVI for Poisson factorization of true counts ``y`` (the reference method).

    Parameters
    ----------
    y : array_like of int or numpy.ma.MaskedArray
        True counts (non-negative whole numbers); the masked entries of a ``numpy.ma`` masked
        array are missing, as for :func:`fit_variational`.
    model, rng, **deprecated
        As for :func:`fit_variational`.
    run : VIOptions, optional
        As for :func:`fit_variational` (``max_iter`` None: 500; the EM-like sweeps of the
        start run on ``y`` itself).

    Returns
    -------
    VIResult

    Raises
    ------
    ValueError, TypeError
        As :func:`fit_variational`; negative counts are a ValueError.
    """
    start = time.perf_counter()
    run, mask = _arguments("fit_variational_nonprivate", run, deprecated)
    y, mask = masked_input(y, mask, "y")
    y = count_array(y, "y", signed=False)
    adapter, obs = prepare_fit(model, y.shape, mask)
    max_iter = positive_int(run.max_iter if run.max_iter is not None else DEFAULT_MAX_ITER,
                            "max_iter")
    tol = non_negative_float(run.tol if run.tol is not None else DEFAULT_TOL, "tol")
    em_sweeps = non_negative_int(run.em_sweeps, "em_sweeps")
    seed = replay_seed(rng)
    engine = CollapsedEngine(adapter, y, None, obs, False, run.sparse)
    t0 = time.perf_counter()
    q = _init_q(adapter, y.shape, y, obs, seed, run.init, engine, em_sweeps)
    start_seconds = time.perf_counter() - t0
    res = _run(engine, q, method="nonprivate", adapter=adapter, tol=tol, max_iter=max_iter,
               progress=run.progress, seed=seed, start=start, stop_rule=_relative_change)
    res.start_seconds = start_seconds
    return res


def collapsed_bound(y_tilde, alpha, model, q: dict, *, mask=None, sparse=None) -> float:
    """The exact evidence lower bound of the collapsed model at the Gamma factors ``q``.

    ``q(y)`` is set to its optimum given ``q``, so this is the best bound any method's Gamma
    factors reach; it lets fits by different methods be compared on one scale.

    Parameters
    ----------
    y_tilde, alpha, model
        As ``y_tilde``, ``mechanism`` and ``model`` of :func:`fit_variational`.
    mask : bool array, optional
        True marks a missing entry (no likelihood); joins a ``numpy.ma`` array's own mask.
    sparse : bool or None
        As ``VIOptions.sparse``.
    q : dict of GammaFactor
        The latents' factors (e.g. ``result.q``).

    Returns
    -------
    float
        A lower bound on ``log p(y_tilde)``.
    """
    y_tilde, mask = masked_input(y_tilde, mask, "y_tilde")
    y_tilde = count_array(y_tilde, "y_tilde", signed=True)
    levels = noise_levels(alpha, y_tilde.shape)
    adapter, obs = prepare_fit(model, y_tilde.shape, mask)
    engine = CollapsedEngine(adapter, y_tilde, levels, obs, True, sparse)
    return engine.bound_and_stats(q)[0]
