"""The privacy step: draw the true counts ``y`` given the privatized counts and the rates.

Data model (Schein et al. 2019): ``y ~ Pois(mu)`` and ``y_tilde = y + tau`` with
``tau ~ 2Geo(alpha)``, ``P(tau) = (1 - alpha) / (1 + alpha) * alpha**|tau|``. Given the current
rates ``mu`` of any Poisson factorization model, the complete conditional of each count is

    P(y | y_tilde, mu)  ∝  Pois(y; mu) * alpha**|y_tilde - y|.

Two exact samplers of it are provided; both see only ``y_tilde``, ``alpha`` and ``mu`` — never
the true counts — and neither knows anything about the model that produced ``mu``:

* :class:`CollapsedPrivacy` draws ``y`` directly from that conditional (docs/design.md):
  ``y_tilde <= 0`` gives ``y ~ Pois(alpha * mu)``; ``y_tilde > 0`` gives a two-piece mixture of
  ``Pois(mu / alpha)`` truncated to ``{0..y_tilde}`` and ``Pois(alpha * mu)`` truncated to
  ``{y_tilde + 1, ...}``, with the piece chosen by its log weight. No auxiliary state.
* :class:`BesselPrivacy` is the paper's augmentation (eqs. 13-16): with per-entry noise rates
  ``lam+``, ``lam-`` kept as chain state, draw ``m ~ Bes(|y_tilde|, 2 sqrt((lam+ + mu) lam-))``,
  split it into ``y_tilde+`` and ``g-``, thin ``y ~ Binom(y_tilde+, mu / (mu + lam+))`` and
  then redraw ``lam± ~ Gamma(1 + g±, rate = 1 / alpha)``. (Eq. 16 of the ICML text prints the
  rate as ``alpha / (1 - alpha) + 1 = 1 / (1 - alpha)``; the prior ``lam ~ Exp(rate
  (1 - alpha) / alpha)`` times the Poisson likelihood gives rate ``(1 - alpha) / alpha + 1 =
  1 / alpha``. The Geweke test in ``tests/lpp/inference`` fails with the printed rate.)

``alpha`` may be a scalar, one value per row (leading index) or one value per entry, or any
array that broadcasts to the data. Entries that the model does not observe (``observed`` False)
carry no likelihood; the step leaves them at ``y = 0`` and does not touch their noise state.

The step objects are in :mod:`lpp.inference.privacy.steps`, their numba kernels in
:mod:`lpp.inference.privacy.kernels` (random streams keyed by seed, iteration and block, so a
draw does not depend on the number of threads). A mechanism of another kind than the geometric
one plugs in with its own noise model and steps: :mod:`lpp.inference.privacy.mechanisms`;
:mod:`lpp.inference.privacy.randomized_response` is one (k-ary randomized response on clipped
counts).
"""
from lpp.inference.privacy.kernels import sample_true_count_collapsed_nb
from lpp.inference.privacy.mechanisms import (
    MechanismSupport,
    is_geometric,
    mechanism_support,
    privacy_for,
    register_mechanism,
)
from lpp.inference.privacy.randomized_response import (
    RandomizedResponse,
    RandomizedResponseNoise,
    RandomizedResponseStep,
)
from lpp.inference.privacy.steps import (
    CAPABILITY_METHODS,
    PRIVACY_STEPS,
    BesselPrivacy,
    CollapsedPrivacy,
    NaivePrivacy,
    NoiseLevels,
    PrivacyStep,
    make_privacy_step,
    noise_levels,
    sample_true_counts,
)

__all__ = ["CAPABILITY_METHODS", "PRIVACY_STEPS", "BesselPrivacy", "CollapsedPrivacy",
           "MechanismSupport", "NaivePrivacy", "NoiseLevels", "PrivacyStep", "RandomizedResponse",
           "RandomizedResponseNoise", "RandomizedResponseStep", "is_geometric",
           "make_privacy_step", "mechanism_support", "noise_levels", "privacy_for",
           "register_mechanism", "sample_true_count_collapsed_nb", "sample_true_counts"]
