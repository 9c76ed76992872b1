"""study.evidence: each summary the diagnoses cite prints from the committed tables."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from study import evidence

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("summary", ["heldout", "chains", "seeds", "topics", "central",
                                     "topics-regime", "recovery-map"])
def test_the_summaries_print_from_the_committed_tables(summary, capsys, monkeypatch):
    if not (REPO / "results" / "paper" / "claims.json").is_file():
        pytest.skip("no committed results/paper")
    monkeypatch.chdir(REPO)
    assert evidence.main([summary, "results/paper"]) == 0
    assert capsys.readouterr().out.strip()


def test_an_unknown_summary_is_refused():
    with pytest.raises(SystemExit):
        evidence.main(["nothing-of-the-kind"])


def test_the_recovery_map_summary_shows_the_figures_regime(capsys, monkeypatch):
    if not (REPO / "results" / "synthetic" / "recovery_map.json").is_file():
        pytest.skip("no committed results/synthetic/recovery_map.json")
    monkeypatch.chdir(REPO)
    assert evidence.main(["recovery-map", "results"]) == 0
    out = capsys.readouterr().out
    assert "30 tokens/doc, α0 = 0.8" in out and "collapsed" in out and "# Topic recovery map" in out


def test_the_chain_index_share_of_a_small_table_by_hand():
    # two copies, chain 1 above chain 0 by one in both: the index explains everything; of the
    # four relabellings within copies, two (none swapped, both swapped) keep that share
    share, p = evidence.chain_index_share(np.array([[0.0, 1.0], [5.0, 6.0]]))
    assert share == pytest.approx(1.0) and p == pytest.approx(0.5)
    # opposite orders in the two copies: the index means cancel
    share, p = evidence.chain_index_share(np.array([[0.0, 1.0], [1.0, 0.0]]))
    assert share == pytest.approx(0.0) and p == pytest.approx(1.0)


def test_a_chain_that_follows_its_seed_stands_out_and_exchangeable_chains_do_not():
    rng = np.random.default_rng(3)
    exchangeable = rng.normal(size=(5, 3))
    seeded = exchangeable + np.array([0.0, 0.0, 10.0])  # chain 2 worse in every copy
    share, p = evidence.chain_index_share(seeded)
    # the 3! labellings that move every copy alike keep the share (p >= 6 / 6**5); those
    # that keep the bad chain's place in every copy come near it
    assert share > 0.9 and 6 / 6 ** 5 <= p < 0.01
    share, p = evidence.chain_index_share(exchangeable)
    assert share < 0.6 and p > 0.05
    # under exchangeable chains p is (about) uniform: its mean over tables near 1/2
    ps = [evidence.chain_index_share(rng.normal(size=(3, 3)))[1] for _ in range(200)]
    assert 0.4 < np.mean(ps) < 0.6


def test_a_table_without_spread_has_no_share():
    share, p = evidence.chain_index_share(np.ones((4, 3)))
    assert np.isnan(share) and np.isnan(p)


def test_beyond_the_exact_count_the_relabellings_are_sampled():
    # 5 chains on 5 copies: 120 ** 5 relabellings, too many to enumerate (or to hold)
    rng = np.random.default_rng(4)
    exchangeable = rng.normal(size=(5, 5))
    assert 120 ** 5 > evidence.EXACT_RELABELLINGS
    seeded = exchangeable + np.array([0.0, 0.0, 0.0, 0.0, 10.0])
    share, p = evidence.chain_index_share(seeded)
    # only relabellings that keep the bad chain's place in every copy come near it: about
    # (1/5) ** 5 = 3.2e-4 of them
    assert share > 0.9 and 1 / (1 + evidence.SAMPLED_RELABELLINGS) <= p < 2e-3
    share, p = evidence.chain_index_share(exchangeable)
    assert share < 0.6 and p > 0.05
    # the same estimate on every call (a fixed seed)
    assert evidence.chain_index_share(exchangeable) == (share, p)


def test_the_sampled_p_agrees_with_the_exact_one(monkeypatch):
    values = np.random.default_rng(5).normal(size=(4, 3))  # 6 ** 4 = 1296 relabellings
    exact = evidence.chain_index_share(values)
    monkeypatch.setattr(evidence, "EXACT_RELABELLINGS", 100)
    sampled = evidence.chain_index_share(values)
    assert sampled[0] == pytest.approx(exact[0])
    assert sampled[1] == pytest.approx(exact[1], abs=0.02)  # sd of the estimate < 0.004
