"""The beta–Bernoulli study functions: shapes, reproducibility, errors, Table 1's numbers."""
import math

import numpy as np
import pytest

from study import beta_bernoulli as bb


def test_figure1_densities_integrate_to_one():
    f = bb.figure1_densities(20, 0.3, 1.0, 0.2, n_laplace=5, grid=np.linspace(0, 1, 20001),
                             rng=1)
    dx = f["grid"][1] - f["grid"][0]
    assert f["laplace"].shape == (5, 20001)
    for dens in (f["posterior"], f["ops"], *f["laplace"]):
        assert np.sum(dens) * dx == pytest.approx(1.0, abs=2e-3)
    assert f["temperature"] == pytest.approx(2 * math.log(4))


def test_curve_is_reproducible_and_checks_errors():
    a = bb.l1_error_curve([1, 10, 100], 0.1, 0.1, 0.05, 50, rng=3)
    b = bb.l1_error_curve([1, 10, 100], 0.1, 0.1, 0.05, 50, rng=3)
    assert a == b
    with pytest.raises(ValueError, match="ns"):
        bb.l1_error_curve([0, 10], 0.1, 0.1, 0.05, 50)
    with pytest.raises(ValueError, match="repeats"):
        bb.l1_error_curve([1, 10], 0.1, 0.1, 0.05, 1)


def test_table1_numbers():
    rows = bb.table1(1.0, 0.2)
    assert [r["are"] for r in rows] == pytest.approx([1.0, 2.0, 1 + 2 * math.log(4)])
    assert rows[0]["sensitivity"] == 2.0
    assert rows[2]["sensitivity"] == pytest.approx(math.log(4))
