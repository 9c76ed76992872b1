"""study.topic_scores: each topic fit scored on its own, into a record; the records gathered
into the tables a report of the fits themselves makes, to the byte."""
import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from lpp.diagnostics import diagnostics_record
from lpp.formats.counts import load_counts, write_counts
from lpp.formats.fits import save_fit
from lpp.formats.privatized import canonical_counts
from lpp.inference import RunOptions, TopicModel, fit_nonprivate, fit_private
from lpp.mechanism import privatize
from lpp.vi import VIOptions, fit_variational
from study.figures import settings_caption
from study.reports import named_fits, score_topic_fits, write_table
from study.topic_scores import (
    _plain_rows,
    main,
    read_records,
    schedules,
    score_table,
    word_table,
)
from study.topic_words import topic_word_table

SETTINGS = {"privacy": {"levels": [2.0, 1.0]}, "topics": {"methods": ["collapsed", "naive"],
                                                          "replicates": [0]},
            "vi_topics": {"methods": ["collapsed_cavi"], "replicates": [0]}}
#: the fits of SETTINGS: ours of two chains, the naive method's of one (R-hat empty), a CAVI
FITS = ("collapsed_eps2.0_rep0", "collapsed_eps1.0_rep0", "naive_eps2.0_rep0",
        "naive_eps1.0_rep0", "collapsed_cavi_eps1.0_rep0", "collapsed_cavi_eps2.0_rep0")
RUN = RunOptions(n_iter=12, burn_in=4, thin=2, progress=False)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A prepared corpus in the pipeline's layout, its fits (two chains each, as the pipeline
    runs them: ours, naive, non-private) and each fit's record made by the command line."""
    root = tmp_path_factory.mktemp("topics")
    rng = np.random.default_rng(3)
    y = rng.poisson(rng.gamma(1.0, 1.0, (18, 2)) @ rng.gamma(1.0, 2.0, (2, 9)))
    write_counts(root / "prepared", y, row_ids=[f"d{i}" for i in range(18)],
                 column_ids=[f"w{j}" for j in range(9)], kind="topics", params={}, inputs={},
                 summary={})
    truth = canonical_counts(load_counts(root / "prepared"))
    y_true = truth.counts.toarray()
    fits = root / "fits"
    nonprivate = fit_nonprivate(y_true, TopicModel(2), rng=5, chains=2, run=RUN)
    save_fit(nonprivate, fits / "nonprivate", data="data/prepared/topics",
             diagnostics=diagnostics_record(nonprivate))
    for level in (2.0, 1.0):
        alpha = np.exp(-level)
        y_tilde = privatize(y_true, alpha, rng=rng)
        data = f"/anywhere/topics/eps{level}_rep0"
        ours = fit_private(y_tilde, alpha, TopicModel(2), rng=1, chains=2, run=RUN)
        save_fit(ours, fits / f"collapsed_eps{level}_rep0", data=data,
                 extra={"epsilon_over_n": level}, diagnostics=diagnostics_record(ours))
        naive = fit_private(y_tilde, alpha, TopicModel(2), rng=1, method="naive", run=RUN)
        save_fit(naive, fits / f"naive_eps{level}_rep0", data=data,
                 extra={"epsilon_over_n": level})
        cavi = fit_variational(y_tilde, alpha, TopicModel(2), rng=2,
                               run=VIOptions(max_iter=5 + int(level), em_sweeps=5))
        cavi.save(fits / f"collapsed_cavi_eps{level}_rep0", data=data, method="collapsed_cavi",
                  extra={"epsilon_over_n": level})
    scores = root / "scores"
    reference = scores / "nonprivate_topics.npy"
    assert main([str(fits / "nonprivate"), "--counts", str(root / "prepared"), "--n-top", "3",
                 "--reference-out", str(reference), "--out", str(scores / "nonprivate.json")]) == 0
    for name in FITS:
        assert main([str(fits / name), "--counts", str(root / "prepared"), "--n-top", "3",
                     "--reference", str(reference), "--out", str(scores / f"{name}.json")]) == 0
    return root, truth


