"""study.figures: the settings line every figure carries, its placement, the actor order that
shows a block structure, one name and colour per method, and what an error bar spans."""
from __future__ import annotations

import shutil
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.colors import to_hex

from lpp.formats.fits import save_fit
from lpp.inference import RunOptions, fit_private
from lpp.inference.models import CommunityModel
from lpp.simulate import make_network
from lpp.vi import VIOptions, fit_variational
from study import figures as figs
from study.figures import (
    SPARE_COLOURS,
    caption_figure,
    community_order,
    current_profile,
    method_colour,
    method_label,
    method_palette,
    method_style,
    n_chains,
    settings_caption,
    spread_note,
)
from study.reports import plot_scores
from study.vi_benchmark import FIGURE_METHODS, LABELS

REPO = Path(__file__).resolve().parents[2]


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
    root = Path(__file__).resolve().parents[2]
    assert current_profile(root / "params.yaml") == "quick"
    assert current_profile(root / "profiles" / "paper.yaml") == "paper"


def test_sweeps_and_copies_are_read_from_the_fits(tmp_path):
    y = np.array([[0, 2, 1], [1, 0, 3], [0, 1, 0]])
    for rep in (0, 1):
        for method in ("collapsed", "naive"):
            fit = fit_private(y, 0.5, CommunityModel(2), method=method,
                              run=RunOptions(n_iter=6, burn_in=2, thin=2, progress=False), rng=rep)
            save_fit(fit, tmp_path / f"{method}_eps1.0_rep{rep}",
                     data=f"data/private/network/eps1.0_rep{rep}")
    caption = settings_caption(profile="quick", fits_dir=tmp_path, C=2)
    assert caption == "profile quick · sweeps 6 (burn-in 2, thin 2) · copies 2 · C 2"
    with pytest.raises(FileNotFoundError):
        settings_caption(profile="quick", fits_dir=tmp_path / "none")


def test_variational_fits_are_captioned_by_iterations_not_sweeps(tmp_path):
    """A CAVI fit's n_iter is iterations to convergence: the caption keeps it apart from the
    chains' sweeps, and their burn-in and thinning are the chains' alone."""
    y = np.array([[0, 2, 1], [1, 0, 3], [0, 1, 0]])
    chain = fit_private(y, 0.5, CommunityModel(2), method="collapsed",
                        run=RunOptions(n_iter=6, burn_in=2, thin=2, progress=False), rng=0)
    save_fit(chain, tmp_path / "collapsed_eps1.0_rep0", data="data/private/network/eps1.0_rep0")
    for rep, iterations in ((0, 2), (1, 3)):
        vi = fit_variational(y, 0.5, CommunityModel(2), method="collapsed", rng=rep,
                             run=VIOptions(max_iter=iterations, tol=0.0))
        vi.save(tmp_path / f"collapsed_cavi_eps1.0_rep{rep}", method="collapsed_cavi",
                data=f"data/private/network/eps1.0_rep{rep}")  # as infer_vi saves it
    caption = settings_caption(profile="quick", fits_dir=tmp_path)
    assert caption == ("profile quick · sweeps 6 (burn-in 2, thin 2) · VI iterations 2/3 · "
                       "copies 2")
    shutil.rmtree(tmp_path / "collapsed_eps1.0_rep0")
    assert settings_caption(profile="quick", fits_dir=tmp_path) == \
        "profile quick · VI iterations 2/3 · copies 2"


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


# ---------------------------------------------------------------- one name and colour per method

def _pipeline_methods():
    """Every method name the pipeline's settings (both profiles) give a fit."""
    names = set()
    for params in (REPO / "params.yaml", REPO / "profiles" / "paper.yaml"):
        p = yaml.safe_load(params.read_text())
        names |= set(p["topics"]["methods"]) | set(p["network"]["methods"])
        names |= set(p["vi_topics"]["methods"])
    return names


def test_every_method_of_the_pipeline_has_one_name_and_colour():
    wanted = _pipeline_methods() | {"bessel", "paper_cavi", "naive_cavi", "collapsed_cavi",
                                    "nonprivate", "zeros", "oracle", "laplace", "ops_M10",
                                    "ops_M100"}
    wanted |= set(FIGURE_METHODS.values())
    for method in wanted:
        figs.method_style(method)  # raises for a method without a style
    assert set(FIGURE_METHODS) == set(LABELS)
    labels = [s.label for s in figs.METHOD_STYLES.values()]
    assert len(labels) == len(set(labels)), "two methods share a legend name"
    # one colour per method; "ops" is the generic OPS of the beta-Bernoulli figures, whose
    # colour the HMM figure's M = 10 shares
    colours = [s.colour for key, s in figs.METHOD_STYLES.items() if key != "ops"]
    assert len(colours) == len(set(colours)), "two methods share a colour"
    assert figs.method_label("collapsed") == "ours (collapsed)"
    assert figs.method_label("nonprivate") == "non-private"


def test_an_unknown_method_keeps_its_name_and_gets_a_spare_colour():
    with pytest.raises(KeyError, match="METHOD_STYLES"):
        method_style("my_new_sampler")
    assert method_label("my_new_sampler") == "my_new_sampler"
    assert method_palette(["my_new_sampler", "naive", "mine_too"]) == {
        "naive": "tab:orange", "my_new_sampler": SPARE_COLOURS[0], "mine_too": SPARE_COLOURS[1]}


def test_the_palette_lists_methods_in_one_order():
    assert list(method_palette(["naive", "collapsed_cavi", "collapsed"])) == [
        "ours (collapsed)", "naive", "collapsed CAVI"]
    assert method_palette(["posterior"]) == method_palette(["nonprivate"])


@pytest.mark.parametrize("copies, chains, text", [
    (3, 1, "± sd over 3 copies"), (3, 2, "± sd over 3 copies × 2 chains"),
    ((1, 3), 1, "± sd over 1–3 copies"), (1, 1, "one run per point: no error bar"),
    (1, 4, "± sd over 1 copy × 4 chains"),
])
def test_spread_note_says_what_a_bar_spans(copies, chains, text):
    assert spread_note(copies, chains) == text


def test_chains_are_counted_from_the_chain_column():
    assert n_chains(pd.DataFrame({"method": ["a", "b"]})) == 1
    assert n_chains(pd.DataFrame({"chain": [0, 1, 2, 0]})) == 3
    assert n_chains(pd.DataFrame({"chain": [None, None]})) == 1


def test_score_figures_use_the_shared_names_colours_and_spread(tmp_path):
    matplotlib.use("Agg")

    rows = [{"fit": f"{m}_{e}_{r}_{c}", "method": m, "epsilon_over_n": e, "chain": c,
             "mae": 1.0 + r + c + (m == "naive")}
            for m in ("naive", "collapsed") for e in (3.0, 1.0) for r in range(3)
            for c in range(2)]
    rows.append({"fit": "nonprivate", "method": "nonprivate", "epsilon_over_n": None,
                 "mae": 1.5})
    fig = plot_scores(pd.DataFrame(rows), ["mae"], figure=tmp_path / "scores.png")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[:3] == ["ours (collapsed)", "naive", "non-private"]
    assert labels[-1] == "bars: ± sd over 3 copies × 2 chains"
    ax = fig.axes[0]
    drawn = {to_hex(line.get_color()) for line in ax.lines}
    assert {to_hex(method_colour("collapsed")), to_hex(method_colour("naive"))} <= drawn
