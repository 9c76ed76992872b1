"""Which privacy mechanisms the private chain runs, and where another one plugs in.

The chain reads a mechanism through two objects: a privacy step (:class:`PrivacyStep`), which
draws the true counts ``y`` given the privatized ones and the rates, and a *noise model*, which
the step reads and which gives the part of the log joint the model does not know,
``log P(y_tilde | y)``, row by row. The geometric mechanism is built in: a
:class:`~lpp.mechanism.GeometricMechanism`, or its noise level ``alpha`` as a bare number or
array, gives :class:`NoiseLevels` and the steps of :data:`PRIVACY_STEPS`. A mechanism of
another kind plugs in with one module that defines

* the mechanism (what privatizes: ``privatize(y, rng=None)``),
* its noise model: any object with ``log_density_rows(y_tilde, y, observed)`` (per row of the
  data, the sum over its observed entries of ``log P(y_tilde | y)``, a float64 array) and
  ``fingerprint_parts()`` (arrays that tie checkpoints to the mechanism's settings),
* the privacy steps that run it: :class:`PrivacyStep` subclasses whose ``sample`` draws ``y``
  from ``P(y | y_tilde, mu) ∝ Pois(y; mu) P(y_tilde | y)`` (or leaves it invariant),

and registers them with :func:`register_mechanism`. ``fit_private(y_tilde, mechanism, model,
method=name)`` then runs it; ``lpp.testing.geweke_simulations(alpha=mechanism)`` tests it.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

from lpp.inference.privacy.steps import (
    PRIVACY_STEPS,
    NoiseLevels,
    PrivacyStep,
    make_privacy_step,
    noise_levels,
)
from lpp.mechanism import GeometricMechanism

#: the capability that promises the geometric mechanism's own conditional
#: (:data:`lpp.inference.privacy.CAPABILITY_METHODS`); the fused engines rely on it
GEOMETRIC_ONLY = "exact_conditional"


@dataclass(frozen=True)
class MechanismSupport:
    """How the chain runs one kind of mechanism: ``noise_model(mechanism, shape)`` builds the
    noise model of a data set of that shape (a clear error when the mechanism does not fit
    it), and ``steps`` names the privacy steps that can run it (``fit_private``'s ``method``)."""

    noise_model: Callable[[Any, tuple[int, ...]], Any]
    steps: Mapping[str, type[PrivacyStep]]


_REGISTERED: dict[type, MechanismSupport] = {}


def register_mechanism(mechanism_type: type, *, noise_model, steps) -> None:
    """Let the private chain run mechanisms of ``mechanism_type`` (and its subclasses).

    Parameters
    ----------
    mechanism_type : type
        The mechanism's class; its instances are what users pass as ``fit_private``'s
        ``mechanism``.
    noise_model : callable
        ``noise_model(mechanism, shape)``: the noise model of data of ``shape`` (see the
        module's docstring for what it must provide).
    steps : mapping of str to PrivacyStep subclasses
        The methods that can run the mechanism, by name. A step that does not model the noise
        (``models_noise = False``, such as :class:`~lpp.inference.privacy.NaivePrivacy`) may be
        among them; a step declaring ``"exact_conditional"`` may not (that capability is the
        geometric mechanism's conditional, which the fused engines compute themselves).

    Raises
    ------
    TypeError, ValueError
        For a type that is not a class, the geometric mechanism (built in), an empty or
        ill-typed ``steps``, or a step that promises the geometric conditional.

    Notes
    -----
    :mod:`lpp.inference.privacy.randomized_response` is a complete mechanism of another kind
    (k-ary randomized response on clipped counts, with its exact step), registered this way;
    the design notes' *Plug-ins* section walks through it.
    """
    if not isinstance(mechanism_type, type):
        raise TypeError(f"mechanism_type must be a class, got {mechanism_type!r}")
    if issubclass(mechanism_type, GeometricMechanism):
        raise ValueError("the geometric mechanism is built in: its steps are PRIVACY_STEPS")
    if not callable(noise_model):
        raise TypeError("noise_model must be callable: noise_model(mechanism, shape)")
    steps = dict(steps)
    if not steps:
        raise ValueError(f"{mechanism_type.__name__}: give at least one privacy step")
    for name, step in steps.items():
        if not (isinstance(name, str) and isinstance(step, type)
                and issubclass(step, PrivacyStep)):
            raise TypeError(f"{mechanism_type.__name__}: steps maps method names to "
                            f"PrivacyStep subclasses, got {name!r}: {step!r}")
        if GEOMETRIC_ONLY in step.capabilities:
            raise ValueError(f"{mechanism_type.__name__}: step {name!r} declares "
                             f"{GEOMETRIC_ONLY!r}, the geometric mechanism's conditional")
    _REGISTERED[mechanism_type] = MechanismSupport(noise_model, MappingProxyType(steps))


def mechanism_support(mechanism) -> MechanismSupport | None:
    """The registration of ``mechanism``'s class (or of its nearest registered base), or
    None for the geometric mechanism and a bare noise level."""
    for cls in type(mechanism).__mro__:
        if cls in _REGISTERED:
            return _REGISTERED[cls]
    return None


def is_geometric(mechanism) -> bool:
    """Whether the chain reads ``mechanism`` as the geometric mechanism (a
    :class:`GeometricMechanism`, a noise level ``alpha``, or None for the naive method)."""
    return mechanism_support(mechanism) is None


def privacy_for(mechanism, method, shape: tuple[int, ...]) -> tuple[PrivacyStep, Any]:
    """The privacy step of ``method`` and the noise model for data of ``shape`` privatized
    by ``mechanism``; the noise model is None for a step that does not model the noise.

    Raises
    ------
    ValueError
        For a method the mechanism is not registered with, or a mechanism that does not fit
        the data (the noise model's own error).
    TypeError
        For a method that is neither a name nor a step instance.
    """
    support = mechanism_support(mechanism)
    if support is None:
        step = make_privacy_step(method)
        return step, _geometric_noise(step, mechanism, shape)
    step = _registered_step(support, method, mechanism)
    noise = support.noise_model(mechanism, tuple(shape))
    return step, (noise if step.models_noise else None)


def _geometric_noise(step: PrivacyStep, alpha, shape) -> NoiseLevels | None:
    if not step.models_noise:
        if alpha is not None:
            noise_levels(alpha, shape)  # validated for a clear error, then unused
        return None
    return noise_levels(alpha, shape)


def _registered_step(support: MechanismSupport, method, mechanism) -> PrivacyStep:
    names = tuple(support.steps)
    if isinstance(method, PrivacyStep):
        if not isinstance(method, tuple(support.steps.values())):
            raise ValueError(f"{type(mechanism).__name__} runs with the steps {names}, not "
                             f"{type(method).__name__}")
        return method
    if isinstance(method, str):
        if method not in support.steps:
            raise ValueError(f"{type(mechanism).__name__} runs with method in {names}, got "
                             f"{method!r}")
        return support.steps[method]()
    raise TypeError(f"method must be a name or a PrivacyStep instance, got "
                    f"{type(method).__name__}")

