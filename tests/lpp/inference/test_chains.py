"""Fits of several chains (n_chains): seeds, reproducibility, diagnostics, saving and loading."""
import json

import numpy as np
import pytest

from lpp.diagnostics import (
    chain_agreement,
    convergence_summary,
    diagnostics_record,
    fit_diagnostics,
)
from lpp.formats.fits import load_chains, load_fit, save_fit
from lpp.inference import ChainResult, FitResult, TopicModel, fit_nonprivate, fit_private
from lpp.inference import RunOptions
from lpp.inference.fit import chain_checkpoint
from lpp.mechanism import privatize
from lpp.randomness import chain_seeds

SCHEDULE = {"n_iter": 16, "burn_in": 8, "thin": 2, "progress": False}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    y = rng.poisson(rng.gamma(1.0, 1.0, (12, 2)) @ rng.gamma(1.0, 1.0, (2, 9)))
    return y, privatize(y, 0.5, rng=rng)


def test_one_chain_is_the_plain_fit(data, tmp_path, same_chain):
    _, y_tilde = data
    plain = fit_private(y_tilde, 0.5, TopicModel(2), rng=3,
                        run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False))
    one = fit_private(y_tilde, 0.5, TopicModel(2), rng=3, chains=1,
                      run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False))
    assert type(one) is FitResult and one.n_chains == 1
    assert type(one.chains[0]) is ChainResult and one.samples is one.chains[0].samples
    same_chain(plain, one)
    save_fit(plain, tmp_path / "plain", data="d")
    save_fit(one, tmp_path / "one", data="d")
    meta = json.loads((tmp_path / "one" / "fit.json").read_text())
    plain_meta = json.loads((tmp_path / "plain" / "fit.json").read_text())
    assert list(meta) == list(plain_meta)  # the same file, timings and checksum aside
    assert meta["format_version"] == 1 and "n_chains" not in meta
    assert type(load_fit(tmp_path / "one")) is FitResult
    assert len(load_chains(tmp_path / "one")) == 1


def test_chains_run_on_their_own_seeds_and_repeat(data, same_chain):
    _, y_tilde = data
    res = fit_private(y_tilde, 0.5, TopicModel(2), rng=3, chains=3,
                      run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False))
    again = fit_private(y_tilde, 0.5, TopicModel(2), rng=3, chains=3,
                        run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False))
    assert isinstance(res, FitResult) and res.n_chains == 3
    with pytest.raises(AttributeError, match="one samples per chain"):
        res.samples  # a fit of several chains does not pick one
    assert res.seeds == chain_seeds(3, 3) and res.seeds[0] == 3 and len(set(res.seeds)) == 3
    for a, b in zip(res.chains, again.chains):
        same_chain(a, b)  # bit-identical on rerun
    for c, chain in enumerate(res.chains):
        # each chain is exactly the one-chain fit on its own seed: nothing is shared between
        # chains but the data
        same_chain(chain, fit_private(y_tilde, 0.5, TopicModel(2), rng=res.seeds[c],
                                      run=RunOptions(n_iter=16, burn_in=8, thin=2,
                                                     progress=False)))
    assert not np.array_equal(res.chains[0].mu_hat, res.chains[1].mu_hat)
    assert not np.array_equal(res.chains[1].mu_hat, res.chains[2].mu_hat)
    np.testing.assert_allclose(res.mu_hat, np.mean([c.mu_hat for c in res.chains], axis=0))


def test_chain_seeds_do_not_collide():
    seeds = chain_seeds(11, 200)
    assert len(set(seeds)) == 200 and all(0 <= s < 2**63 for s in seeds)
    assert chain_seeds(11, 5) == seeds[:5]
    assert set(chain_seeds(12, 5)).isdisjoint(seeds[1:])


def test_nonprivate_chains(data, same_chain):
    y, _ = data
    res = fit_nonprivate(y, TopicModel(2), rng=5, chains=2,
                         run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False))
    assert res.method == "nonprivate" and res.seeds == chain_seeds(5, 2)
    same_chain(res.chains[1], fit_nonprivate(y, TopicModel(2), rng=res.seeds[1],
                                             run=RunOptions(n_iter=16, burn_in=8, thin=2,
                                                            progress=False)))


