"""A saved fit's chains run on from checkpoints written from the fit, bit for bit."""
import dataclasses
import json
import logging

import numpy as np
import pytest

from lpp.formats.fits import load_chains, load_fit, save_fit
from lpp.inference import (
    CommunityModel,
    FitResult,
    GibbsSampler,
    RunOptions,
    TopicModel,
    checkpoint_from_fit,
    checkpoints_from_fit,
    fit_nonprivate,
    fit_private,
)

QUIET = {"progress": False}


def _network(rng):
    y = rng.poisson(0.8, (9, 9))
    np.fill_diagonal(y, 0)
    return y


#: name -> (model, method): the fused engines (sparse collapsed, known counts), the dense
#: sweep of another model, and the non-private chain
CASES = {
    "topics collapsed": (lambda: TopicModel(3), "collapsed"),
    "topics naive": (lambda: TopicModel(3), "naive"),
    "topics non-private": (lambda: TopicModel(3), "nonprivate"),
    "communities collapsed": (lambda: CommunityModel(2), "collapsed"),
}


class Case:
    """One fit setting: ``fit(n_iter, burn_in, **kw)`` and ``chain(seed)`` on the same data."""

    def __init__(self, name, y, y_tilde, alpha, mask, thin=2, n_chains=2):
        self.make_model, self.method = CASES[name]
        self.y, self.y_tilde, self.alpha, self.mask = y, y_tilde, alpha, mask
        self.thin, self.n_chains = thin, n_chains

    def fit(self, n_iter, burn_in, rng=5, **kw):
        common = {"run": RunOptions(n_iter=n_iter, burn_in=burn_in, thin=self.thin,
                                    **{**QUIET, **kw}),
                  "rng": rng, "chains": self.n_chains}
        if self.method == "nonprivate":
            return fit_nonprivate(np.ma.masked_array(self.y, self.mask), self.make_model(),
                                  **common)
        return fit_private(np.ma.masked_array(self.y_tilde, self.mask), self.alpha,
                           self.make_model(), method=self.method, **common)

    def chain(self, seed):
        if self.method == "nonprivate":
            return GibbsSampler.nonprivate(self.y, self.make_model(), rng=seed, mask=self.mask)
        return GibbsSampler.private(self.y_tilde, self.alpha, self.make_model(),
                                    method=self.method, rng=seed, mask=self.mask)


def _case(name, n_chains=2):
    rng = np.random.default_rng(11)
    if name.startswith("communities"):
        y = _network(rng)
        mask = None
    else:
        y = rng.poisson(1.5, (14, 11))
        mask = np.zeros(y.shape, bool)
        mask[0, :3] = True
    y_tilde = y + rng.integers(-2, 3, y.shape)
    return Case(name, y, y_tilde, 0.4, mask, n_chains=n_chains)


def _chains(result):
    return getattr(result, "chains", [result])


@pytest.fixture
def same_run(same_chain):
    def check(a, b):
        for x, y in zip(_chains(a), _chains(b), strict=True):
            same_chain(x, y)
    return check


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("burn_in", [10, 14, 20], ids=["same burn-in", "longer", "past the fit"])
def test_a_saved_fit_runs_on_as_one_uninterrupted_run(name, burn_in, tmp_path, same_run):
    """A fit of 20 sweeps (burn-in 10, thin 2), saved, then continued to 40 sweeps with the
    same or a longer burn-in, equals one run of 40 sweeps with that burn-in, bit for bit:
    draws, log joint, the rates' mean (formed again from the kept draws) and the last point."""
    case = _case(name)
    save_fit(case.fit(20, 10), tmp_path / "fit", data="tiny")
    checkpoint = tmp_path / "ck.npz"
    written = checkpoints_from_fit(tmp_path / "fit", case.chain, checkpoint, burn_in=burn_in)
    assert written[0] == checkpoint and len(written) == 2 and written[1].exists()
    continued = case.fit(40, burn_in, checkpoint=checkpoint, resume=True)
    same_run(case.fit(40, burn_in), continued)


def test_one_chain_continues_from_its_fit(tmp_path, same_run):
    case = _case("topics collapsed", n_chains=1)
    save_fit(case.fit(20, 10), tmp_path / "fit", data="tiny")
    (saved,) = load_chains(tmp_path / "fit")
    checkpoint_from_fit(saved, case.chain(0), tmp_path / "ck.npz")
    same_run(case.fit(30, 10),
                     case.fit(30, 10, checkpoint=tmp_path / "ck.npz", resume=True))


def test_the_fit_records_its_data_and_engine(tmp_path):
    case = _case("topics naive")
    fit = case.fit(20, 10)
    save_fit(fit, tmp_path / "fit", data="tiny")
    meta = json.loads((tmp_path / "fit" / "fit.json").read_text())
    chain = case.chain(5)
    assert meta["data_fingerprint"] == chain.fingerprint() == fit.chains[0].data_fingerprint
    assert meta["engine"] == chain.engine == "sparse-known"


