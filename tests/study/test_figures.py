"""study.figures: the settings line every figure carries, its placement, and the actor order
that shows a block structure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from study.figures import caption_figure, community_order, current_profile, settings_caption
from lpp.fits import save_fit
from lpp.inference import fit_private
from lpp.simulate import make_network


def test_caption_names_the_profile_and_the_settings_in_order():
    caption = settings_caption(profile="quick", sweeps=300, copies=3, alpha0_levels=[0.2, 0.6])
    assert caption == "profile quick · sweeps 300 · copies 3 · alpha0 levels 0.2, 0.6"


def test_the_profile_comes_from_params_yaml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="no params.yaml"):
        current_profile()
    (tmp_path / "params.yaml").write_text("topics:\n  K: 3\n")
    with pytest.raises(ValueError, match="names no profile"):
        settings_caption()
    (tmp_path / "params.yaml").write_text("profile: paper\ntopics:\n  K: 3\n")
    assert settings_caption(sweeps=7500) == "profile paper · sweeps 7500"


def test_the_repository_profiles_name_themselves():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert current_profile(root / "params.yaml") == "quick"
    assert current_profile(root / "profiles" / "paper.yaml") == "paper"


def test_sweeps_and_copies_are_read_from_the_fits(tmp_path):
    y = np.array([[0, 2, 1], [1, 0, 3], [0, 1, 0]])
    for rep in (0, 1):
        for method in ("collapsed", "naive"):
            fit = fit_private(y, 0.5, "communities", method=method, n_components=2, n_iter=6,
                              burn_in=2, thin=2, rng=rep, progress=False)
            save_fit(fit, tmp_path / f"{method}_eps1.0_rep{rep}",
                     data=f"data/private/network/eps1.0_rep{rep}")
    caption = settings_caption(profile="quick", fits_dir=tmp_path, C=2)
    assert caption == "profile quick · sweeps 6 (burn-in 2, thin 2) · copies 2 · C 2"
    with pytest.raises(FileNotFoundError):
        settings_caption(profile="quick", fits_dir=tmp_path / "none")


def test_caption_is_drawn_and_the_figure_saved(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    path = tmp_path / "sub" / "fig.png"
    assert caption_figure(path, "profile quick · sweeps 3", fig=fig) is fig
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "profile quick · sweeps 3" in [t.get_text() for t in fig.texts]
    with pytest.raises(TypeError, match="caption must be a str"):
        caption_figure(None, 3, fig=fig)
    plt.close(fig)


def test_community_order_groups_actors_by_dominant_community():
    theta = np.array([[0.1, 2.0], [3.0, 0.0], [0.0, 0.5], [1.0, 0.2], [0.2, 0.2]])
    order = community_order(theta)
    # community 0: actors 1 (3.0), 3 (1.0), 4 (tie 0.2/0.2 -> first index); community 1: 0, 2
    np.testing.assert_array_equal(order, [1, 3, 4, 0, 2])
    net = make_network(rng=1, n_nodes=20, n_communities=5, shape=0.1, rate=0.25)
    order = community_order(net.theta)
    assert sorted(order) == list(range(20))
    dominant = net.theta.argmax(axis=1)[order]
    assert np.all(np.diff(dominant) >= 0)  # contiguous blocks


@pytest.mark.parametrize("theta", [np.ones(3), np.ones((3, 0)), -np.ones((2, 2)),
                                   np.full((2, 2), np.nan)])
def test_community_order_refuses_bad_memberships(theta):
    with pytest.raises(ValueError):
        community_order(theta)
