"""study.reports: every saved fit of a case study scored into a table, written and drawn."""
import dataclasses
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import stats

from lpp.diagnostics import diagnostics_record
from lpp.evaluation import topic_scores
from lpp.formats.counts import load_counts, write_counts
from lpp.formats.fits import load_fit, save_fit
from lpp.formats.privatized import canonical_counts, privatize_counts
from lpp.inference import RunOptions, TopicModel, fit_private, make_model
from lpp.mechanism import privatize
from study.figures import method_palette
from study.reports import (
    left_out_message,
    named_fits,
    plot_scores,
    score_community_fits,
    score_topic_fits,
    write_table,
)


def _fit(mu_hat, model, **samples):
    return SimpleNamespace(mu_hat=mu_hat, samples=samples, metadata=None,
                           model={"model": model, "n_components": 2})


def _save(fits_dir, name, method, mu_hat, phi=None, **extra):
    """A saved fit with the given posterior mean (and latents), as an inference stage writes."""
    rng = np.random.default_rng(len(name))
    if phi is None:  # a community model with C = 2
        samples = {"theta": rng.gamma(1.0, 1.0, (1, mu_hat.shape[0], 2)),
                   "pi": rng.gamma(1.0, 1.0, (1, 2, 2))}
        model = {"model": "communities", "n_components": 2}
    else:
        samples = {"theta": rng.gamma(1.0, 1.0, (phi.shape[0], mu_hat.shape[0], phi.shape[1])),
                   "phi": phi}
        model = {"model": "topics", "n_components": phi.shape[1]}
    n_saved = samples["theta"].shape[0]
    result = SimpleNamespace(
        mu_hat=mu_hat, samples=samples, log_joint=np.zeros(n_saved),
        saved_iterations=np.arange(n_saved), iter_seconds=np.full(4, 0.25), method=method,
        model=model, seed=1, n_iter=4, burn_in=2, thin=1, iterations_done=4,
        interrupted=False, n_saved=n_saved)
    save_fit(result, fits_dir / name, data="somewhere", extra=extra)


def test_score_topic_fits_tabulates_every_fit_in_name_order(tmp_path):
    rng = np.random.default_rng(2)
    y = sp.csr_array(rng.poisson(1.0, (20, 8)))
    phi = rng.gamma(1.0, 1.0, (2, 3, 8))
    _save(tmp_path, "naive_eps1.0_rep0", "naive", np.full((20, 8), 2.0), phi, epsilon_over_n=1.0)
    _save(tmp_path, "collapsed_eps1.0_rep0", "collapsed", np.ones((20, 8)), phi,
          epsilon_over_n=1.0)
    _save(tmp_path, "nonprivate", "nonprivate", np.ones((20, 8)), phi)
    table = score_topic_fits(tmp_path, y, n_top=3)
    assert list(table.fit) == ["collapsed_eps1.0_rep0", "naive_eps1.0_rep0", "nonprivate",
                               "zeros", "oracle"]
    columns = ["fit", "method", "epsilon_over_n", "mae", "npmi", "npmi_zero", "coherence",
               "loglik", "n_samples", "chain", "rhat"]
    assert list(table.columns) == columns
    expect = topic_scores(_fit(np.full((20, 8), 2.0), "topics", phi=phi,
                               theta=load_fit(tmp_path / "naive_eps1.0_rep0").samples["theta"]),
                          y, n_top=3)
    assert table.iloc[1][["mae", "npmi", "coherence", "loglik"]].tolist() == pytest.approx(
        [expect["mae"], expect["npmi"], expect["coherence"], expect["loglik"]])
    assert table.iloc[3].mae == pytest.approx(y.toarray().mean())
    assert table.iloc[4][["mae", "loglik"]].isna().all()  # Enron-like: no true rates
    assert table.attrs["seconds"]["nonprivate"] == pytest.approx(1.0)
    path = write_table(table, tmp_path / "eval" / "t.csv")
    assert path.read_text().splitlines()[0] == ",".join(columns)