@pytest.fixture
def saved_fit(tmp_path):
    """``(case, its chain 0 read back)`` of a collapsed topic fit of 20 sweeps."""
    case = _case("topics collapsed", n_chains=1)
    save_fit(case.fit(20, 10), tmp_path / "fit", data="tiny")
    return case, load_fit(tmp_path / "fit").chains[0]


def _other_data(case):
    other = case.y_tilde.copy()
    other[1, 1] += 1
    return GibbsSampler.private(other, case.alpha, TopicModel(3), rng=5, mask=case.mask)


@pytest.mark.parametrize("chain, burn_in, match", [
    (lambda c: GibbsSampler.private(c.y_tilde, c.alpha, TopicModel(3), method="naive",
                                    mask=c.mask), None, "method 'collapsed'"),
    (lambda c: GibbsSampler.private(c.y_tilde, c.alpha, TopicModel(4), mask=c.mask), None,
     "its model is"),
    (_other_data, None, "fingerprints differ"),
    (lambda c: GibbsSampler.private(c.y_tilde, c.alpha, TopicModel(3), mask=None), None,
     "fingerprints differ"),
    (lambda c: GibbsSampler.private(c.y_tilde, c.alpha, TopicModel(3), mask=c.mask,
                                    sparse=False), None, "engine"),
    (lambda c: c.chain(5), 8, "burn_in=8 must be"),
    (lambda c: c.chain(5), 13, "multiple of its thin 2"),
], ids=["method", "model", "data", "mask", "engine", "shorter burn-in", "off the thinning"])
def test_a_chain_that_is_not_the_fits_is_refused(saved_fit, chain, burn_in, match, tmp_path):
    case, saved = saved_fit
    with pytest.raises(ValueError, match=match):
        checkpoint_from_fit(saved, chain(case), tmp_path / "ck.npz", burn_in=burn_in)
    assert not (tmp_path / "ck.npz").exists()


def test_another_thinning_is_refused(saved_fit, tmp_path):
    case, saved = saved_fit
    with pytest.raises(ValueError, match="every 2th sweep, the continuing run every 4th"):
        checkpoint_from_fit(saved, case.chain(5), tmp_path / "ck.npz", thin=4)
    assert not (tmp_path / "ck.npz").exists()


def test_a_fit_without_its_last_sweep_or_latents_cannot_be_continued(tmp_path):
    case = _case("topics collapsed", n_chains=1)
    save_fit(case.fit(21, 10), tmp_path / "odd", data="tiny")
    with pytest.raises(ValueError, match=r"last sweep \(21\) was not saved"):
        checkpoint_from_fit(load_fit(tmp_path / "odd"), case.chain(5), tmp_path / "ck.npz")
    save_fit(case.fit(20, 10, save_latents=False), tmp_path / "bare", data="tiny")
    with pytest.raises(ValueError, match="saved no draws of"):
        checkpoint_from_fit(load_fit(tmp_path / "bare"), case.chain(5), tmp_path / "ck.npz")


def test_a_fit_that_recorded_no_fingerprint_needs_trust(saved_fit, tmp_path, same_run):
    case, saved = saved_fit
    older = dataclasses.replace(saved, data_fingerprint=None, engine=None)
    with pytest.raises(ValueError, match="trust_data=True"):
        checkpoint_from_fit(older, case.chain(5), tmp_path / "ck.npz")
    checkpoint_from_fit(older, case.chain(5), tmp_path / "ck.npz", trust_data=True)
    same_run(case.fit(30, 10),
                     case.fit(30, 10, checkpoint=tmp_path / "ck.npz", resume=True))


def test_a_rates_mean_that_is_not_reproduced_is_reported(saved_fit, tmp_path, caplog):
    case, saved = saved_fit
    off = dataclasses.replace(saved, mu_hat=saved.mu_hat * (1 + 1e-15) + 1e-300)
    with caplog.at_level(logging.WARNING, logger="lpp.inference.continuation"):
        checkpoint_from_fit(off, case.chain(5), tmp_path / "ck.npz")
    assert "does not give the fit's mu_hat bit for bit" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="lpp.inference.continuation"):
        checkpoint_from_fit(saved, case.chain(5), tmp_path / "ck2.npz")
    assert caplog.text == ""


def test_chains_whose_seeds_are_not_a_fits_are_refused(tmp_path):
    case = _case("topics collapsed", n_chains=1)
    for seed in (5, 6):
        save_fit(case.fit(20, 10, rng=seed), tmp_path / f"s{seed}", data="tiny")
    chains = [load_fit(tmp_path / "s5").chains[0], load_fit(tmp_path / "s6").chains[0]]
    with pytest.raises(ValueError, match="continue them one by one"):
        checkpoints_from_fit(FitResult(chains), case.chain, tmp_path / "ck.npz")
