"""mae: hand values, mask convention, sparse y, blocking, bad input."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import lpp.metrics.accuracy as accuracy
from lpp.metrics import mae

MU = np.array([[0.5, 2.0, 0.0], [1.5, 0.25, 3.0]])
Y = np.array([[0, 3, 0], [1, 0, 5]])
# |MU - Y| = [[0.5, 1.0, 0.0], [0.5, 0.25, 2.0]]; sum 4.25 over 6 entries
HELD_OUT = np.array([[True, False, False], [False, True, True]])  # 0.5 + 0.25 + 2.0 over 3


def test_by_hand():
    assert mae(MU, Y) == pytest.approx(4.25 / 6)
    assert mae(MU, Y, mask=HELD_OUT) == pytest.approx(2.75 / 3)
    assert mae(MU, Y, mask=~HELD_OUT) == pytest.approx(1.5 / 3)  # True = scored


@pytest.mark.parametrize("fmt", ["csr_matrix", "csr_array", "csc_array", "coo_array", "lil_matrix"])
def test_sparse_y_and_sparse_mask_agree_bit_for_bit(fmt):
    convert = getattr(sp, fmt)
    assert mae(MU, convert(Y)) == mae(MU, Y)
    assert mae(MU, convert(Y), mask=convert(HELD_OUT)) == mae(MU, Y, mask=HELD_OUT)


def test_many_blocks_match_plain_numpy(monkeypatch):
    rng = np.random.default_rng(8)
    mu = rng.gamma(0.5, 2.0, size=(301, 97))
    y = rng.poisson(mu)
    mask = rng.random(mu.shape) < 0.1
    whole = (mae(mu, y), mae(mu, y, mask))
    monkeypatch.setattr(accuracy, "_BLOCK_ENTRIES", 5 * 97 + 3)  # 61 blocks, last one short
    blocked = (mae(mu, sp.csr_array(y)), mae(mu, y, sp.csc_array(mask)))
    np.testing.assert_allclose(blocked, whole, rtol=1e-13)
    plain = (np.abs(mu - y).mean(), np.abs(mu - y)[mask].mean())
    np.testing.assert_allclose(whole, plain, rtol=1e-13)


def test_dense_arrays_of_any_rank_and_integer_rates():
    mu = np.arange(24, dtype=float).reshape(2, 3, 4) / 5
    y = np.ones((2, 3, 4), dtype=np.uint8)
    assert mae(mu, y) == pytest.approx(np.abs(mu - 1).mean())
    # unsigned rates minus larger counts must not wrap around
    assert mae(np.zeros(3, dtype=np.uint8), np.array([1, 2, 3])) == pytest.approx(2.0)
    assert mae(2.0, 3) == 1.0


@pytest.mark.parametrize(
    "mu_hat, y, mask, error, match",
    [
        (MU, Y[:, :2], None, ValueError, "same shape"),
        (MU, -Y, None, ValueError, "non-negative"),
        (MU, Y + 0.5, None, ValueError, "integer"),
        (MU, sp.csr_array(Y * 0.5), None, ValueError, "integer"),
        (MU * np.nan, Y, None, ValueError, "finite"),
        (sp.csr_array(MU), Y, None, TypeError, "dense"),
        (MU, Y, HELD_OUT.astype(int), TypeError, "boolean"),
        (MU, Y, HELD_OUT[:1], ValueError, "shape"),
        (MU, Y, np.zeros_like(HELD_OUT), ValueError, "no entries"),
        (MU, sp.csr_array(Y), sp.csr_array(np.zeros_like(HELD_OUT)), ValueError, "no entries"),
        (np.zeros((0, 3)), np.zeros((0, 3)), None, ValueError, "empty"),
        (MU, Y.astype(str), None, TypeError, "real numbers"),
        (np.ones(3), sp.coo_array(np.ones(3)), None, ValueError, "2-d"),
    ],
)
def test_bad_input(mu_hat, y, mask, error, match):
    with pytest.raises(error, match=match):
        mae(mu_hat, y, mask)