def test_score_community_fits_adds_the_heldout_error(tmp_path):
    y = np.array([[0, 1, 2], [3, 0, 4], [5, 6, 0]])
    heldout = np.zeros((3, 3), dtype=bool)
    heldout[2, 1] = True
    _save(tmp_path, "collapsed_C2_eps1.0_rep0", "collapsed", np.zeros((3, 3)),
          epsilon_over_n=1.0, n_components=2)
    _save(tmp_path, "nonprivate_C2", "nonprivate", np.ones((3, 3)), n_components=2)
    table = score_community_fits(tmp_path, sp.csr_array(y), heldout, true_rates=np.ones((3, 3)))
    assert list(table.columns) == ["fit", "method", "C", "epsilon_over_n", "heldout_used", "mae",
                                   "offdiag_mae", "heldout_mae", "heldout_loglik", "chain",
                                   "rhat"]
    assert table.heldout_used.tolist()[:2] == [True, True]  # fits that predate the flag
    assert list(table.method) == ["collapsed", "nonprivate", "zeros", "oracle"]
    # the observed entries: 1, 2, 3, 4, 5 (the held-out 6 is not among them)
    assert table.mae.tolist() == pytest.approx([3.0, 2.0, 3.0, 2.0])
    assert table.offdiag_mae.tolist() == pytest.approx([3.5, 2.5, 3.5, 2.5])
    assert table.heldout_mae.tolist() == pytest.approx([6.0, 5.0, 6.0, 5.0])
    assert table.heldout_loglik.iloc[2] == -np.inf
    assert table.heldout_loglik.iloc[3] == pytest.approx(stats.poisson.logpmf(6, 1.0))


def test_unmasked_fits_leave_the_masked_rows_unchanged(tmp_path):
    y = np.array([[0, 1, 2, 7], [3, 0, 4, 1], [5, 6, 0, 2], [0, 3, 8, 0]])
    heldout = np.zeros((4, 4), dtype=bool)
    heldout[2, 1] = heldout[0, 3] = True
    masked, both = tmp_path / "masked", tmp_path / "both"
    for folder in (masked, both):
        _save(folder, "collapsed_C2_eps1.0_rep0", "collapsed", np.full((4, 4), 2.0),
              epsilon_over_n=1.0, n_components=2, heldout_used=True)
        _save(folder, "nonprivate_C2", "nonprivate", np.ones((4, 4)), n_components=2)
    _save(both, "collapsed_C2_eps1.0_rep0_unmasked", "collapsed", np.full((4, 4), 3.0),
          epsilon_over_n=1.0, n_components=2, heldout_used=False)
    _save(both, "nonprivate_C2_unmasked", "nonprivate", np.ones((4, 4)), n_components=2,
          heldout_used=False)
    before = score_community_fits(masked, y, heldout)
    after = score_community_fits(both, y, heldout)
    assert after.fit.tolist() == ["collapsed_C2_eps1.0_rep0", "collapsed_C2_eps1.0_rep0_unmasked",
                                  "nonprivate_C2", "nonprivate_C2_unmasked", "zeros", "oracle"]
    kept = after[after.fit.isin(before.fit)].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, before)
    unmasked = after[after.heldout_used.eq(False)]
    offdiag = y[~np.eye(4, dtype=bool)]
    assert unmasked.mae.tolist() == pytest.approx([np.abs(3.0 - offdiag).mean(),
                                                   np.abs(1.0 - offdiag).mean()])
    assert (unmasked.mae == unmasked.offdiag_mae).all()
    assert unmasked[["heldout_mae", "heldout_loglik"]].isna().all().all()
    # the design column survives the CSV: False rows are the unmasked ones when read back
    text = write_table(after, tmp_path / "t.csv").read_text()
    assert pd.read_csv(tmp_path / "t.csv").heldout_used.tolist()[:4] == [True, False, True, False]
    assert text.splitlines()[0].split(",")[4] == "heldout_used"


def test_scoring_an_empty_folder_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="no fit"):
        score_topic_fits(tmp_path, np.ones((2, 2), dtype=int))


