"""study.diagnose: the pipeline's diagnosis table of saved chains, case by case."""
from __future__ import annotations

import numpy as np
import pytest

from lpp import diagnostics
from lpp.formats.fits import save_fit
from lpp.inference import RunOptions, TopicModel, fit_nonprivate
from study.diagnose import CASE_COLUMNS, diagnose_cases


def test_diagnose_cases_tabulates_saved_chains(toy_topic_chains, tmp_path):
    chains, schedule = toy_topic_chains.chains, toy_topic_chains.schedule
    dirs = [save_fit(fit, tmp_path / f"chain{c}", data="memory") for c, fit in enumerate(chains)]
    table, idatas = diagnose_cases({"toy": {"fits": dirs, "exclude": None}}, n_entries=2)
    assert list(table.columns) == list(CASE_COLUMNS)
    assert list(table.quantity[:2]) == ["log_joint", "total_rate"] and len(table) == 4
    expect = diagnostics.convergence_summary(chains, n_entries=2)
    np.testing.assert_allclose(table.r_hat, expect.r_hat, rtol=1e-12)
    draws = (schedule["n_iter"] - schedule["burn_in"]) // schedule["thin"]
    assert (table.chains == 2).all() and (table.draws == draws).all()
    agreement = diagnostics.chain_agreement(chains, n_entries=2)
    assert list(table.verdict) == list(agreement.verdict)
    np.testing.assert_allclose(table.separation, agreement.separation, rtol=1e-12)
    assert table.chain_means.iloc[1] == ";".join(
        f"{m:.6g}" for m in agreement.loc["total_rate", "chain_means"])
    assert table.seeds.iloc[0] == "11,12" and table.n_iter.iloc[0] == schedule["n_iter"]
    np.testing.assert_array_equal(idatas["toy"].posterior["log_joint"].values[1],
                                  chains[1].log_joint)
    with pytest.raises(ValueError, match="at least 2 chains"):
        diagnose_cases({"toy": {"fits": dirs[:1]}})


def test_followed_entries_are_named_by_their_row_and_column(toy_topic_chains, tmp_path):
    chains = toy_topic_chains.chains
    docs = [f"doc{d}" for d in range(24)]
    words = [f"word{v}" for v in range(10)]
    dirs = [save_fit(fit, tmp_path / f"chain{c}", data="memory") for c, fit in enumerate(chains)]
    table, _ = diagnose_cases(
        {"toy": {"fits": dirs, "exclude": None, "names": (docs, words)}}, n_entries=2)
    assert all(q.startswith("mu[doc") and ", word" in q for q in table.quantity[2:])


def test_diagnose_cases_reads_every_chain_of_a_fit_folder(toy_topic_chains, tmp_path):
    chains = toy_topic_chains.chains
    several = fit_nonprivate(toy_topic_chains.corpus.y, TopicModel(2), rng=11, chains=2,
                             run=RunOptions(progress=False, **toy_topic_chains.schedule))
    folder = save_fit(several, tmp_path / "two", data="memory",
                      diagnostics=diagnostics.diagnostics_record(several))
    table, idatas = diagnose_cases({"toy": {"fits": [folder]}}, n_entries=2)
    assert (table.chains == 2).all()
    np.testing.assert_allclose(table.r_hat, diagnostics.fit_diagnostics(several, n_entries=2).r_hat, rtol=1e-12)
    extra = save_fit(chains[1], tmp_path / "seed12", data="memory")
    table, idatas = diagnose_cases({"toy": {"fits": [folder, extra]}}, n_entries=2)
    assert (table.chains == 3).all()
    assert idatas["toy"].posterior.attrs["seeds"] == ",".join(
        map(str, several.seeds + [chains[1].seed]))