def test_the_records_give_the_tables_of_the_fits_themselves_to_the_byte(study, tmp_path):
    root, truth = study
    names = named_fits(SETTINGS, "topics")
    records, left_out = read_records(root / "scores", names, n_top=3)
    assert [r["fit"] for r in records] == list(names) and left_out == []
    gathered = score_table(records, truth.counts)
    direct = score_topic_fits(root / "fits", truth.counts, n_top=3, names=names)
    pd.testing.assert_frame_equal(gathered, direct)
    assert write_table(gathered, tmp_path / "a.csv").read_bytes() \
        == write_table(direct, tmp_path / "b.csv").read_bytes()
    # two chains with their R-hat, one chain with none, the CAVI, the references
    fits = gathered[~gathered.method.isin(["zeros", "oracle"])]
    assert fits[fits.method == "collapsed"].rhat.notna().all()
    assert fits[fits.method == "naive"].rhat.isna().all()
    assert set(fits.method) == {"collapsed", "naive", "collapsed_cavi", "nonprivate"}
    assert gathered.epsilon_over_n.isna().sum() == 2 + 2  # the non-private chains, references
    words = word_table(records)
    pd.testing.assert_frame_equal(words, topic_word_table(root / "fits", truth.column_ids,
                                                          n_words=3, names=names))
    assert words.fit.iloc[0] == "nonprivate" and (words.distance[words.fit == "nonprivate"] == 0).all()
    # the captions read the fits' schedules from the records as from the fits
    caption = settings_caption(profile="p", fits=schedules(records))
    assert caption == settings_caption(profile="p", fits_dir=root / "fits", fit_names=names)
    assert caption.startswith("profile p · sweeps 12 (burn-in 4, thin 2) · VI iterations ")
    assert caption.endswith(" · copies 1")


def test_an_infinite_score_survives_the_record_as_strict_json(study):
    """A log-likelihood of -inf (a count a fit gives no chance) is a string in the record and
    an infinity in the table again, as the fits' own table has it."""
    _, truth = study
    rows = [{"fit": "f", "method": "naive", "epsilon_over_n": 1.0, "loglik": float("-inf"),
             "mae": float("inf"), "chain": 0, "rhat": float("nan")}]
    plain = _plain_rows(rows)
    assert plain[0]["loglik"] == "-inf" and plain[0]["mae"] == "inf" and plain[0]["rhat"] is None
    record = {"fit": "f", "scores": json.loads(json.dumps(plain, allow_nan=False))}
    table = score_table([record], truth.counts)
    assert table.loglik.iloc[0] == -np.inf and table.mae.iloc[0] == np.inf
    assert np.isnan(table.rhat.iloc[0]) and table.loglik.dtype == float


def test_a_record_is_plain_json_and_repeats_to_the_byte(study, tmp_path):
    root, _ = study
    path = root / "scores" / "naive_eps1.0_rep0.json"
    text = path.read_text()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in a record"))
    record = json.loads(text)
    assert list(record) == ["fit", "n_top", "reference_sha256", "scores", "words", "schedule"]
    reference = (root / "scores" / "nonprivate_topics.npy").read_bytes()
    assert record["n_top"] == 3
    assert record["reference_sha256"] == hashlib.sha256(reference).hexdigest()
    # where the work tree lay is not part of it, nor the run time
    assert record["schedule"]["data"] == "eps1.0_rep0" and "seconds" not in text
    again = tmp_path / "again.json"
    main([str(root / "fits" / "naive_eps1.0_rep0"), "--counts", str(root / "prepared"),
          "--n-top", "3", "--reference", str(root / "scores" / "nonprivate_topics.npy"),
          "--out", str(again)])
    assert again.read_bytes() == path.read_bytes()
    # the non-private record: no privacy level (null), read back as NaN
    nonprivate = json.loads((root / "scores" / "nonprivate.json").read_text())
    assert {row["epsilon_over_n"] for row in nonprivate["scores"]} == {None}