#: hand-made settings: the fits of the current run (a params.yaml's keys that name fits)
SETTINGS = {"privacy": {"levels": [1.0]},
            "topics": {"methods": ["collapsed"], "replicates": [0]},
            "vi_topics": {"methods": [], "replicates": [0]},
            "network": {"methods": ["collapsed"], "replicates": [0], "C": [2], "unmasked_C": [],
                        "rows_cols_C": [2]}}


def test_named_fits_are_the_folders_the_stages_write():
    settings = {"privacy": {"levels": [3.0, 1]},
                "topics": {"methods": ["naive", "collapsed"], "replicates": [0, 2]},
                "vi_topics": {"methods": ["collapsed_cavi"], "replicates": [1]},
                "network": {"methods": ["naive"], "replicates": [1], "C": [5, 10],
                            "unmasked_C": [20], "rows_cols_C": [5]}}
    topics = named_fits(settings, "topics")
    assert list(topics) == sorted(
        [f"{m}_eps{e}_rep{r}" for m in ("naive", "collapsed") for e in ("3.0", "1")
         for r in (0, 2)] + ["collapsed_cavi_eps3.0_rep1", "collapsed_cavi_eps1_rep1",
                             "nonprivate"])
    assert topics["collapsed_cavi_eps1_rep1"].startswith("stage infer_vi_topics:")
    assert list(named_fits(settings, "network")) == [
        "naive_C10_eps1_rep1", "naive_C10_eps3.0_rep1", "naive_C20_eps1_rep1_unmasked",
        "naive_C20_eps3.0_rep1_unmasked", "naive_C5_eps1_rep1", "naive_C5_eps3.0_rep1",
        "nonprivate_C10", "nonprivate_C20_unmasked", "nonprivate_C5"]
    assert list(named_fits(settings, "network_rows_cols")) == [
        "naive_C5_eps1_rep1", "naive_C5_eps3.0_rep1", "nonprivate_C5"]
    with pytest.raises(ValueError, match="unknown study"):
        named_fits(settings, "other")
    with pytest.raises(KeyError, match="vi_topics.methods"):
        named_fits({**settings, "vi_topics": {}}, "topics")


def _topic_fits(folder, y, phi, *names):
    for name in names:
        method = name.split("_eps")[0]
        extra = {} if name == "nonprivate" else {"epsilon_over_n": float(name.split("_eps")[1][:3])}
        _save(folder, name, method, np.full(y.shape, 1.0 + len(name) % 3), phi, **extra)


def test_a_fit_of_an_earlier_run_is_left_out_and_reported(tmp_path):
    """The fits of an earlier run (another level, a dropped method: DVC never deletes them)
    stay in the folder; the table scores the fits the settings name, and says what it left out."""
    rng = np.random.default_rng(2)
    y = sp.csr_array(rng.poisson(1.0, (20, 8)))
    phi = rng.gamma(1.0, 1.0, (2, 3, 8))
    current, both = tmp_path / "current", tmp_path / "both"
    for folder in (current, both):
        _topic_fits(folder, y, phi, "collapsed_eps1.0_rep0", "nonprivate")
    _topic_fits(both, y, phi, "collapsed_eps3.0_rep0", "naive_eps1.0_rep0")
    names = named_fits(SETTINGS, "topics")
    table = score_topic_fits(both, y, n_top=3, names=names)
    assert list(table.fit) == ["collapsed_eps1.0_rep0", "nonprivate", "zeros", "oracle"]
    assert table.attrs["left_out"] == ["collapsed_eps3.0_rep0", "naive_eps1.0_rep0"]
    assert set(table.attrs["seconds"]) == {"collapsed_eps1.0_rep0", "nonprivate"}
    message = left_out_message(table)
    assert "not named by params.yaml" in message and "delete them" in message
    assert "collapsed_eps3.0_rep0, naive_eps1.0_rep0" in message
    # the rows of the named fits are those of a folder that holds them alone
    alone = score_topic_fits(current, y, n_top=3, names=names)
    pd.testing.assert_frame_equal(table, alone)
    assert (write_table(table, tmp_path / "a.csv").read_bytes()
            == write_table(alone, tmp_path / "b.csv").read_bytes())


