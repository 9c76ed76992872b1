"""The NumPy baseline of the benchmarks samples the right posterior (Geweke 2004).

Same design as ``tests/lpp/inference/test_geweke.py``: a 3 x 4 topic model with K = 2, prior
Gamma(3, rate 3) on every factor, alpha = 0.7; 4000 forward draws of the joint
``(theta, phi, lam±, y, y_tilde)`` against 4000 successive sweeps that each redraw
``y_tilde = y + Pois(lam+) - Pois(lam-)`` from the chain's latents; Bonferroni over the test
functions at overall false-alarm ``FALSE_ALARM``. The same chain with a misread alpha fails.
"""
import numpy as np

from bench.reference_numpy import NumpyBesselTopicSampler
from lpp.testing import geweke_test

SHAPE, K, A0, B0, ALPHA, N = (3, 4), 2, 3.0, 3.0, 0.7, 4_000


def _prior(rng):
    theta = rng.gamma(A0, 1.0 / B0, (SHAPE[0], K))
    phi = rng.gamma(A0, 1.0 / B0, (K, SHAPE[1]))
    mean = ALPHA / (1.0 - ALPHA)
    return {"theta": theta, "phi": phi, "lam_plus": rng.exponential(mean, SHAPE),
            "lam_minus": rng.exponential(mean, SHAPE)}


def _privatize(rng, y, lam_plus, lam_minus):
    return y + rng.poisson(lam_plus) - rng.poisson(lam_minus)


def _functions(theta, phi, y, y_tilde, lam_plus, lam_minus):
    return {"mean theta": theta.mean(), "mean phi": phi.mean(), "mean mu": (theta @ phi).mean(),
            "mean y": y.mean(), "mean y^2": (y ** 2.0).mean(),
            "mean y_tilde^2": (y_tilde ** 2.0).mean(), "mean lam+": lam_plus.mean(),
            "mean lam-": lam_minus.mean()}


def _simulations(sampler_alpha, seed=3):
    rng = np.random.default_rng(seed)
    forward = []
    for _ in range(N):
        z = _prior(rng)
        y = rng.poisson(z["theta"] @ z["phi"])
        forward.append(_functions(z["theta"], z["phi"], y,
                                  _privatize(rng, y, z["lam_plus"], z["lam_minus"]),
                                  z["lam_plus"], z["lam_minus"]))
    z = _prior(rng)
    y = rng.poisson(z["theta"] @ z["phi"])
    y_tilde = _privatize(rng, y, z["lam_plus"], z["lam_minus"])
    sampler = NumpyBesselTopicSampler(y_tilde, sampler_alpha, K, a0=A0, b0=B0, seed=seed + 1,
                                      init=z)
    sampler.y = y
    chain = []
    for _ in range(N):
        sampler.sweep()
        sampler.y_tilde = _privatize(rng, sampler.y, sampler.lam_plus, sampler.lam_minus)
        chain.append(_functions(sampler.theta, sampler.phi, sampler.y, sampler.y_tilde,
                                sampler.lam_plus, sampler.lam_minus))
    as_arrays = lambda rows: {k: np.array([r[k] for r in rows]) for k in rows[0]}  # noqa: E731
    return as_arrays(forward), as_arrays(chain)


def test_numpy_reference_gets_it_right():
    result = geweke_test(*_simulations(ALPHA))
    assert result, f"\n{result}"


def test_the_check_rejects_a_misread_alpha():
    result = geweke_test(*_simulations(0.5))
    assert not result, f"a sampler with the wrong alpha passed:\n{result}"
