"""Fixtures shared by the distribution tests (test modules cannot import one another)."""
import math

import numpy as np
import pytest

from lpp.distributions import bessel_logpmf, bessel_mode


def _bessel_support(nu, a):
    """Integers holding all but ~1e-15 of Bessel(nu, a) and their exact pmf."""
    mode = int(bessel_mode(nu, a))
    sd = math.sqrt(0.25 * a * a / math.hypot(a, nu)) + 1.0
    lo = max(0, mode - int(14 * sd) - 10)
    support = np.arange(lo, mode + int(14 * sd) + 30)
    return support, np.exp(bessel_logpmf(support, nu, a))


@pytest.fixture
def bessel_support():
    return _bessel_support