def test_a_community_fit_of_an_earlier_run_is_left_out(tmp_path):
    y = np.array([[0, 1, 2], [3, 0, 4], [5, 6, 0]])
    for name, method in (("collapsed_C2_eps1.0_rep0", "collapsed"),
                         ("collapsed_C2_eps2.0_rep0", "collapsed"),
                         ("nonprivate_C2", "nonprivate"), ("nonprivate_C5", "nonprivate")):
        _save(tmp_path, name, method, np.ones((3, 3)), n_components=2)
    for study in ("network", "network_rows_cols"):
        table = score_community_fits(tmp_path, y, names=named_fits(SETTINGS, study))
        assert list(table.fit) == ["collapsed_C2_eps1.0_rep0", "nonprivate_C2", "zeros",
                                   "oracle"]
        assert table.attrs["left_out"] == ["collapsed_C2_eps2.0_rep0", "nonprivate_C5"]
        assert "collapsed_C2_eps2.0_rep0, nonprivate_C5" in left_out_message(table)


def test_a_fit_the_settings_name_must_be_there(tmp_path):
    rng = np.random.default_rng(2)
    y = sp.csr_array(rng.poisson(1.0, (20, 8)))
    phi = rng.gamma(1.0, 1.0, (2, 3, 8))
    _topic_fits(tmp_path, y, phi, "collapsed_eps1.0_rep0", "nonprivate")
    settings = {**SETTINGS, "privacy": {"levels": [1.0, 2.0]}}
    with pytest.raises(FileNotFoundError) as error:
        score_topic_fits(tmp_path, y, n_top=3, names=named_fits(settings, "topics"))
    message = str(error.value)
    assert str(tmp_path / "collapsed_eps2.0_rep0") in message
    assert ("stage infer_private_topics: topics.methods collapsed, privacy.levels 2.0, "
            "topics.replicates 0") in message
    assert "collapsed_eps1.0_rep0" not in message
    # a folder without its fit.json (an interrupted run) is no fit
    (tmp_path / "collapsed_eps2.0_rep0").mkdir()
    with pytest.raises(FileNotFoundError, match="collapsed_eps2.0_rep0"):
        score_topic_fits(tmp_path, y, n_top=3, names=named_fits(settings, "topics"))
    with pytest.raises(FileNotFoundError, match="nonprivate_C2"):
        score_community_fits(tmp_path, np.ones((3, 3)), names=named_fits(SETTINGS, "network"))


def test_a_folder_of_the_named_fits_alone_scores_as_before(tmp_path):
    """The normal case: the folder holds the fits the settings name, and nothing else."""
    rng = np.random.default_rng(2)
    y = sp.csr_array(rng.poisson(1.0, (20, 8)))
    phi = rng.gamma(1.0, 1.0, (2, 3, 8))
    settings = {**SETTINGS, "topics": {"methods": ["naive", "collapsed"], "replicates": [0]}}
    _topic_fits(tmp_path, y, phi, "nonprivate", "naive_eps1.0_rep0", "collapsed_eps1.0_rep0")
    named = score_topic_fits(tmp_path, y, n_top=3, names=named_fits(settings, "topics"))
    every = score_topic_fits(tmp_path, y, n_top=3)
    pd.testing.assert_frame_equal(named, every)
    assert list(named.fit) == ["collapsed_eps1.0_rep0", "naive_eps1.0_rep0", "nonprivate",
                               "zeros", "oracle"]
    assert named.attrs["left_out"] == [] and left_out_message(named) is None


def _table(methods, by=None):
    rows = [{"fit": f"{m}_{e}_{r}", "method": m, "epsilon_over_n": e, "mae": 1.0 + r + e,
             "npmi": 0.1 * r, **({by: c} if by else {})}
            for m in methods for e in (1.0, 2.0) for r in (0, 1)
            for c in ((5, 10) if by else (None,))]
    rows += [{"fit": "nonprivate", "method": "nonprivate", "epsilon_over_n": None, "mae": 0.5,
              "npmi": 0.3, **({by: c} if by else {})} for c in ((5, 10) if by else (None,))]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("methods", [["collapsed", "naive"], ["bessel", "collapsed", "naive"],
                                     ["bessel", "collapsed", "naive", "other"]])
