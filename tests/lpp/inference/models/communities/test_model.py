"""The community model: self-loops are never observed, and a count splits over the pairs of
communities as the multinomial with weights ``theta[i, c] pi[c, d] theta[j, d]``."""
import numpy as np
import pytest

from lpp.inference.models import CommunityModel, Observed


def test_community_model_masks_self_loops():
    model = CommunityModel(2)
    mask = np.ones((4, 4), dtype=bool)
    with pytest.raises(ValueError, match="self-loops"):
        model.check_observed(Observed(mask))
    with pytest.raises(ValueError, match="square"):
        model.check_shape((4, 5))


@pytest.mark.parametrize("count", [1, 4])
def test_block_allocation_matches_the_multinomial(count, multinomial_split):
    """The count from node 0 to node 1 splits over the pairs (c, d) in proportion to
    ``theta[0, c] pi[c, d] theta[1, d]``; the senders' and receivers' totals follow it."""
    model = CommunityModel(2)
    state = {"theta": np.array([[1.0, 3.0], [2.0, 0.5]]),
             "pi": np.array([[1.0, 0.5], [2.0, 1.0]])}
    y = np.array([[0, count], [0, 0]])
    obs = Observed(~np.eye(2, dtype=bool))
    splits = [model.allocate(state, y, obs, 3, t) for t in range(20_000)]
    blocks = np.array([s["block"].ravel() for s in splits])
    nodes = np.array([s["node_community"] for s in splits])
    assert np.array_equal(nodes[:, 0], blocks.reshape(-1, 2, 2).sum(axis=2))
    assert np.array_equal(nodes[:, 1], blocks.reshape(-1, 2, 2).sum(axis=1))
    weights = (state["theta"][0][:, None] * state["pi"] * state["theta"][1][None, :]).ravel()
    assert multinomial_split(blocks, count, weights / weights.sum())
    assert not multinomial_split(blocks, count, weights[::-1] / weights.sum())
