"""The paper's held-out reading (``heldout_rule="rows_cols"``) on a small network: actors that
are both top senders and top recipients lose every entry, the community model fits them, and
their held-out entries are predicted from the posterior alone."""
from __future__ import annotations

import numpy as np
import pytest

from data_prep.network import heldout_mask
from lpp.inference import CommunityModel, RunOptions, fit_nonprivate, fit_private
from lpp.inference.models import make_model
from lpp.mechanism import alpha_from_epsilon, privatize
from lpp.vi import VIOptions, fit_variational

N_ACTORS, TOP = 12, 3


@pytest.fixture(scope="module")
def network():
    rng = np.random.default_rng(7)
    theta = rng.gamma(0.5, 1.0, size=(N_ACTORS, 2))
    rates = 4.0 * theta @ np.array([[3.0, 0.2], [0.3, 2.0]]) @ theta.T
    np.fill_diagonal(rates, 0.0)
    counts = rng.poisson(rates)
    # actor 0 sends and receives the most: a top sender and a top recipient
    counts[0, 1:] += 30
    counts[1:, 0] += 30
    mask, tops = heldout_mask(counts, top=TOP, rule="rows_cols")
    return counts, mask, tops


def _fully_masked(mask):
    off = ~np.eye(mask.shape[0], dtype=bool)
    return np.flatnonzero([(mask[i] | ~off[i]).all() and (mask[:, i] | ~off[:, i]).all()
                           for i in range(mask.shape[0])])


def test_the_rows_cols_mask_hides_every_entry_of_the_actors_top_in_both_roles(network):
    counts, mask, tops = network
    both = sorted(set(tops["top_senders"]) & set(tops["top_recipients"]))
    assert 0 in both
    assert _fully_masked(mask).tolist() == both


@pytest.mark.parametrize("method", ["collapsed", "naive"])
def test_fully_masked_actors_fit_and_their_predictions_come_from_the_posterior(network, method):
    counts, mask, _ = network
    alpha = float(alpha_from_epsilon(1.0, 1.0))
    y_tilde = privatize(counts, alpha, rng=np.random.default_rng(3))
    fit = fit_private(np.ma.masked_array(y_tilde, mask), alpha, CommunityModel(2), method=method,
                      run=RunOptions(n_iter=30, burn_in=10, thin=5, progress=False), rng=11)
    assert np.isfinite(fit.mu_hat).all() and (fit.mu_hat[mask & ~np.eye(N_ACTORS, dtype=bool)]
                                              > 0).all()
    # the held-out entries carry no likelihood: any values there give the same chain, so the
    # held-out predictions are the posterior's, not the data's
    scrambled = y_tilde.copy()
    scrambled[mask] = np.random.default_rng(0).integers(-50, 500, size=int(mask.sum()))
    again = fit_private(np.ma.masked_array(scrambled, mask), alpha, CommunityModel(2),
                        method=method,
                        run=RunOptions(n_iter=30, burn_in=10, thin=5, progress=False), rng=11)
    np.testing.assert_array_equal(again.mu_hat, fit.mu_hat)
    # ... whereas without the mask the scrambled entries change the fit (the check can fail)
    unmasked = [fit_private(y, alpha, CommunityModel(2), method=method,
                            run=RunOptions(n_iter=30, burn_in=10, thin=5,
                                           progress=False), rng=11).mu_hat
                for y in (y_tilde, scrambled)]
    assert not np.array_equal(*unmasked)


def test_fully_masked_actors_in_the_nonprivate_fit(network):
    counts, mask, _ = network
    fit = fit_nonprivate(np.ma.masked_array(counts, mask), CommunityModel(2),
                         run=RunOptions(n_iter=30, burn_in=10, thin=5, progress=False), rng=11)
    assert np.isfinite(fit.mu_hat).all()
    scrambled = counts.copy()
    scrambled[mask] = 999
    again = fit_nonprivate(np.ma.masked_array(scrambled, mask), CommunityModel(2),
                           run=RunOptions(n_iter=30, burn_in=10, thin=5, progress=False), rng=11)
    np.testing.assert_array_equal(again.mu_hat, fit.mu_hat)


def test_a_mask_that_hides_everything_is_refused(network):
    counts, _, _ = network
    with pytest.raises(ValueError, match="every entry is masked"):
        fit_nonprivate(np.ma.masked_array(counts, np.ones_like(counts, dtype=bool)),
                       CommunityModel(2), run=RunOptions(n_iter=2, progress=False))


@pytest.mark.parametrize("method", ["collapsed", "bessel", "naive"])
def test_fully_masked_actors_in_variational_fits(network, method):
    counts, mask, _ = network
    alpha = float(alpha_from_epsilon(1.0, 1.0))
    y_tilde = privatize(counts, alpha, rng=np.random.default_rng(3))
    scrambled = y_tilde.copy()
    scrambled[mask] = -7
    fits = [fit_variational(np.ma.masked_array(y, mask), alpha, make_model("communities", 2),
                            method=method, rng=1, run=VIOptions(max_iter=40))
            for y in (y_tilde, scrambled)]
    assert np.isfinite(fits[0].mu_hat).all()
    np.testing.assert_array_equal(fits[0].mu_hat, fits[1].mu_hat)