def test_the_legend_names_every_method_present(methods):
    fig = plot_scores(_table(methods), ["mae", "npmi", "coherence"])
    try:
        (legend,) = fig.legends
        # the shared names, in the shared order (study.figures), then what a bar spans
        assert [t.get_text() for t in legend.get_texts()] == [
            *method_palette(methods), "non-private", "bars: ± sd over 2 copies"]
        assert len(fig.axes) == 2  # 'coherence' is not in the table: skipped
        assert all(ax.get_legend() is None for ax in fig.axes)
    finally:
        plt.close(fig)


def test_panels_split_by_a_column_and_the_figure_is_written(tmp_path):
    fig = plot_scores(_table(["bessel", "collapsed", "naive"], by="C"), ["mae"], by="C",
                      figure=tmp_path / "fig" / "f.png")
    try:
        assert [ax.get_title() for ax in fig.axes] == ["C = 5", "C = 10"]
        assert [t.get_text() for t in fig.legends[0].get_texts()] == [
            "ours (collapsed)", "ours (Bessel sampler)", "naive", "non-private",
            "bars: ± sd over 2 copies"]
        assert (tmp_path / "fig" / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        plt.close(fig)


def test_nothing_to_plot_is_refused():
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_scores(_table(["collapsed"]), ["heldout_mae"])


def test_reference_rows_are_lines_in_every_panel_and_missing_values_are_left_out():
    table = _table(["collapsed", "naive"], by="C")
    refs = pd.DataFrame([{"fit": "zeros", "method": "zeros", "mae": 0.25, "npmi": -np.inf},
                         {"fit": "oracle", "method": "oracle", "mae": np.nan, "npmi": np.nan}])
    fig = plot_scores(pd.concat([table, refs], ignore_index=True), ["mae", "npmi"], by="C",
                      title="quick profile")
    try:
        assert fig.axes[0].get_subplotspec().get_geometry()[:2] == (2, 2)  # measures x C
        mae_panels, npmi_panels = fig.axes[:2], fig.axes[2:]
        for ax in mae_panels:  # the C-free zeros line is in both C panels
            assert 0.25 in [line.get_ydata()[0] for line in ax.get_lines() if line.get_ls() == ":"]
        for ax in npmi_panels:  # -inf is not drawn
            assert not [line for line in ax.get_lines() if line.get_ls() == ":"]
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        assert labels == ["ours (collapsed)", "naive", "non-private", "all zeros",
                          "bars: ± sd over 2 copies"]  # no oracle: NaN
        assert fig._suptitle.get_text() == "quick profile"
    finally:
        plt.close(fig)


def test_unmasked_fits_get_panels_of_their_own():
    table = _table(["collapsed", "naive"], by="C")
    table["heldout_used"] = True
    unmasked = table[(table.C == 5)].copy()
    unmasked["heldout_used"] = False
    unmasked["mae"] = unmasked["mae"] + 10.0
    unmasked["fit"] = unmasked["fit"] + "_unmasked"
    refs = pd.DataFrame([{"fit": "zeros", "method": "zeros", "mae": 0.25, "offdiag_mae": 7.5}])
    fig = plot_scores(pd.concat([table, unmasked, refs], ignore_index=True), ["mae", "npmi"],
                      by="C")
    try:
        # measures x C: mae, the unmasked runs' mae, npmi
        assert fig.axes[0].get_subplotspec().get_geometry()[:2] == (3, 2)
        assert [ax.get_ylabel() for ax in fig.axes[::2]] == [
            "MAE", "MAE, unmasked runs (all off-diagonal)", "NPMI (never = -1)"]
        masked_c5, unmasked_c5, unmasked_c10 = fig.axes[0], fig.axes[2], fig.axes[3]

        def points(ax):
            return sorted(y for line in ax.get_lines() if line.get_ls() != ":"
                          for y in line.get_ydata() if np.isfinite(y))

        # the unmasked values are in their panel only; the masked panel is unchanged
        assert min(points(unmasked_c5)) > 10 and max(points(masked_c5)) < 10
        # the all-zeros line of the unmasked panel is its MAE over every off-diagonal entry
        assert [line.get_ydata()[0] for line in unmasked_c5.get_lines()
                if line.get_ls() == ":"] == [7.5]
        assert [t.get_text() for t in unmasked_c10.texts] == ["not run"]
        assert not unmasked_c10.get_lines()
        # each method keeps its colour in every panel
        colours = [{line.get_color() for line in ax.get_lines() if line.get_ls() == "-"}
                   for ax in (masked_c5, unmasked_c5)]
        assert colours[0] == colours[1] and len(colours[0]) == 2
        assert [t.get_text() for t in fig.legends[0].get_texts()] == [
            "ours (collapsed)", "naive", "non-private", "all zeros", "bars: ± sd over 2 copies"]
    finally:
        plt.close(fig)


def test_each_chain_of_a_fit_is_scored_with_the_fits_rhat(tmp_path):
    rng = np.random.default_rng(7)
    y = rng.poisson(rng.gamma(1.0, 1.0, (15, 2)) @ rng.gamma(1.0, 1.0, (2, 8)))
    y_tilde = privatize(y, 0.5, rng=rng)
    res = fit_private(y_tilde, 0.5, TopicModel(2), rng=1, chains=2,
                      run=RunOptions(n_iter=12, burn_in=4, thin=2, progress=False))
    save_fit(res, tmp_path / "collapsed_eps1.0_rep0", data="d", extra={"epsilon_over_n": 1.0},
             diagnostics=diagnostics_record(res))
    one = fit_private(y_tilde, 0.5, TopicModel(2), rng=1,
                      run=RunOptions(n_iter=12, burn_in=4, thin=2, progress=False))
    save_fit(one, tmp_path / "naive_eps1.0_rep0", data="d", extra={"epsilon_over_n": 1.0})
    table = score_topic_fits(tmp_path, sp.csr_array(y), n_top=3)
    chained = table[table.fit == "collapsed_eps1.0_rep0"]
    assert chained.chain.tolist() == [0, 1]
    rhat = load_fit(tmp_path / chained.fit.iloc[0]).metadata.rhat_max
    assert np.isfinite(rhat) and chained.rhat.tolist() == pytest.approx([rhat] * 2)
    assert np.isfinite(chained.rhat).all()
    for c, chain in enumerate(res.chains):  # each row scores its own chain
        assert chained.mae.iloc[c] == pytest.approx(np.abs(chain.mu_hat - y).mean())
    single = table[table.fit == "naive_eps1.0_rep0"]
    assert single.chain.tolist() == [0] and single.rhat.isna().all()
    # chain 0 of the fit of two chains is the one-chain fit on the same seed
    assert chained.mae.iloc[0] == pytest.approx(single.mae.iloc[0])
    assert table[table.method.isin(["zeros", "oracle"])].chain.isna().all()
    text = write_table(table, tmp_path / "t.csv").read_text().splitlines()
    assert text[0].endswith(",chain,rhat") and text[-1].endswith(",,")


# ---- the order of the fits: private folders are in canonical order, the prepared counts not --

def _prepared(tmp_path, kind, y, row_ids, column_ids, heldout=None):
    write_counts(tmp_path / f"prepared_{kind}", y, row_ids=row_ids, column_ids=column_ids,
                 kind=kind, params={}, inputs={}, summary={},
                 arrays={} if heldout is None else {"heldout": heldout})
    return load_counts(tmp_path / f"prepared_{kind}")


def _permuted_back(fit, rows, cols, row_factor="theta", column_factor=None):
    """The same fit in the prepared order: its rates and row (column) factors permuted."""
    samples = dict(fit.samples)
    samples[row_factor] = samples[row_factor][:, rows]
    if column_factor is not None:
        samples[column_factor] = samples[column_factor][:, :, cols]
    return dataclasses.replace(fit, mu_hat=fit.mu_hat[np.ix_(rows, cols)], samples=samples)


@pytest.mark.parametrize("kind", ["topics", "communities"])
def test_a_fit_of_a_private_folder_scores_as_the_same_fit_in_the_prepared_order(tmp_path, kind):
    """The pipeline's fits are in the private folders' canonical order; the report scores them
    against the true counts put in that order (canonical_counts). The scores are those of the
    same fit, its rows and columns permuted back to the prepared order, against the prepared
    counts as they are."""
    rng = np.random.default_rng(8)
    n_rows, n_cols = (30, 16) if kind == "topics" else (14, 14)
    y = rng.poisson(rng.gamma(0.5, 2.0, (n_rows, n_cols)))
    # the prepared order: columns by decreasing total (the ranked vocabulary), rows shuffled
    names = [f"w{j}" for j in range(n_cols)] if kind == "topics" else None
    col_order = np.argsort(-y.sum(axis=0), kind="stable")
    row_order = rng.permutation(n_rows)
    if kind == "topics":
        row_ids = [f"d{i}" for i in row_order]
        column_ids = [names[j] for j in col_order]
        y_prep, heldout = y[np.ix_(row_order, col_order)], None
    else:  # one order for the actors' rows and columns
        row_ids = column_ids = [f"a{i}" for i in col_order]
        y_prep = y[np.ix_(col_order, col_order)]
        heldout = np.zeros_like(y_prep, dtype=bool)
        heldout[:3, :3] = True
    prepared = _prepared(tmp_path, "topics" if kind == "topics" else "network", y_prep,
                         row_ids, column_ids, heldout)
    private = privatize_counts(prepared.counts, tmp_path / "private", epsilon=1.0, N=1.0,
                               source="x", row_ids=prepared.row_ids,
                               column_ids=prepared.column_ids, heldout=heldout, simulation=True, seed=[4, 0])
    fit = fit_private(np.ma.masked_array(private.y_tilde, private.heldout), private.alpha,
                      make_model(kind, n_components=2), rng=1,
                      run=RunOptions(n_iter=30, burn_in=10, thin=5, progress=False)).chains[0]
    save_fit(fit, tmp_path / "canonical" / "collapsed_eps1.0_rep0", data="private",
             extra={"epsilon_over_n": 1.0})
    # where each prepared row (column) sits in the private folder
    rows = np.array([private.row_ids.index(r) for r in prepared.row_ids])
    cols = np.array([private.column_ids.index(c) for c in prepared.column_ids])
    back = _permuted_back(fit, rows, cols, "theta", "phi" if kind == "topics" else None)
    save_fit(back, tmp_path / "prepared" / "collapsed_eps1.0_rep0", data="prepared",
             extra={"epsilon_over_n": 1.0})
    truth = canonical_counts(prepared)
    assert np.array_equal(truth.counts.toarray(), y_prep[np.ix_(np.argsort(rows),
                                                               np.argsort(cols))])
    if kind == "topics":
        ours = score_topic_fits(tmp_path / "canonical", truth.counts, n_top=4)
        theirs = score_topic_fits(tmp_path / "prepared", prepared.counts, n_top=4)
        measures = ["mae", "npmi", "npmi_zero", "coherence", "loglik"]
    else:
        ours = score_community_fits(tmp_path / "canonical", truth.counts,
                                    truth.arrays["heldout"])
        theirs = score_community_fits(tmp_path / "prepared", prepared.counts,
                                      prepared.arrays["heldout"])
        measures = ["mae", "offdiag_mae", "heldout_mae", "heldout_loglik"]
    assert ours[measures].to_numpy() == pytest.approx(theirs[measures].to_numpy(), rel=1e-9,
                                                      nan_ok=True)
    # scored against the prepared order as it is, the private fit's scores are wrong
    if kind == "topics":
        wrong = score_topic_fits(tmp_path / "canonical", prepared.counts, n_top=4)
        assert wrong.mae.iloc[0] != pytest.approx(ours.mae.iloc[0], rel=1e-6)
