"""The privacy step objects: the model-agnostic half of a sweep, ``y | y_tilde, alpha, mu``
(the collapsed conditional, the paper's Bessel augmentation, the naive method), the noise
levels they read, and :func:`sample_true_counts`. Their numba kernels are in
:mod:`lpp.inference.privacy.kernels`.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from lpp.inference.capabilities import lapse_overridden
from lpp.inference.log_density import geometric_row_sums
from lpp.inference.numerics import check_counts_drawn
from lpp.inference.privacy.kernels import bessel_counts_kernel, collapsed_kernel, lambda_kernel
from lpp.mechanism import alpha_of
from lpp.randomness import Tag, as_generator, base_seed, derive_seed
from lpp.validation import count_array, noise_level_array

#: the methods whose behaviour each capability of a privacy step vouches for
CAPABILITY_METHODS = {"exact_conditional": ("sample", "init_state"),
                      "known_counts": ("sample", "init_state", "initial_counts")}


# ---------------------------------------------------------------------------------------------
# noise levels
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NoiseLevels:
    """``alpha`` in a compact layout: entry ``e`` (C order) has ``values[e // stride]``.

    A scalar has one value and ``stride`` = number of entries; a per-row alpha has one value per
    leading index and ``stride`` = entries per row; anything else is stored per entry.
    """

    values: np.ndarray
    stride: int
    shape: tuple[int, ...]

    def full(self) -> np.ndarray:
        """``alpha`` for every entry, in the data's shape."""
        return np.repeat(self.values, self.stride)[: math.prod(self.shape)].reshape(self.shape)

    def log_density_rows(self, y_tilde: np.ndarray, y: np.ndarray, observed) -> np.ndarray:
        """Per row, the sum over its observed entries of ``log 2Geo(y_tilde - y; alpha)``
        (the noise model's part of the log joint)."""
        return geometric_row_sums(y_tilde, y, self, observed)

    def fingerprint_parts(self) -> list[np.ndarray]:
        """The arrays that tie a checkpoint to these levels."""
        return [self.values, np.array([self.stride])]

    def per_row(self) -> np.ndarray | None:
        """One value per leading index when alpha is constant within rows, else ``None``."""
        row_len = math.prod(self.shape[1:])
        if self.values.size == 1:
            return np.full(self.shape[0], self.values[0])
        if self.stride == row_len:
            return self.values
        return None


def noise_levels(alpha, shape: tuple[int, ...]) -> NoiseLevels:
    """Validate ``alpha`` (each in the open interval (0, 1)) against the data shape; a
    :class:`lpp.mechanism.GeometricMechanism` gives its level."""
    if alpha is None:
        raise TypeError("alpha is required for the private methods (the mechanism's noise level)")
    arr = noise_level_array(alpha_of(alpha))
    try:
        np.broadcast_shapes(arr.shape, shape)
    except ValueError:
        raise ValueError(f"alpha of shape {arr.shape} does not broadcast to the data's shape "
                         f"{tuple(shape)}") from None
    if np.broadcast_shapes(arr.shape, shape) != tuple(shape):
        raise ValueError(f"alpha of shape {arr.shape} would enlarge the data's shape "
                         f"{tuple(shape)}")
    n = math.prod(shape)
    padded = arr.reshape((1,) * (len(shape) - arr.ndim) + arr.shape)
    if padded.size == 1:
        return NoiseLevels(padded.reshape(1).copy(), n, tuple(shape))
    if all(s == 1 for s in padded.shape[1:]) and padded.shape[0] == shape[0]:
        rows = np.ascontiguousarray(padded.reshape(shape[0]))
        return NoiseLevels(rows, n // shape[0], tuple(shape))
    full = np.ascontiguousarray(np.broadcast_to(padded, shape).reshape(n))
    return NoiseLevels(full, 1, tuple(shape))


# ---------------------------------------------------------------------------------------------
# the step objects
# ---------------------------------------------------------------------------------------------

class PrivacyStep(ABC):
    """Interface of a privacy step: ``y | y_tilde, alpha, mu`` (plus its own auxiliary state).

    A privacy step is the model-agnostic half of a sweep: it sees the privatized counts, the
    noise levels and the current rates ``mu``, never the model. ``sample`` must leave
    ``P(y, state | y_tilde, mu)`` invariant and return fresh arrays (it never mutates its
    inputs), so that an interrupted sweep leaves the chain consistent. Subclass it and pass an
    instance as ``fit_private(method=...)``; :data:`PRIVACY_STEPS` holds the built-in ones by
    name.

    Attributes
    ----------
    name : str
        Recorded as the fit's ``method``.
    models_noise : bool
        Whether the step treats ``y_tilde`` as ``y`` plus 2Geo noise; the log joint then
        includes the noise's log density. A step that does not (the naive method) gives log
        joints of the model alone, and ``alpha`` is optional for it.
    capabilities : frozenset of str
        Promises that fused engines (:mod:`lpp.inference.engines`) rely on.
        ``"exact_conditional"``: ``y`` is drawn exactly from ``Pois(y; mu) alpha**|y_tilde - y|``
        with no auxiliary state. ``"known_counts"``: every draw of ``y`` is
        ``initial_counts(y_tilde)``, whatever ``mu``, with no auxiliary state.
    """

    name: str = ""
    models_noise: bool = True
    capabilities: frozenset = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        lapse_overridden(cls, CAPABILITY_METHODS)

    def init_state(self, y_tilde: np.ndarray, noise: NoiseLevels | None,
                   seed: int) -> dict[str, np.ndarray]:
        """Auxiliary state at the start of a chain (none by default)."""
        return {}

    def initial_counts(self, y_tilde: np.ndarray) -> np.ndarray:
        """The best guess of the true counts before any sweep: ``max(y_tilde, 0)``."""
        return np.maximum(y_tilde, 0)

    @abstractmethod
    def sample(self, y_tilde: np.ndarray, noise: NoiseLevels | None, mu: np.ndarray,
               observed: np.ndarray, state: dict[str, np.ndarray], seed: int,
               iteration: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Draw ``y`` (int64, the shape of ``y_tilde``) and the new auxiliary state."""


def _flat(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1)


class CollapsedPrivacy(PrivacyStep):
    """Exact draw from ``P(y | y_tilde, mu)`` with the noise marginalised (docs/design.md,
    "The collapsed conditional of a count")."""

    name = "collapsed"
    capabilities = frozenset({"exact_conditional"})

    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        out = np.empty(y_tilde.shape, dtype=np.int64)
        collapsed_kernel(_flat(y_tilde), _flat(np.ascontiguousarray(mu, dtype=np.float64)),
                         _flat(observed), noise.values, noise.stride,
                          derive_seed(seed, Tag.COUNTS), iteration, _flat(out))
        check_counts_drawn(out)
        return out, {}


class BesselPrivacy(PrivacyStep):
    """The paper's Bessel augmentation; keeps the noise rates ``lam_plus``, ``lam_minus``.

    One call is one blocked Gibbs scan: ``(m, y, g+, g-) | lam, mu, y_tilde`` jointly (Bessel,
    then binomial thinning), then ``lam± | g±``. The chain's stationary distribution of ``y`` is
    ``P(y | y_tilde, mu)``, but successive draws are autocorrelated through ``lam``.
    """

    name = "bessel"

    def lambda_scale(self, noise: NoiseLevels) -> np.ndarray:
        """Scale of the Gamma complete conditional of ``lam±``: ``alpha`` (rate ``1/alpha``)."""
        return noise.values

    def init_state(self, y_tilde, noise, seed):
        rng = as_generator(derive_seed(seed, Tag.LAMBDA))
        mean = noise.full() / (1.0 - noise.full())  # prior: lam ~ Exp with mean alpha / (1 - alpha)
        return {"lam_plus": rng.exponential(mean), "lam_minus": rng.exponential(mean)}

    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        y = np.empty(y_tilde.shape, dtype=np.int64)
        g_plus = np.empty(y_tilde.shape, dtype=np.int64)
        g_minus = np.empty(y_tilde.shape, dtype=np.int64)
        lam_plus = np.array(state["lam_plus"], dtype=np.float64, order="C", copy=True)
        lam_minus = np.array(state["lam_minus"], dtype=np.float64, order="C", copy=True)
        bessel_counts_kernel(_flat(y_tilde), _flat(np.ascontiguousarray(mu, dtype=np.float64)),
                              _flat(observed), _flat(lam_plus), _flat(lam_minus),
                              derive_seed(seed, Tag.COUNTS), iteration,
                              _flat(y), _flat(g_plus), _flat(g_minus))
        check_counts_drawn(y, g_plus, g_minus)
        lambda_kernel(_flat(g_plus), _flat(g_minus), _flat(observed),
                       np.ascontiguousarray(self.lambda_scale(noise), dtype=np.float64),
                       noise.stride, derive_seed(seed, Tag.LAMBDA), iteration,
                       _flat(lam_plus), _flat(lam_minus))
        return y, {"lam_plus": lam_plus, "lam_minus": lam_minus}


class NaivePrivacy(PrivacyStep):
    """The naive method: take ``max(y_tilde, 0)`` as if it were the true counts.

    It ignores the noise (and ``mu``), which is what a non-private analysis of privatized data
    does; the fits' log joints are then those of the model alone.
    """

    name = "naive"
    models_noise = False
    capabilities = frozenset({"known_counts"})

    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        return self.initial_counts(y_tilde), {}


#: the built-in privacy steps by name (``fit_private(method=name)``)
PRIVACY_STEPS: dict[str, type[PrivacyStep]] = {
    CollapsedPrivacy.name: CollapsedPrivacy,
    BesselPrivacy.name: BesselPrivacy,
    NaivePrivacy.name: NaivePrivacy,
}


def make_privacy_step(method) -> PrivacyStep:
    """A privacy step from a :data:`PRIVACY_STEPS` name or a :class:`PrivacyStep` instance.

    Parameters
    ----------
    method : str or PrivacyStep
        ``"collapsed"``, ``"bessel"``, ``"naive"``, or your own step (returned as is).

    Raises
    ------
    ValueError
        For an unknown name.
    TypeError
        For anything else.
    """
    if isinstance(method, PrivacyStep):
        return method
    if isinstance(method, str):
        if method not in PRIVACY_STEPS:
            raise ValueError(f"method must be one of {tuple(PRIVACY_STEPS)} or a PrivacyStep "
                             f"instance, got {method!r}")
        return PRIVACY_STEPS[method]()
    raise TypeError(f"method must be a name or a PrivacyStep instance, got {type(method).__name__}")


def sample_true_counts(y_tilde, alpha, mu, *, rng=None, observed=None,
                       iteration: int = 0) -> np.ndarray:
    """One exact draw of the true counts from ``P(y | y_tilde, mu)`` (collapsed step).

    ``y_tilde``: privatized counts (any shape, integers, may be negative); ``alpha``: noise
    level(s) broadcastable to it; ``mu``: Poisson rates (same shape, >= 0); ``rng``: int,
    Generator or None; ``observed``: optional bool array, False entries return 0.
    """
    y_tilde = count_array(y_tilde, "y_tilde", signed=True)
    noise = noise_levels(alpha, y_tilde.shape)
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    if mu.shape != y_tilde.shape:
        raise ValueError(f"mu has shape {mu.shape} but y_tilde has shape {y_tilde.shape}")
    if not np.isfinite(mu).all() or np.any(mu < 0):
        raise ValueError("mu must be finite and non-negative")
    obs = (np.ones(y_tilde.shape, dtype=bool) if observed is None
           else np.ascontiguousarray(observed, dtype=bool))
    if obs.shape != y_tilde.shape:
        raise ValueError(f"observed has shape {obs.shape} but y_tilde has shape {y_tilde.shape}")
    y, _ = CollapsedPrivacy().sample(y_tilde, noise, mu, obs, {}, base_seed(rng), iteration)
    return y
