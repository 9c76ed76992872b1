"""Distributions of the locally private count model, vectorised and as numba scalar twins.

Public, vectorised (numpy broadcasting, clear ``ValueError``/``TypeError`` on bad input):
``two_sided_geometric_logpmf``, ``skellam_logpmf``, ``bessel_logpmf``, ``bessel_mean``,
``bessel_mode``, ``sample_bessel``, ``log_bessel_i``, ``poisson_logpmf``, ``poisson_logcdf``,
``poisson_logsf``, ``privatized_poisson_logpmf`` (``Pois(mu) + 2Geo(alpha)``).

Numba-callable scalar twins (``*_nb``; no argument checks, for use inside ``@njit`` code):
``log_bessel_i_nb(nu, x)``, ``log_bessel_ive_nb(nu, x)`` (= log I - x),
``log_bessel_ratio_nb(nu, x)`` (= log(I_{nu+1}/I_nu), accurate for huge nu),
``bessel_logpmf_nb(n, nu, a)``, ``bessel_mode_nb(nu, a)``, ``bessel_mean_nb(nu, a)``,
``skellam_logpmf_nb(k, mu1, mu2)``, ``two_sided_geometric_logpmf_nb(k, alpha)``,
``poisson_logpmf_nb(k, lam)``,
``poisson_logcdf_nb(k, lam)`` (log P(X <= k)), ``poisson_logsf_nb(k, lam)`` (log P(X > k))
and ``privatized_poisson_logpmf_nb(x, mu, alpha)`` (``privatized_poisson_logpmf_at_nb`` takes
the two logs of alpha it needs, for loops at one alpha).
The samplers take the block's stream (:func:`lpp.randomness.seed_block`) as their first
argument: ``sample_bessel_nb(rng, nu, a)``, ``standard_normal_nb(rng)`` and
``standard_gamma_nb(rng, shape)`` (exact, ziggurat-based), ``poisson_nb(rng, lam)`` (-1 for a
mean it cannot take), ``binomial_nb(rng, n, p)``, ``truncated_poisson_at_most_nb`` /
``truncated_poisson_above_nb`` (Poisson draws conditioned on a tail),
``gamma_rate_nb(rng, shape, rate)`` (the models' Gamma draws; NumPy twin ``gamma_rate_np``),
and ``allocate_count_nb`` (the multinomial allocation of a count over components, O(K) for
large counts; ``multinomial_into_nb`` wraps it, ``allocate_large_count_nb`` is its path for
counts above ``FEW_TRIALS`` as a call).
All parameters are means (Poisson, Skellam) — never scales or rates of anything else.
"""
from .bessel import (
    bessel_logpmf,
    bessel_logpmf_nb,
    bessel_mean,
    bessel_mean_nb,
    bessel_mode,
    bessel_mode_nb,
    log_bessel_i,
    log_bessel_i_nb,
    log_bessel_ive_nb,
    log_bessel_ratio_nb,
    sample_bessel,
    sample_bessel_nb,
)
from ._gamma_sampler import (
    TINY,
    gamma_rate_nb,
    gamma_rate_np,
    standard_gamma_nb,
    standard_normal_nb,
)
from .binomial import binomial_nb
from .geometric import two_sided_geometric_logpmf, two_sided_geometric_logpmf_nb
from .poisson import (
    poisson_logcdf,
    poisson_logcdf_nb,
    poisson_logpmf,
    poisson_logpmf_nb,
    poisson_logsf,
    poisson_logsf_nb,
    poisson_nb,
    truncated_poisson_above_nb,
    truncated_poisson_at_most_nb,
)
from .multinomial import (
    FEW_TRIALS,
    LARGE_COUNT,
    allocate_count_nb,
    allocate_large_count_nb,
    categorical_nb,
    multinomial_into_nb,
    rescale_log_weights_nb,
)
from .privatized_poisson import (
    privatized_poisson_logpmf,
    privatized_poisson_logpmf_at_nb,
    privatized_poisson_logpmf_nb,
)
from .skellam import skellam_logpmf, skellam_logpmf_nb

__all__ = [
    "bessel_logpmf", "bessel_logpmf_nb", "bessel_mean", "bessel_mean_nb", "bessel_mode",
    "bessel_mode_nb", "log_bessel_i", "log_bessel_i_nb", "log_bessel_ive_nb",
    "log_bessel_ratio_nb",
    "binomial_nb", "sample_bessel", "sample_bessel_nb", "standard_gamma_nb", "standard_normal_nb",
    "two_sided_geometric_logpmf", "two_sided_geometric_logpmf_nb",
    "poisson_logcdf", "poisson_logcdf_nb", "poisson_logpmf", "poisson_logpmf_nb",
    "poisson_logsf", "poisson_logsf_nb", "poisson_nb", "privatized_poisson_logpmf",
    "privatized_poisson_logpmf_at_nb", "privatized_poisson_logpmf_nb",
    "skellam_logpmf", "skellam_logpmf_nb",
    "TINY", "gamma_rate_nb", "gamma_rate_np",
    "truncated_poisson_above_nb", "truncated_poisson_at_most_nb",
    "FEW_TRIALS", "LARGE_COUNT", "allocate_count_nb", "allocate_large_count_nb",
    "categorical_nb", "multinomial_into_nb",
    "rescale_log_weights_nb",
]
