"""The privacy ledger: what each private folder releases, and what a reader of several has
spent under basic composition."""
import hashlib
import json
import warnings

import numpy as np
import pytest

from lpp.formats.ledger import SeveralCopiesWarning, composed_epsilon, main, read_release
from lpp.formats.privatized import (dataset_id, load_privatized, noise_seed, privatize_counts)
from lpp.formats.privatized_blocks import privatize_blocks

ROWS = [f"d{i}" for i in range(60)]
COLS = [f"w{j}" for j in range(40)]


def _counts(seed=0):
    return np.random.default_rng(seed).poisson(1.5, size=(60, 40))


def _copy(tmp_path, name, level, rep, counts=None, *, N=1.0, base=11, **kw):
    counts = _counts() if counts is None else counts
    return privatize_counts(counts, tmp_path / name, epsilon=level * N, N=N, source="toy",
                            simulation=True, seed=noise_seed(base, rep, level, dataset_id(ROWS, COLS)),
                            copy=rep, row_ids=ROWS,
                            column_ids=COLS, **kw)


def test_a_reader_of_three_copies_has_spent_their_sum(tmp_path):
    """The hostile analyst's median: three copies at epsilon/N = 3 give back the true count in
    almost every entry, and the ledger charges that reader epsilon/N = 9, with a warning."""
    y = _counts()
    copies = [_copy(tmp_path, f"eps3_rep{r}", 3.0, r) for r in range(3)]
    median = np.median(np.stack([c.y_tilde for c in copies]), axis=0)
    assert (median == y).mean() > 0.95  # what the reader of the three copies learns
    with pytest.warns(SeveralCopiesWarning, match=r"3 privatized copies .* epsilon/N = 9"):
        ledger = composed_epsilon([tmp_path / f"eps3_rep{r}" for r in range(3)], reader="median")
    (budget,) = ledger.datasets.values()
    assert budget.copies == 3 and [r.copy for r in budget.releases] == [0, 1, 2]
    assert budget.epsilon_over_n == pytest.approx(9.0) and budget.epsilon == pytest.approx(9.0)
    assert ledger.total_epsilon == pytest.approx(9.0) and ledger.several_copies == [budget]


def test_one_copy_costs_its_own_level_and_raises_no_warning(tmp_path):
    _copy(tmp_path, "one", 2.0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeveralCopiesWarning)
        ledger = composed_epsilon([tmp_path / "one"])
    assert ledger.total_epsilon == pytest.approx(2.0) and ledger.several_copies == []


def test_levels_compose_and_the_same_release_read_twice_counts_once(tmp_path):
    """Copies at every level of one data set add up (3 + 2 + 1); a folder that holds the same
    noised matrix as another (the same copy under another held-out mask, as the pipeline's
    rows_cols network) is the same release."""
    for level in (3.0, 2.0, 1.0):
        _copy(tmp_path, f"eps{level}", level, 0)
    _copy(tmp_path, "eps1.0_masked", 1.0, 0, heldout=_counts() > 3)
    folders = [tmp_path / n for n in ("eps3.0", "eps2.0", "eps1.0", "eps1.0_masked")]
    with pytest.warns(SeveralCopiesWarning):
        ledger = composed_epsilon(folders)
    (budget,) = ledger.datasets.values()
    assert budget.copies == 3 and len(budget.paths) == 4
    assert budget.epsilon == pytest.approx(6.0)


def test_per_entry_levels_with_different_n_compose_per_unit_of_change(tmp_path):
    """A copy at epsilon = 2, N = 2 and one at epsilon = 1, N = 1 both cost 1 per unit of
    change: a change of one count costs 2 in all; no single epsilon names that, as the Ns
    differ."""
    _copy(tmp_path, "n2", 1.0, 0, N=2.0)
    _copy(tmp_path, "n1", 1.0, 1, N=1.0)
    with pytest.warns(SeveralCopiesWarning, match="N differ"):
        ledger = composed_epsilon([tmp_path / "n2", tmp_path / "n1"])
    (budget,) = ledger.datasets.values()
    assert budget.epsilon_over_n == pytest.approx(2.0)
    assert budget.N is None and budget.epsilon is None and ledger.total_epsilon is None


