"""The plug-in interface for Poisson factorization models.

A model says how its latent variables ``Z`` make the Poisson rates ``mu`` and how to update
``Z`` given a complete set of true counts ``y``. It never sees privatized data: the privacy step
(``lpp.inference.privacy``) only needs ``mu``, and the model only needs (a draw of) ``y``. That
is the paper's modularity — private inference *extends* non-private Poisson factorization.

To add a model, subclass :class:`PoissonFactorization` and implement

* :meth:`~PoissonFactorization.latent_shapes` — names and shapes of the latent arrays;
* :meth:`~PoissonFactorization.rate` — ``mu`` from the latents (non-negative, data-shaped);
* :meth:`~PoissonFactorization.allocate` — split each observed ``y`` over the model's latent
  sources (the multinomial "allocation" step) and return the sufficient statistics;
* :meth:`~PoissonFactorization.update_latents` — draw the latents from their complete
  conditionals given those statistics (conjugate Gamma updates).

A built-in model's class and its compiled kernels are a folder of their own
(``lpp/inference/models/<name>/``), its name an entry of :data:`lpp.inference.models.MODELS`
(docs/library.md, *Adding a model*).

The defaults give every latent array an iid ``Gamma(a0, rate b0)`` prior
(:meth:`~PoissonFactorization.sample_prior`, :meth:`~PoissonFactorization.log_prior`); override
both for another prior. :meth:`~PoissonFactorization.sample_prior` is what the Geweke test
(:mod:`lpp.testing.geweke`) uses to check a model's sampler, so keep it exact.

Conventions: states are ``dict[str, numpy.ndarray]`` of float64; every method returns new
arrays and never mutates its inputs (an interrupted sweep then leaves the chain usable). Random
draws go through compiled kernels seeded per ``(seed, iteration, block)`` (see
``lpp.randomness``), so equal seeds give bit-identical chains whatever the thread count. The Gamma is
parameterised by shape and **rate** throughout.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np

from lpp.randomness import Tag, as_generator, derive_seed
from lpp.distributions import gamma_rate_np
from lpp.inference.capabilities import lapse_overridden
from lpp.inference.numerics import check_latents
from lpp.inference.log_density import ordered_sum, poisson_row_sums
from lpp.validation import positive_int, prior_parameter

#: the methods whose behaviour each capability vouches for (see ``capabilities``):
#: ``row_column_factors`` (``mu = theta phi``: the fused sparse engines and the topic model's
#: variational adapter rely on it), ``membership_factors`` (``mu_ij = theta_i pi theta_j``) and
#: ``cp_factors`` (``mu`` a sum of rank-one tensors), on which the variational adapters of the
#: community and CP models rely; ``gamma_factors`` (row/column factors with iid Gamma(a0, b0)
#: priors, the counts allocated by topic, then phi and theta drawn from their conditionals: the
#: GPU engines redo all of it on the device)
CAPABILITY_METHODS = {"row_column_factors": ("rate", "allocate", "row_column_factors"),
                      "gamma_factors": ("rate", "allocate", "row_column_factors",
                                        "update_latents", "update_step", "log_prior",
                                        "latent_shapes"),
                      "membership_factors": ("rate", "allocate"),
                      "cp_factors": ("rate", "allocate")}


class Observed:
    """Which entries carry likelihood: ``is_observed`` is a bool array, True = observed.

    The user-facing ``mask`` argument of the fit functions follows ``numpy.ma`` (True =
    missing); it is inverted once, into this positive form, which the kernels use.
    """

    def __init__(self, is_observed: np.ndarray):
        self.is_observed = np.ascontiguousarray(is_observed, dtype=bool)
        self.n_missing = int(self.is_observed.size - np.count_nonzero(self.is_observed))
        self.complete = self.n_missing == 0
        self._weights = None
        self._missing = None

    @classmethod
    def everywhere(cls, shape) -> "Observed":
        """Every entry observed, without an array of the data's size: ``is_observed`` is a
        read-only broadcast of True (what a chain on sparse counts holds)."""
        obs = cls.__new__(cls)
        obs.is_observed = np.broadcast_to(np.True_, tuple(shape))
        obs.n_missing, obs.complete = 0, True
        obs._weights = obs._missing = None
        return obs

    def missing_entries(self) -> tuple[np.ndarray, ...]:
        """Indices of the missing entries (``numpy.nonzero`` of the inverted mask), cached."""
        if self._missing is None:
            self._missing = np.nonzero(~self.is_observed)
        return self._missing

    @property
    def shape(self) -> tuple[int, ...]:
        return self.is_observed.shape

    @property
    def weights(self) -> np.ndarray:
        """``is_observed`` as float64 (1.0 observed, 0.0 missing), for rate sums by BLAS."""
        if self._weights is None:
            self._weights = self.is_observed.astype(np.float64)
        return self._weights


class PoissonFactorization(ABC):
    """Base class of Poisson factorization models with Gamma(a0, rate b0) priors.

    Parameters
    ----------
    n_components : number of latent components (topics, communities, rank); >= 1.
    a0, b0 : shape and rate of the Gamma prior of every latent (defaults 0.1 and 1.0, the
        paper's), each within ``lpp.validation.PRIOR_RANGE`` (1e-6 to 1e6).
    """

    #: short name, used in results and checkpoints
    name: str = "model"
    #: number of data dimensions the model expects (2 for matrices, 3 for 3-way tensors)
    data_ndim: int = 2
    #: structural promises the model makes beyond this interface, which fused engines
    #: (:mod:`lpp.inference.engines`) rely on. ``"row_column_factors"``: the rates are
    #: ``theta @ phi`` for the latents returned by :meth:`row_column_factors`, the allocation is
    #: the multinomial over ``k`` with weights ``theta[d, k] * phi[k, v]``, and
    #: :meth:`update_latents` takes ``{"doc_topic", "topic_word"}`` totals. A promise covers
    #: the methods named in :data:`CAPABILITY_METHODS`; a subclass that overrides one of them
    #: loses the capability unless it declares ``capabilities`` again in its own body.
    capabilities: frozenset = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        lapse_overridden(cls, CAPABILITY_METHODS)

    def __init__(self, n_components: int, *, a0: float = 0.1, b0: float = 1.0):
        self.n_components = positive_int(n_components, "n_components")
        self.a0 = prior_parameter(a0, "a0")
        self.b0 = prior_parameter(b0, "b0")

    # ----- description --------------------------------------------------------------------
    def params(self) -> dict:
        """Hyperparameters (recorded in results and checked when resuming a checkpoint)."""
        return {"model": self.name, "n_components": self.n_components, "a0": self.a0, "b0": self.b0}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items() if k != "model")
        return f"{type(self).__name__}({args})"

    # ----- shapes and masks -----------------------------------------------------------------
    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise ValueError when data of this shape cannot be modelled."""
        if len(shape) != self.data_ndim:
            raise ValueError(f"{type(self).__name__} needs {self.data_ndim}-d data, "
                             f"got shape {tuple(shape)}")
        if any(s < 1 for s in shape):
            raise ValueError(f"data shape {tuple(shape)} has an empty dimension")

    def always_missing(self, shape: tuple[int, ...]) -> np.ndarray | None:
        """Entries the model never observes (e.g. self-loops), as a bool array; None if none."""
        return None

    def check_observed(self, observed: Observed) -> None:
        """Raise ValueError when some latent row would see no observed entry at all.

        The default checks every data axis: each index along each axis needs at least one
        observed entry (otherwise its factors are drawn from the prior — almost certainly a
        mistake in the mask).
        """
        if observed.complete:  # every index has observed entries (check_shape: none empty)
            return
        mask = observed.is_observed
        for axis in range(mask.ndim):
            others = tuple(a for a in range(mask.ndim) if a != axis)
            seen = mask.any(axis=others)
            if not seen.all():
                bad = np.flatnonzero(~seen)
                raise ValueError(
                    f"every entry of index {bad[:5].tolist()}{'...' if bad.size > 5 else ''} along "
                    f"axis {axis} is masked; its factors would carry no information. Drop it "
                    "from the data or unmask some of its entries")

    @abstractmethod
    def latent_shapes(self, shape: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
        """Names and shapes of the latent arrays for data of ``shape``."""

    def check_state(self, state: dict, shape: tuple[int, ...]) -> dict[str, np.ndarray]:
        """Validate a user-supplied state (initial values); return float64 C-contiguous copies."""
        if not isinstance(state, dict):
            raise TypeError(f"a state must be a dict of arrays, got {type(state).__name__}")
        expected = self.latent_shapes(shape)
        if set(state) != set(expected):
            raise ValueError(f"state has arrays {sorted(state)}, "
                             f"the model needs {sorted(expected)}")
        out = {}
        for name, want in expected.items():
            arr = np.array(state[name], dtype=np.float64, order="C", copy=True)
            if arr.shape != want:
                raise ValueError(f"state[{name!r}] has shape {arr.shape}, expected {want}")
            if not np.isfinite(arr).all() or np.any(arr <= 0):
                raise ValueError(f"state[{name!r}] must be finite and > 0")
            out[name] = arr
        return out

    # ----- the prior ------------------------------------------------------------------------
    def sample_prior(self, shape: tuple[int, ...], seed) -> dict[str, np.ndarray]:
        """A draw of every latent from its prior, iid Gamma(a0, rate b0) by default."""
        rng = as_generator(seed)
        return {name: gamma_rate_np(rng, self.a0, self.b0, s)
                for name, s in self.latent_shapes(shape).items()}

    def log_prior(self, state: dict[str, np.ndarray]) -> float:
        """log p(Z) under the default iid Gamma(a0, rate b0) prior."""
        a0, b0 = self.a0, self.b0
        total = 0.0
        for arr in state.values():
            total += float(arr.size * (a0 * math.log(b0) - math.lgamma(a0))
                           + (a0 - 1.0) * np.log(arr).sum() - b0 * arr.sum())
        return total

    # ----- the model step -------------------------------------------------------------------
    @abstractmethod
    def rate(self, state: dict[str, np.ndarray]) -> np.ndarray:
        """The Poisson rates ``mu`` (float64, data-shaped)."""

    @abstractmethod
    def allocate(self, state: dict[str, np.ndarray], y: np.ndarray, observed: Observed,
                 seed: int, iteration: int) -> dict[str, np.ndarray]:
        """Allocate the observed counts ``y`` to latent sources; return sufficient statistics."""

    @abstractmethod
    def update_latents(self, state: dict[str, np.ndarray], stats: dict[str, np.ndarray],
                       observed: Observed, seed: int, iteration: int) -> dict[str, np.ndarray]:
        """Draw new latents from their complete conditionals given the allocation statistics."""

    def expectation_step(self, state: dict[str, np.ndarray], y: np.ndarray,
                         observed: Observed) -> dict[str, np.ndarray]:
        """The Gibbs sweep with every draw replaced by its conditional mean (an EM-like update).

        The expected allocation of ``y`` under the current latents, then each latent set to the
        mean of its Gamma complete conditional. Iterated, it moves a prior draw close to a mode
        of the posterior in a few hundred cheap, deterministic passes; ``init="em"`` of the
        samplers starts chains there (burn-in is then shorter; the chain's target is unchanged).
        Models that do not override it cannot use ``init="em"``.
        """
        raise NotImplementedError(f"the {self.name!r} model has no expectation_step, so it "
                                  "cannot use init='em'; use init='data' or 'prior'")

    def step(self, state: dict[str, np.ndarray], y: np.ndarray, observed: Observed,
             seed: int, iteration: int) -> dict[str, np.ndarray]:
        """One sweep of the model's Gibbs sampler given complete counts: allocate, then update.

        ``seed`` is the sweep's model seed; the allocation and the latent updates draw from
        streams derived from it (:meth:`update_step` is the second half on its own).
        """
        stats = self.allocate(state, y, observed, derive_seed(seed, Tag.ALLOCATE), iteration)
        return self.update_step(state, stats, observed, seed, iteration)

    def update_step(self, state: dict[str, np.ndarray], stats: dict[str, np.ndarray],
                    observed: Observed, seed: int, iteration: int) -> dict[str, np.ndarray]:
        """The latent updates of :meth:`step` given allocation statistics made elsewhere (by a
        fused engine), on the same random stream that :meth:`step` would use."""
        new = self.update_latents(state, stats, observed, derive_seed(seed, Tag.LATENTS),
                                  iteration)
        check_latents(new)
        return new

    def row_column_factors(self, state: dict[str, np.ndarray]):
        """``(theta, phi)`` with ``rate(state) == theta @ phi``, for models declaring the
        ``"row_column_factors"`` capability; the base class has no such form."""
        raise NotImplementedError(f"the {self.name!r} model has no row/column factor form")

    # ----- densities and summaries ----------------------------------------------------------
    def log_likelihood(self, y: np.ndarray, mu: np.ndarray, observed: Observed) -> float:
        """sum over observed entries of log Pois(y; mu), row by row in a fixed order
        (:mod:`lpp.inference.log_density`)."""
        return ordered_sum(poisson_row_sums(y, mu, observed))

    def log_joint(self, state: dict[str, np.ndarray], y: np.ndarray, observed: Observed,
                  mu: np.ndarray | None = None) -> float:
        """log p(Z, y) = log prior + Poisson log likelihood of the observed counts."""
        if mu is None:
            mu = self.rate(state)
        return self.log_prior(state) + self.log_likelihood(y, mu, observed)

    def summaries(self, state: dict[str, np.ndarray]) -> dict[str, float]:
        """Scalar test functions of the latents for the Geweke test (means by default)."""
        return {f"mean {name}": float(arr.mean()) for name, arr in state.items()}