def test_saved_chains_round_trip_with_their_diagnostics(data, tmp_path):
    _, y_tilde = data
    mask = np.zeros(y_tilde.shape, dtype=bool)
    mask[0, :3] = True
    res = fit_private(np.ma.masked_array(y_tilde, mask), 0.5, TopicModel(2), rng=3, chains=2,
                      run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False))
    save_fit(res, tmp_path / "fit", data="d", extra={"epsilon_over_n": 0.7},
             diagnostics=diagnostics_record(res))
    saved = load_fit(tmp_path / "fit")
    assert isinstance(saved, FitResult) and saved.n_chains == 2
    assert saved.metadata.format_version == 2 and saved.metadata.n_chains == 2
    assert saved.metadata.extra == {"epsilon_over_n": 0.7}
    for chain, original in zip(saved.chains, res.chains):
        assert chain.seed == original.seed and chain.metadata is saved.metadata
        assert np.array_equal(chain.mu_hat, original.mu_hat)
        assert np.array_equal(chain.log_joint, original.log_joint)
        for name in original.samples:
            assert np.array_equal(chain.samples[name], original.samples[name])
    assert [c.seed for c in load_chains(tmp_path / "fit")] == res.seeds
    # the diagnostics written with the fit are those of the saved chains, masked entries
    # never followed
    from_result = fit_diagnostics(res)
    from_saved = convergence_summary(saved, entries=_entries(from_result))
    assert list(from_result.index) == list(from_saved.index)
    numeric = ["r_hat", "ess_bulk", "ess_tail"]
    np.testing.assert_allclose(from_saved[numeric].to_numpy(), from_result[numeric].to_numpy())
    agreement = chain_agreement(saved, entries=_entries(from_result))
    assert list(from_result.verdict) == list(agreement.verdict)
    np.testing.assert_allclose(from_result.separation, agreement.separation)
    written = saved.metadata.diagnostics["quantities"]
    assert list(written) == list(from_result.index)
    np.testing.assert_allclose([written[q]["r_hat"] for q in written], from_result.r_hat)
    assert [written[q]["verdict"] for q in written] == list(from_result.verdict)
    assert sum(saved.metadata.diagnostics["verdicts"].values()) == len(written)
    assert saved.metadata.rhat_max == pytest.approx(from_result.r_hat.max())
    followed = [tuple(map(int, q[3:-1].split(","))) for q in written if q.startswith("mu[")]
    assert followed and not any(mask[e] for e in followed)
    # saving repeats to the byte
    save_fit(res, tmp_path / "again", data="d", extra={"epsilon_over_n": 0.7},
             diagnostics=diagnostics_record(res))
    for name in ("fit.npz", "fit.json"):
        assert (tmp_path / "fit" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()


def _entries(summary):
    return np.array([list(map(int, q[3:-1].split(","))) for q in summary.index
                     if q.startswith("mu[")])


def test_chains_with_too_few_samples_save_without_rhat(data, tmp_path):
    _, y_tilde = data
    res = fit_private(y_tilde, 0.5, TopicModel(2), rng=3, chains=2,
                      run=RunOptions(n_iter=4, burn_in=2, progress=False))
    save_fit(res, tmp_path / "fit", data="d", diagnostics=diagnostics_record(res))
    saved = load_fit(tmp_path / "fit")
    assert np.isnan(saved.metadata.rhat_max)
    assert "4 saved samples" in saved.metadata.diagnostics["unavailable"]


def test_chains_saved_without_their_diagnostics_say_so(data, tmp_path):
    """save_fit records what it is given: no record computed is written as such, never as a
    fit that passed; a one-chain fit has no record to take."""
    _, y_tilde = data
    res = fit_private(y_tilde, 0.5, TopicModel(2), rng=3, chains=2,
                      run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False))
    save_fit(res, tmp_path / "fit", data="d")
    saved = load_fit(tmp_path / "fit")
    assert np.isnan(saved.metadata.rhat_max)
    assert "diagnostics_record" in saved.metadata.diagnostics["unavailable"]
    with pytest.raises(ValueError, match="several chains"):
        save_fit(res.chains[0], tmp_path / "one", data="d", diagnostics={"rhat_max": 1.0})


def test_chain_checkpoints_resume(data, tmp_path, same_chain):
    _, y_tilde = data
    path = tmp_path / "ck.npz"
    assert chain_checkpoint(path, 0) == path
    assert chain_checkpoint(path, 2) == tmp_path / "ck.chain2.npz"
    whole = fit_private(y_tilde, 0.5, TopicModel(2), rng=3, chains=2,
                        run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False))
    fit_private(y_tilde, 0.5, TopicModel(2), rng=3, chains=2,
                run=RunOptions(checkpoint=path, **dict(SCHEDULE, n_iter=10)))
    assert path.exists() and chain_checkpoint(path, 1).exists()
    resumed = fit_private(y_tilde, 0.5, TopicModel(2), rng=3, chains=2,
                          run=RunOptions(checkpoint=path, resume=True, **SCHEDULE))
    for a, b in zip(whole.chains, resumed.chains):
        same_chain(a, b)
    with pytest.raises(ValueError, match="base seed"):
        fit_private(y_tilde, 0.5, TopicModel(2), chains=2,
                    run=RunOptions(checkpoint=path, resume=True, **SCHEDULE))


@pytest.mark.parametrize("bad,error", [(0, ValueError), (True, TypeError), (1.5, TypeError)])
def test_bad_chain_counts_are_refused(data, bad, error):
    _, y_tilde = data
    with pytest.raises(error, match="chains"):
        fit_private(y_tilde, 0.5, TopicModel(2), chains=bad,
                    run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False))


def test_an_unknown_format_version_is_refused(data, tmp_path):
    _, y_tilde = data
    save_fit(fit_private(y_tilde, 0.5, TopicModel(2), rng=3,
                         run=RunOptions(n_iter=16, burn_in=8, thin=2,
                                        progress=False)), tmp_path, data="d")
    meta = json.loads((tmp_path / "fit.json").read_text())
    meta["format_version"] = 3
    (tmp_path / "fit.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="reads version 1 or 2"):
        load_fit(tmp_path)
