"""The small privatized factorization of the VI paper's Figure 1."""
import numpy as np
import pytest

from lpp.simulate import make_private_factorization


def test_shapes_reproducibility_and_noise_level():
    a = make_private_factorization(20, 15, 3, epsilon_over_n=0.5, rng=4)
    b = make_private_factorization(20, 15, 3, epsilon_over_n=0.5, rng=4)
    assert a.theta.shape == (20, 3) and a.phi.shape == (3, 15) and a.y_tilde.shape == (20, 15)
    np.testing.assert_array_equal(a.y_tilde, b.y_tilde)
    np.testing.assert_allclose(a.mu, a.theta @ a.phi)
    assert a.alpha == pytest.approx(np.exp(-0.5))
    assert (a.y >= 0).all() and (a.y_tilde < 0).any()


def test_bad_arguments():
    with pytest.raises(ValueError):
        make_private_factorization(0, 5, 2)
    with pytest.raises(ValueError):
        make_private_factorization(5, 5, 2, epsilon_over_n=0.0)