def test_other_counts_are_another_data_set_and_the_total_bounds_both(tmp_path):
    _copy(tmp_path, "a", 1.0, 0)
    privatize_counts(_counts()[:, :10], tmp_path / "b", epsilon=2.0, N=1.0, source="other",
                     row_ids=[f"actor{i}" for i in range(60)], column_ids=COLS[:10],
                     simulation=True, seed=[1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeveralCopiesWarning)
        ledger = composed_epsilon([tmp_path / "a", tmp_path / "b"])
    assert len(ledger.datasets) == 2 and ledger.several_copies == []
    assert ledger.total_epsilon == pytest.approx(3.0)


def test_the_block_format_has_the_same_ledger(tmp_path):
    y = _counts()
    privatize_blocks([y[:30], y[30:]], tmp_path / "blocks", n_cols=40, epsilon=1.0, N=1.0,
                     source="toy", column_ids=COLS, row_ids=ROWS, simulation=True, seed=4, copy=1)
    _copy(tmp_path, "single", 1.0, 0)
    release = read_release(tmp_path / "blocks")
    assert release.copy == 1 and release.dataset_id == dataset_id(ROWS, COLS)
    with pytest.warns(SeveralCopiesWarning):
        ledger = composed_epsilon([tmp_path / "blocks", tmp_path / "single"])
    assert ledger.total_epsilon == pytest.approx(2.0)


def test_choices_from_the_true_counts_are_listed_and_private_choices_charged_once(tmp_path):
    chosen = [{"what": "columns", "rule": "the 40 most frequent words", "from_true_counts": True,
               "epsilon": None},
              {"what": "rows", "rule": "documents above a noisy length threshold",
               "from_true_counts": True, "epsilon": 0.5}]
    for rep in range(2):
        _copy(tmp_path, f"c{rep}", 1.0, rep, selection=chosen)
    with pytest.warns(SeveralCopiesWarning):
        ledger = composed_epsilon([tmp_path / "c0", tmp_path / "c1"])
    (budget,) = ledger.datasets.values()
    assert budget.unprotected == (chosen[0],)
    assert budget.selection_epsilon == pytest.approx(0.5)
    assert budget.epsilon == pytest.approx(2.5)  # two copies, and the private choice once
    assert "not covered by epsilon: columns chosen from the true counts" in ledger.table()


def test_the_dataset_id_names_the_ids_never_the_counts(tmp_path):
    """A digest of the true counts would let an analyst confirm a guess of them exactly: the
    identifier is a digest of the (already released) ids, the same for any counts over them
    and in any order of the ids."""
    a, b = _copy(tmp_path, "a", 1.0, 0), _copy(tmp_path, "b", 1.0, 0, counts=_counts(9))
    assert a.meta["ledger"]["dataset_id"] == b.meta["ledger"]["dataset_id"]
    assert dataset_id(ROWS[::-1], COLS[::-1]) == dataset_id(ROWS, COLS)
    y = _counts()
    digests = {hashlib.sha256(np.ascontiguousarray(y, dtype=dt).tobytes()).hexdigest()
               for dt in (np.int64, np.int32, np.int16)}
    text = json.dumps(a.meta)
    assert not any(d in text for d in digests)


def test_the_command_line_prints_the_budget_and_the_warning(tmp_path, capsys):
    for rep in range(2):
        _copy(tmp_path, f"c{rep}", 1.5, rep)
    assert main([str(tmp_path / "c0"), str(tmp_path / "c1"), "--reader", "report"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1].split() == ["total", "3", "3"]
    assert "report reads 2 privatized copies" in err
    assert main(["--json", str(tmp_path / "c0")]) == 0
    assert json.loads(capsys.readouterr().out)["total_epsilon"] == 1.5
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "error:" in capsys.readouterr().err


def test_a_forged_ledger_is_refused(tmp_path, forge):
    _copy(tmp_path, "p", 1.0, 0)
    folder = tmp_path / "p"
    meta = json.loads((folder / "meta.json").read_text())
    for ledger, match in (({**meta["ledger"], "dataset_id": "ids-sha256:" + "0" * 64},
                           "not the digest of the folder's ids"),
                          ({**meta["ledger"], "copy": -1}, "copy"),
                          ({**meta["ledger"], "release_sha256": "f" * 64}, "release_sha256"),
                          ({"dataset_id": meta["ledger"]["dataset_id"]}, "exactly")):
        forge(folder, data_file="y_tilde.npz", meta_file="meta.json", sha_key="data_sha256",
              meta={"ledger": ledger})
        with pytest.raises(ValueError, match=match):
            load_privatized(folder)
    with pytest.raises(ValueError, match="no private folder"):
        composed_epsilon([])


def test_the_table_flags_a_release_noised_from_a_seed(tmp_path):
    """Whoever holds a seeded copy's seed regenerates its noise and subtracts it: the table
    says so for such folders, and not for one noised from system randomness."""
    _copy(tmp_path, "seeded", 1.0, 0)
    privatize_counts(_counts(), tmp_path / "system", epsilon=1.0, N=1.0, source="toy",
                     seed=None, copy=1, row_ids=ROWS, column_ids=COLS)
    table = composed_epsilon([tmp_path / "seeded"]).table()
    assert f"noise reproducible by whoever holds the seed: a simulation, not a private " \
           f"release: {tmp_path / 'seeded'}" in table
    assert "a simulation" not in composed_epsilon([tmp_path / "system"]).table()


@pytest.mark.parametrize("change", ["a row dropped", "ids renamed"])
def test_a_copy_with_a_row_dropped_or_ids_renamed_is_still_a_copy(tmp_path, change):
    """A second copy of the same people escapes a match by the digest of all ids when one row
    is dropped or some ids are renamed; matched by the ids they share, it is still charged,
    and the warning says what it matched."""
    y = _counts()
    _copy(tmp_path, "a", 1.0, 0)
    if change == "a row dropped":
        rows, counts = ROWS[1:], y[1:]
    else:
        rows, counts = [f"{r}_renamed" if k % 2 else r for k, r in enumerate(ROWS)], y
    privatize_counts(counts, tmp_path / "b", epsilon=2.0, N=1.0, source="toy", row_ids=rows,
                     column_ids=COLS, copy=1)
    shared = 59 if change == "a row dropped" else 30
    with pytest.warns(SeveralCopiesWarning, match=rf"2 privatized copies .*matched by their "
                                                   rf"ids: .*shares {shared} of its .* rows and "
                                                   rf"40 of its 40 columns.*epsilon/N = 3"):
        ledger = composed_epsilon([tmp_path / "a", tmp_path / "b"])
    (budget,) = ledger.datasets.values()
    assert budget.copies == 2 and len(budget.dataset_ids) == 2
    assert ledger.total_epsilon == pytest.approx(3.0)
    assert "matched by their ids" in ledger.table()


def test_a_killed_writes_leftover_is_never_counted(tmp_path):
    """A folder under a temporary name (a write killed before its swap) is refused by the
    ledger like any reader: its copy of the same counts neither loads nor counts."""
    import shutil
    from lpp.formats.files import FormatError
    _copy(tmp_path, "a", 1.0, 0)
    shutil.copytree(tmp_path / "a", tmp_path / ".a.k1ll3d.tmp")
    with pytest.raises(FormatError, match="temporary name"):
        composed_epsilon([tmp_path / "a", tmp_path / ".a.k1ll3d.tmp"])
    with pytest.raises(FormatError, match="temporary name"):
        read_release(tmp_path / ".a.k1ll3d.tmp" / "meta.json")