def test_a_missing_or_broken_record_is_an_error_naming_it(study, tmp_path):
    root, _ = study
    names = named_fits({**SETTINGS, "privacy": {"levels": [3.0, 2.0, 1.0]}}, "topics")
    with pytest.raises(FileNotFoundError, match=r"collapsed_cavi_eps3.0_rep0.json \(made by "
                                                r"stage score_vi_topics"):
        read_records(root / "scores", names)
    for path in (root / "scores").glob("*.json"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "naive_eps1.0_rep0.json").write_text("{not json")
    with pytest.raises(ValueError, match="naive_eps1.0_rep0.json: not a score record"):
        read_records(tmp_path, named_fits(SETTINGS, "topics"))
    (tmp_path / "naive_eps1.0_rep0.json").write_text(json.dumps({"fit": "other"}))
    with pytest.raises(ValueError, match="not the score record of fit 'naive_eps1.0_rep0'"):
        read_records(tmp_path, named_fits(SETTINGS, "topics"))
    good = json.loads((root / "scores" / "naive_eps1.0_rep0.json").read_text())
    (tmp_path / "naive_eps1.0_rep0.json").write_text(json.dumps({**good, "schedule": {}}))
    with pytest.raises(ValueError, match="naive_eps1.0_rep0.json: a score record's scores"):
        read_records(tmp_path, named_fits(SETTINGS, "topics"))
    # scored with another n_top, or matched to another reference: refused, naming the file
    (tmp_path / "naive_eps1.0_rep0.json").write_text(json.dumps({**good, "n_top": 5}))
    with pytest.raises(ValueError, match="naive_eps1.0_rep0.json: scored with n_top 5"):
        read_records(tmp_path, named_fits(SETTINGS, "topics"))
    with pytest.raises(ValueError, match="with n_top 3, the report's is 10"):
        read_records(root / "scores", named_fits(SETTINGS, "topics"), n_top=10)
    (tmp_path / "naive_eps1.0_rep0.json").write_text(json.dumps({**good,
                                                                 "reference_sha256": "0" * 64}))
    with pytest.raises(ValueError, match="against reference topics 000000000000"):
        read_records(tmp_path, named_fits(SETTINGS, "topics"))


def test_a_record_the_settings_no_longer_name_is_left_out_and_listed(study):
    root, truth = study
    only_ours = {**SETTINGS, "privacy": {"levels": [1.0]},
                 "topics": {"methods": ["collapsed"], "replicates": [0]},
                 "vi_topics": {"methods": [], "replicates": [0]}}
    records, left_out = read_records(root / "scores", named_fits(only_ours, "topics"))
    assert [r["fit"] for r in records] == ["collapsed_eps1.0_rep0", "nonprivate"]
    assert left_out == ["collapsed_cavi_eps1.0_rep0", "collapsed_cavi_eps2.0_rep0",
                        "collapsed_eps2.0_rep0", "naive_eps1.0_rep0", "naive_eps2.0_rep0"]
    assert "naive" not in set(score_table(records, truth.counts).fit)
    with pytest.raises(FileNotFoundError, match="no scores of the fit 'nonprivate'"):
        word_table(records[:1])


def test_the_command_line_names_what_is_wrong(study, tmp_path, capsys):
    root, _ = study
    fit = str(root / "fits" / "naive_eps1.0_rep0")
    out = ["--out", str(tmp_path / "x.json")]
    with pytest.raises(SystemExit):
        main([fit, "--counts", str(root / "prepared"), *out])  # neither reference option
    with pytest.raises(SystemExit):
        main([fit, "--counts", str(root / "prepared"), "--reference", str(tmp_path / "no.npy"),
              *out])
    assert "no.npy: no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path / "nofit"), "--counts", str(root / "prepared"), "--reference-out",
              str(tmp_path / "r.npy"), *out])
    assert "nofit: no such fit folder" in capsys.readouterr().err
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.full((3, 9), 1 / 9))  # three topics; the fit has two
    with pytest.raises(ValueError, match=r"naive_eps1.0_rep0: 2 topics; the reference fit "):
        main([fit, "--counts", str(root / "prepared"), "--n-top", "3", "--reference", str(wrong),
              *out])
    np.save(wrong, np.full((2, 8), 1 / 8))  # eight words; the counts have nine
    with pytest.raises(ValueError, match=r"--reference .*wrong.npy: not K x V mean topics of "
                                         r"the 9 words"):
        main([fit, "--counts", str(root / "prepared"), "--n-top", "3", "--reference", str(wrong),
              *out])
    assert not (tmp_path / "x.json").exists()
