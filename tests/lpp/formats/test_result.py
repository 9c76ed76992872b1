"""A fit saves and loads itself as one type (FitResult), its record typed (FitMetadata); fits
written by earlier releases load into it."""
import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest

from lpp.formats import fits
from lpp.formats.fits import FitMetadata, load_chains, load_fit, read_metadata, save_fit
from lpp.formats.result import ChainResult, FitResult
from lpp.inference import RunOptions, TopicModel, fit_nonprivate, fit_private

#: fits written by save_fit of an earlier release (lpp at 9d25d6e) on a tiny problem (12 x 9
#: privatized counts at epsilon 0.5, TopicModel(2), 10 sweeps, burn-in 2, thin 2): format
#: version 1 (one chain, seed 5) and version 2 (two chains of the collapsed method, seed 3,
#: 3 x 2 entries held out, with their diagnostics)
DATA = Path(__file__).parent / "data"


def _same_chain(a, b):
    for name in ("mu_hat", "log_joint", "saved_iterations", "iter_seconds"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert set(a.samples) - {"y"} == set(b.samples)
    for name in b.samples:
        np.testing.assert_array_equal(a.samples[name], b.samples[name])
    assert (a.method, a.model, a.seed, a.n_iter, a.burn_in, a.thin, a.iterations_done,
            a.interrupted) == (b.method, b.model, b.seed, b.n_iter, b.burn_in, b.thin,
                               b.iterations_done, b.interrupted)


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    y = rng.poisson(1.5, (10, 7))
    return y, y + rng.poisson(0.5, y.shape) - rng.poisson(0.5, y.shape)


@pytest.fixture(scope="module")
def two_chains(problem):
    return fit_private(problem[1], 0.5, TopicModel(2), method="naive", chains=2, rng=3,
                       run=RunOptions(n_iter=6, burn_in=2, thin=2, progress=False))


def test_an_mcmc_fit_of_several_chains_round_trips(tmp_path, two_chains):
    out = two_chains.save(tmp_path / "fit", data="somewhere",
                          extra={"epsilon_over_n": 0.5, "heldout_used": False})
    back = FitResult.load(out)
    assert isinstance(back, FitResult) and back.n_chains == 2
    for mine, theirs in zip(back.chains, two_chains.chains):
        assert isinstance(mine, ChainResult) and mine.state == {} and mine.aux == {}
        _same_chain(mine, theirs)
        assert mine.metadata is back.metadata
    np.testing.assert_array_equal(back.mu_hat, two_chains.mu_hat)
    meta = back.metadata
    assert (meta.method, meta.seeds, meta.n_chains, meta.format_version) == (
        "naive", tuple(two_chains.seeds), 2, 2)
    assert meta.model == two_chains.model and meta.data == "somewhere"
    assert meta.epsilon_over_n == 0.5 and meta.heldout_used is False
    assert meta.engine == two_chains.engine and meta.data_fingerprint is not None
    assert np.isnan(meta.rhat_max) and "unavailable" in meta.diagnostics
    assert not meta.variational and meta.vi_method is None and meta.converged is None
    assert meta.seconds_total == pytest.approx(
        sum(float(np.nansum(c.iter_seconds)) for c in two_chains.chains))
    # load_fit is the same call; load_chains its chains; read_metadata the record alone
    assert load_fit(out).metadata == meta and read_metadata(out) == meta
    assert [c.seed for c in load_chains(out)] == two_chains.seeds


def test_a_one_chain_fit_round_trips_and_resaves_to_the_same_bytes(tmp_path, problem):
    result = fit_nonprivate(problem[0], TopicModel(2), rng=4,
                            run=RunOptions(n_iter=5, burn_in=1, thin=2, progress=False))
    save_fit(result, tmp_path / "a", data="counts", extra={"heldout_used": True})
    back = load_fit(tmp_path / "a")
    _same_chain(back, result)
    assert back.metadata.format_version == 1 and back.metadata.seeds == (4,)
    back.save(tmp_path / "b")  # its own data and extra
    for name in ("fit.npz", "fit.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize("name", ["fit_v1", "fit_v2"])
def test_the_fits_of_an_earlier_release_load_and_resave_byte_for_byte(tmp_path, name):
    fit = FitResult.load(DATA / name)
    fit.save(tmp_path / name)
    for member in ("fit.npz", "fit.json"):
        assert (tmp_path / name / member).read_bytes() == (DATA / name / member).read_bytes()


def test_the_format_1_fit_on_disk_loads_with_its_typed_record():
    fit = load_fit(DATA / "fit_v1")
    meta = fit.metadata
    assert isinstance(meta, FitMetadata) and meta.format_version == 1
    assert (meta.method, meta.seeds, meta.seed, meta.n_iter, meta.burn_in, meta.thin) == (
        "collapsed", (5,), 5, 10, 2, 2)
    assert meta.model == {"model": "topics", "n_components": 2, "a0": 0.1, "b0": 1.0}
    assert (meta.iterations_done, meta.interrupted, meta.n_saved) == (10, False, 4)
    assert (meta.data, meta.epsilon_over_n, meta.heldout_used) == ("data/private/x", 0.5, True)
    assert meta.engine == "sparse" and len(meta.data_fingerprint) == 64
    assert meta.device == "cpu" and meta.diagnostics is None and not meta.variational
    assert fit.n_chains == 1 and fit.seed == 5 and fit.engine == "sparse"
    np.testing.assert_array_equal(fit.saved_iterations, [4, 6, 8, 10])
    assert fit.samples["theta"].shape == (4, 12, 2) and fit.samples["phi"].shape == (4, 2, 9)
    assert fit.iter_seconds.shape == (10,)
    # its rates are the mean of the saved draws' rates
    rates = np.einsum("sik,skj->sij", fit.samples["theta"], fit.samples["phi"]).mean(axis=0)
    np.testing.assert_allclose(fit.mu_hat, rates, rtol=1e-12)


def test_the_format_2_fit_on_disk_loads_with_its_chains_and_diagnostics():
    fit = load_fit(DATA / "fit_v2")
    meta = fit.metadata
    assert meta.format_version == 2 and meta.n_chains == fit.n_chains == 2
    assert meta.seeds == (3, 6560175568821997755) and fit.seeds == list(meta.seeds)
    assert np.isfinite(meta.rhat_max) and set(meta.diagnostics) >= {"quantities", "verdicts"}
    assert [c.n_saved for c in fit.chains] == [4, 4]
    np.testing.assert_array_equal(fit.mu_hat, (fit.chains[0].mu_hat + fit.chains[1].mu_hat) / 2)


def test_a_fit_in_memory_has_the_record_its_save_would_write(two_chains):
    meta = two_chains.metadata
    assert meta.format_version is None and meta.data is None and meta.extra == {}
    assert meta.seeds == tuple(two_chains.seeds) and meta.n_iter == 6
    with pytest.raises(dataclasses.FrozenInstanceError):
        meta.method = "collapsed"


def test_saving_needs_to_know_what_the_fit_was_fitted_to(tmp_path, two_chains):
    with pytest.raises(ValueError, match="data= is required"):
        two_chains.save(tmp_path / "fit")
    assert not (tmp_path / "fit").exists()


@pytest.mark.parametrize("name", ["SavedFit", "SavedChains"])
def test_the_retired_names_warn_and_give_the_result_type(name):
    with pytest.warns(FutureWarning, match=f"{name}.*FitResult"):
        assert getattr(fits, name) is FitResult
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fits.load_fit is load_fit  # the names in use warn of nothing
    with pytest.raises(AttributeError, match="no_such_name"):
        fits.no_such_name
