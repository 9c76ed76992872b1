"""Network masks, observed / held-out MAE, and the zeros and oracle baselines."""
from __future__ import annotations

import numpy as np
import pytest

from lpp.metrics import (
    heldout_mae,
    mae,
    mae_baselines,
    network_masks,
    observed_mae,
    oracle_mae,
    zeros_mae,
)

# 3 actors; entries (0, 1) and (1, 2) held out
Y = np.array([[7, 2, 0], [1, 0, 9], [4, 0, 3]])
HELD = np.zeros((3, 3), dtype=bool)
HELD[0, 1] = HELD[1, 2] = True
# exact on every observed off-diagonal entry, 5 off on each held-out one, 100 off on the
# (never modelled) diagonal
MU = Y.astype(float).copy()
MU[0, 1] += 5.0
MU[1, 2] -= 5.0
MU[np.diag_indices(3)] += 100.0


def test_observed_mae_excludes_heldout_and_diagonal():
    assert observed_mae(MU, Y, HELD) == 0.0
    assert heldout_mae(MU, Y, HELD) == 5.0
    # the old measure (all off-diagonal entries) would have reported the held-out error too
    off_diagonal = ~np.eye(3, dtype=bool)
    assert mae(MU, Y, off_diagonal) == pytest.approx(10.0 / 6)
    assert observed_mae(MU, Y) == pytest.approx(10.0 / 6)  # nothing held out


def test_network_masks_partition_the_off_diagonal():
    masks = network_masks((3, 3), HELD)
    assert masks["observed"].sum() == 4 and masks["heldout"].sum() == 2
    assert not (masks["observed"] & masks["heldout"]).any()
    np.testing.assert_array_equal(masks["observed"] | masks["heldout"], masks["off_diagonal"])
    assert not np.diagonal(masks["off_diagonal"]).any()


def test_heldout_diagonal_is_still_not_scored():
    held = HELD | np.eye(3, dtype=bool)
    assert heldout_mae(MU, Y, held) == 5.0


def test_zeros_and_oracle_baselines():
    assert zeros_mae(Y) == pytest.approx(Y.mean())
    mask = network_masks(Y.shape, HELD)["observed"]
    assert zeros_mae(Y, mask) == pytest.approx((1 + 4 + 0 + 0) / 4)
    truth = np.array([[7.0, 1.5, 0.5], [1.0, 0.5, 8.0], [4.5, 0.0, 3.0]])
    assert oracle_mae(truth, Y) == pytest.approx(np.abs(truth - Y).mean())
    assert mae_baselines(Y, mask, true_rates=truth) == {
        "zeros": zeros_mae(Y, mask), "oracle": oracle_mae(truth, Y, mask)}
    assert mae_baselines(Y) == {"zeros": zeros_mae(Y)}


def test_zeros_beats_the_oracle_on_sparse_counts():
    """Why the table needs both rows: for a rate m < log 2, E|Y - m| = 2 m exp(-m) > m = E|Y|
    (MAE's optimum is the median, here 0), so predicting zero beats knowing the truth."""
    rng = np.random.default_rng(3)
    truth = rng.uniform(0.0, 0.5, size=(300, 300))
    y = rng.poisson(truth)
    assert zeros_mae(y) < oracle_mae(truth, y)


@pytest.mark.parametrize("shape, held, error, match", [
    ((3, 4), None, ValueError, "square"),
    ((1, 1), None, ValueError, "square"),
    ((3, 3), np.ones((3, 3)), TypeError, "boolean"),
    ((3, 3), np.ones((2, 2), dtype=bool), ValueError, "shape"),
])
def test_bad_masks(shape, held, error, match):
    with pytest.raises(error, match=match):
        network_masks(shape, held)


def test_everything_held_out_or_missing_mask():
    with pytest.raises(ValueError, match="no entries"):
        observed_mae(MU, Y, np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="needs the held-out mask"):
        heldout_mae(MU, Y, None)
