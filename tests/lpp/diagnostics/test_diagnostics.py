"""lpp.diagnostics: InferenceData holds exactly the saved samples; R-hat flags chains that
disagree and passes chains that agree; trace figure; bad input."""
from __future__ import annotations

import dataclasses

import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import pytest

from lpp import diagnostics
from lpp.diagnostics.export import as_inference_data
from lpp.formats.fits import load_fit, save_fit
from lpp.inference import ChainResult, TopicModel

#: the shared chains' schedule (tests/conftest.py, toy_topic_chains)
N_ITER, BURN_IN, THIN = 14, 4, 2


@pytest.fixture(scope="module")
def corpus(toy_topic_chains):
    return toy_topic_chains.corpus


@pytest.fixture(scope="module")
def chains(toy_topic_chains):
    return toy_topic_chains.chains


def test_inference_data_holds_exactly_the_saved_samples(chains):
    entries = np.array([[0, 0], [3, 7], [23, 9]])
    idata = diagnostics.to_inference_data(chains, entries=entries)
    post = idata.posterior
    assert dict(post.sizes) == {"chain": 2, "draw": (N_ITER - BURN_IN) // THIN, "entry": 3}
    np.testing.assert_array_equal(post["draw"].values, chains[0].saved_iterations)
    assert list(post["entry"].values) == ["0,0", "3,7", "23,9"]
    model = TopicModel(2)
    for c, fit in enumerate(chains):
        np.testing.assert_array_equal(post["log_joint"].values[c], fit.log_joint)
        np.testing.assert_array_equal(idata.sample_stats["lp"].values[c], fit.log_joint)
        for s in range(fit.n_saved):
            mu = model.rate({"theta": fit.samples["theta"][s], "phi": fit.samples["phi"][s]})
            np.testing.assert_allclose(post["mu"].values[c, s], mu[tuple(entries.T)],
                                       rtol=1e-12)
            assert post["total_rate"].values[c, s] == pytest.approx(mu.sum(), rel=1e-12)
    assert post.attrs["seeds"] == "11,12" and post.attrs["methods"] == "nonprivate,nonprivate"


def test_saved_fits_export_like_the_results(chains, tmp_path):
    saved = [load_fit(save_fit(fit, tmp_path / f"chain{c}", data="memory"))
             for c, fit in enumerate(chains)]
    from_results = diagnostics.to_inference_data(chains)
    from_saved = diagnostics.to_inference_data(saved)
    for name in diagnostics.QUANTITIES:
        np.testing.assert_array_equal(from_saved.posterior[name].values,
                                      from_results.posterior[name].values)


def test_rate_samples_are_the_model_rates(chains):
    fit = chains[0]
    rates = list(diagnostics.rate_samples(fit))
    assert len(rates) == fit.n_saved
    np.testing.assert_allclose(np.mean(rates, axis=0), fit.mu_hat, rtol=1e-12)


def test_default_entries_are_the_largest_rates(chains):
    entries = diagnostics.default_entries(chains[0], 3)
    mu_hat = chains[0].mu_hat
    picked = mu_hat[tuple(entries.T)]
    assert np.all(np.diff(picked) <= 0) and picked[-1] >= np.sort(mu_hat.ravel())[-3]


def _fake_chain(draws_theta, seed=0):
    """A chain of the 2 x 2 topic model with the given theta draws (phi = identity)."""
    n = draws_theta.shape[0]
    phi = np.broadcast_to(np.eye(2), (n, 2, 2)).copy()
    return ChainResult(method="fake", model=TopicModel(2).params(), seed=seed, n_iter=n,
                       burn_in=0, thin=1, iterations_done=n, interrupted=False,
                       mu_hat=draws_theta.mean(axis=0),
                       samples={"theta": draws_theta, "phi": phi},
                       log_joint=-draws_theta.sum(axis=(1, 2)),
                       saved_iterations=np.arange(1, n + 1), iter_seconds=np.ones(n),
                       state={}, aux={})


def test_rhat_passes_agreeing_chains_and_flags_stuck_ones():
    rng = np.random.default_rng(0)
    same = [_fake_chain(rng.gamma(5.0, 1.0, size=(400, 2, 2)), c) for c in range(4)]
    summary = diagnostics.convergence_summary(same)
    assert list(summary.columns) == ["r_hat", "ess_bulk", "ess_tail"]
    assert len(summary) == 2 + 4  # log_joint, total_rate and four entries
    assert (summary["r_hat"] < 1.01).all()
    assert (summary["ess_bulk"] > 1000).all()  # iid draws: ESS near 4 x 400
    # one chain stuck at another level: every quantity's R-hat must flag it
    stuck = same[:3] + [_fake_chain(rng.gamma(5.0, 1.0, size=(400, 2, 2)) + 3.0, 3)]
    assert (diagnostics.convergence_summary(stuck)["r_hat"] > 1.1).all()


def test_trace_figure(chains):
    figure = diagnostics.plot_traces(chains, title="quick profile, 14 sweeps")
    assert isinstance(figure, matplotlib.figure.Figure)
    assert figure._suptitle.get_text() == "quick profile, 14 sweeps"
    assert len(figure.axes) == 6  # three quantities, density and trace each
    plt.close(figure)
    # chains in given colours (cycled), kept when the figure is drawn later
    figure = diagnostics.plot_traces(chains, chain_colours=["#222222"])
    colours = {matplotlib.colors.to_hex(line.get_color()) for ax in figure.axes
               for line in ax.get_lines()}
    assert colours == {"#222222"}
    plt.close(figure)


def test_bad_input(chains, corpus):
    with pytest.raises(TypeError, match="FitResult or ChainResult; got str"):
        diagnostics.to_inference_data([chains[0], "chain"])
    with pytest.raises(TypeError, match="non-empty sequence"):
        diagnostics.to_inference_data([])
    with pytest.raises(ValueError, match="at least 2"):
        diagnostics.convergence_summary(chains[0])
    with pytest.raises(ValueError, match="inside the data"):
        diagnostics.to_inference_data(chains, entries=[[0, 10]])
    with pytest.raises(ValueError, match="n x 2"):
        diagnostics.to_inference_data(chains, entries=[0, 1])
    with pytest.raises(ValueError, match="unknown quantities"):
        diagnostics.plot_traces(chains, var_names=["theta"])
    rng = np.random.default_rng(1)
    short = _fake_chain(rng.gamma(5.0, 1.0, size=(3, 2, 2)))
    with pytest.raises(ValueError, match="other iterations"):
        diagnostics.to_inference_data([_fake_chain(rng.gamma(5.0, 1.0, size=(4, 2, 2))), short])
    other = dataclasses.replace(short, model=TopicModel(3).params())
    with pytest.raises(ValueError, match="another model"):
        diagnostics.to_inference_data([short, other])


def test_default_entries_skip_excluded_entries(chains):
    mu_hat = chains[0].mu_hat
    top = diagnostics.default_entries(chains[0], 2)
    exclude = np.zeros(mu_hat.shape, dtype=bool)
    exclude[tuple(top[0])] = True
    entries = diagnostics.default_entries(chains[0], 2, exclude=exclude)
    np.testing.assert_array_equal(entries[0], top[1])
    assert not exclude[tuple(entries.T)].any()
    with pytest.raises(ValueError, match="boolean"):
        diagnostics.default_entries(chains[0], 2, exclude=exclude.astype(int))
    with pytest.raises(ValueError, match="n must lie"):
        diagnostics.default_entries(chains[0], 2, exclude=np.ones(mu_hat.shape, dtype=bool))


def test_followed_entries_are_named_by_their_row_and_column(chains, tmp_path):
    docs = [f"doc{d}" for d in range(24)]
    words = [f"word{v}" for v in range(10)]
    entries = np.array([[0, 0], [3, 7]])
    assert diagnostics.entry_labels(entries) == ["0,0", "3,7"]
    assert diagnostics.entry_labels(entries, (docs, words)) == ["doc0, word0", "doc3, word7"]
    idata = diagnostics.to_inference_data(chains, entries=entries, names=(docs, words))
    assert list(idata.posterior["entry"].values) == ["doc0, word0", "doc3, word7"]
    # the trace figure names them in a legend of line styles
    figure = diagnostics.plot_traces(idata)
    legend = figure.axes[-1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["doc0, word0", "doc3, word7"]
    plt.close(figure)
    with pytest.raises(ValueError, match="one sequence per axis"):
        diagnostics.entry_labels(entries, (docs,))
    with pytest.raises(ValueError, match="axis 1 has 5 names"):
        diagnostics.entry_labels(entries, (docs, words[:5]))


# --- chain agreement: drifting, modes or agree, with stated error rates --------------------------
# Each rate is estimated from REPS replications at a fixed seed; the bounds sit about 3.5
# binomial standard deviations from the rate the design gives (false alarm 5 %, so the test
# itself fails by chance far less than once in a thousand runs at any seed).
REPS = 300


def _ar1(rng, n_chains, n_draws, rho=0.0):
    """Stationary AR(1) traces with unit variance (``rho`` = 0: independent draws)."""
    noise = rng.normal(size=(n_chains, n_draws)) * np.sqrt(1.0 - rho ** 2)
    x = np.empty((n_chains, n_draws))
    x[:, 0] = rng.normal(size=n_chains)
    for t in range(1, n_draws):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


def _verdict_rates(make, rng):
    import arviz

    counts = dict.fromkeys(("agree", "drifting", "modes", "unclear"), 0)
    for _ in range(REPS):
        x = make(rng)
        counts[diagnostics.agreement_of(x, float(arviz.rhat(x)))["verdict"]] += 1
    return {k: v / REPS for k, v in counts.items()}


def test_geweke_z_is_standard_normal_on_stationary_traces_and_large_on_trends():
    rng = np.random.default_rng(20261125)
    z = np.array([diagnostics.geweke_z(x) for x in _ar1(rng, REPS, 100)])
    assert abs(z.mean()) < 0.25 and 0.8 < z.std() < 1.25
    assert np.mean(np.abs(z) > 1.96) < 0.09  # 5 % by design
    trend = _ar1(rng, REPS, 100) + np.linspace(3.0, 0.0, 100)  # 3 sd down over the trace
    assert np.mean(np.abs([diagnostics.geweke_z(x) for x in trend]) > 1.96) > 0.5  # about 0.62
    with pytest.raises(ValueError, match="at least 4"):
        diagnostics.geweke_z([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="finite"):
        diagnostics.geweke_z([1.0, 2.0, np.nan, 3.0, 4.0])


def test_agreement_false_alarms_on_chains_of_one_stationary_distribution():
    rng = np.random.default_rng(1)
    rates = _verdict_rates(lambda r: _ar1(r, 2, 100), rng)
    assert rates["drifting"] < 0.09  # DRIFT_FALSE_ALARM = 5 %
    assert rates["modes"] == 0.0 and rates["agree"] > 0.9
    # autocorrelated (tau = 3): still never modes; drifting is called more often, not less
    rates = _verdict_rates(lambda r: _ar1(r, 2, 100, rho=0.5), rng)
    assert rates["modes"] < 0.01 and rates["agree"] > 0.8


def test_agreement_finds_stationary_chains_in_different_modes():
    rng = np.random.default_rng(2)
    offset = np.array([[0.0], [3.0]])  # the second chain 3 sd higher all along
    rates = _verdict_rates(lambda r: _ar1(r, 2, 100) + offset, rng)
    assert rates["modes"] > 0.9 and rates["agree"] == 0.0


def test_agreement_finds_drifting_chains():
    rng = np.random.default_rng(3)
    rates = _verdict_rates(lambda r: _ar1(r, 2, 100) + np.linspace(3.0, 0.0, 100), rng)
    assert rates["drifting"] > 0.6 and rates["agree"] < 0.01 and rates["modes"] < 0.01


def test_chain_agreement_tabulates_every_quantity_with_its_numbers():
    rng = np.random.default_rng(4)
    same = [_fake_chain(rng.gamma(5.0, 1.0, size=(200, 2, 2)), c) for c in range(2)]
    table = diagnostics.chain_agreement(same)
    summary = diagnostics.convergence_summary(same)
    assert list(table.index) == list(summary.index)
    np.testing.assert_allclose(table.r_hat, summary.r_hat, rtol=1e-12)
    assert (table.verdict == "agree").all()
    idata = diagnostics.to_inference_data(same)
    means = idata.posterior["total_rate"].values.mean(axis=1)
    np.testing.assert_allclose(table.loc["total_rate", "chain_means"], means, rtol=1e-12)
    assert len(table.loc["log_joint", "drift_z"]) == 2
    # the second chain stuck higher: modes, far apart in within-chain sd
    stuck = [same[0], _fake_chain(rng.gamma(5.0, 1.0, size=(200, 2, 2)) + 6.0, 1)]
    table = diagnostics.chain_agreement(stuck)
    assert table.loc["total_rate", "verdict"] == "modes"
    assert table.loc["total_rate", "separation"] > diagnostics.MODE_SEPARATION
    with pytest.raises(ValueError, match="at least 2"):
        diagnostics.chain_agreement(same[0])


# --- ArviZ 0.x and 1.x: the same object's groups, the same numbers, no warnings ------------------
def _wave_chains(n_chains=3, n_draws=200):
    """Chains of deterministic, slightly different traces (no random stream, so the numbers
    below hold under any NumPy): entry (i, j) of chain c at draw t."""
    t = np.arange(n_draws)[:, None, None]
    i, j = np.arange(2)[None, :, None], np.arange(2)[None, None, :]
    return [_fake_chain(5.0 + 2 * i + j + np.sin(0.7 * t + c + i)
                        + 0.5 * np.cos(2.3 * t * (c + 1) + j) + 0.2 * c, c)
            for c in range(n_chains)]


#: ArviZ 0.23.4's summary of the total rate of _wave_chains() (R-hat, bulk ESS, tail ESS); ArviZ
#: 1.3's summary gives a tail ESS of 400.27 (quantiles 5.5 % and 94.5 %)
TOTAL_RATE_R_HAT, TOTAL_RATE_ESS_BULK, TOTAL_RATE_ESS_TAIL = (
    1.0318670466127673, 260.0802892346037, 395.21955482136804)


def test_exported_data_give_the_diagnostics_of_the_raw_arrays_without_warnings():
    """Whatever the ArviZ line (0.x: InferenceData, 1.x: DataTree), the table is ArviZ's R-hat
    and ESS of the exported arrays themselves, the tail ESS at the 5 % and 95 % quantiles (1.x's
    summary would take 5.5 % and 94.5 %), and nothing warns (1.x warns on arviz.InferenceData)."""
    import warnings

    import arviz
    import xarray

    fits = _wave_chains()
    entries = np.array([[0, 0], [1, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        idata = diagnostics.to_inference_data(fits, entries=entries)
        assert diagnostics.is_inference_data(idata)
        if diagnostics.arviz_major() >= 1:
            assert isinstance(idata, xarray.DataTree)
        else:
            assert isinstance(idata, arviz.InferenceData)
        summary = diagnostics.convergence_summary(idata)
        table = diagnostics.chain_agreement(idata)
        figure = diagnostics.plot_traces(idata)
        plt.close(figure)
        # fits and their export give the same table
        np.testing.assert_array_equal(diagnostics.convergence_summary(fits, entries=entries),
                                      summary)
        raw = {"log_joint": np.stack([f.log_joint for f in fits]),
               "total_rate": np.stack([f.samples["theta"].sum(axis=(1, 2)) for f in fits])}
        for e, (i, j) in enumerate(entries):
            raw[f"mu[{i},{j}]"] = np.stack([f.samples["theta"][:, i, j] for f in fits])
        assert list(summary.index) == list(raw)
        for name, x in raw.items():
            assert summary.loc[name, "r_hat"] == pytest.approx(float(arviz.rhat(x)), rel=1e-12)
            assert summary.loc[name, "ess_bulk"] == pytest.approx(float(arviz.ess(x)), rel=1e-12)
            tail = float(arviz.ess(x, method="tail", prob=diagnostics.TAIL_PROB))
            assert summary.loc[name, "ess_tail"] == pytest.approx(tail, rel=1e-12)
    np.testing.assert_allclose(table.r_hat, summary.r_hat, rtol=1e-12)
    # ArviZ 0.23.4's numbers (arviz.summary, kind="diagnostics"), which 1.x must reproduce
    assert summary.loc["total_rate"].tolist() == pytest.approx(
        [TOTAL_RATE_R_HAT, TOTAL_RATE_ESS_BULK, TOTAL_RATE_ESS_TAIL], rel=1e-9)


def test_exported_objects_pass_through_and_others_are_not_taken_for_them():
    fits = _wave_chains(2, 20)
    idata = diagnostics.to_inference_data(fits)
    assert as_inference_data(idata) is idata
    assert not diagnostics.is_inference_data(fits)
    assert not diagnostics.is_inference_data({"posterior": {}})
    assert idata.posterior.attrs["seeds"] == "0,1" and idata.posterior.attrs["methods"] == "fake,fake"
    np.testing.assert_array_equal(idata.sample_stats["lp"].values,
                                  idata.posterior["log_joint"].values)
