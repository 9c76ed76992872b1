"""top_words: order, deterministic ties, bad input."""
from __future__ import annotations

import numpy as np
import pytest

from lpp.metrics import top_words


def _reference(phi, n):
    """Independent reference: Python's sort on (-value, index)."""
    return [sorted(range(len(row)), key=lambda v: (-row[v], v))[:n] for row in phi.tolist()]


def test_hand_case_with_ties():
    phi = np.array(
        [
            [0.1, 0.3, 0.3, 0.0, 0.3],
            [5.0, 0.0, 5.0, 7.0, 0.0],
            [1.0, 1.0, 1.0, 1.0, 1.0],
        ]
    )
    assert top_words(phi, 3).tolist() == [[1, 2, 4], [3, 0, 2], [0, 1, 2]]
    assert top_words(phi, 5).tolist() == [[1, 2, 4, 0, 3], [3, 0, 2, 1, 4], [0, 1, 2, 3, 4]]


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.float32, np.float64])
def test_matches_reference_on_heavily_tied_matrices(dtype):
    rng = np.random.default_rng(3)
    phi = rng.integers(0, 4, size=(40, 300)).astype(dtype)
    got = top_words(phi, 10)
    assert got.dtype == np.int64 and got.shape == (40, 10)
    assert got.tolist() == _reference(phi, 10)


def test_default_is_ten_and_negative_zero_ties_with_zero():
    phi = np.zeros((2, 12))
    phi[0, 5] = -0.0
    phi[1, 11] = 1.0
    assert top_words(phi).tolist() == [list(range(10)), [11, *range(9)]]


@pytest.mark.parametrize(
    "phi, n, error, match",
    [
        (np.ones(5), 2, ValueError, "K x V"),
        (np.ones((0, 5)), 2, ValueError, "empty"),
        (np.ones((2, 5)), 0, ValueError, r"\[1, 5\]"),
        (np.ones((2, 5)), 6, ValueError, r"\[1, 5\]"),
        (np.ones((2, 5)), 2.0, TypeError, "integer"),
        (np.ones((2, 5)), True, TypeError, "integer"),
        (np.array([[1.0, np.nan]]), 1, ValueError, "finite"),
        (np.array([["a", "b"]]), 1, TypeError, "real numbers"),
    ],
)
def test_bad_input(phi, n, error, match):
    with pytest.raises(error, match=match):
        top_words(phi, n)
