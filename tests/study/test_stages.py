"""What the paper-scale runner collects: the case studies' tables and figures, named by their
data sets, each topic fit's score record, and one table and trace figure per diagnosed case."""
import pytest

from study.stages import collected_paths, diagnosed_cases

SETTINGS = {"prepare_topics": {"dataset": "enron"}, "prepare_network": {"dataset": "mail"},
            "diagnose": {"topic_methods": ["collapsed", "naive"],
                         "network_methods": ["collapsed"]},
            "privacy": {"levels": [3.0, 1.0]},
            "topics": {"methods": ["collapsed"], "replicates": [0, 1]},
            "vi_topics": {"methods": ["collapsed_cavi"], "replicates": [0]}}


def test_each_diagnosed_method_is_a_case_and_the_non_private_topic_fit_always_is():
    assert diagnosed_cases(SETTINGS) == [("topics", "collapsed"), ("topics", "naive"),
                                         ("topics", "nonprivate"), ("network", "collapsed")]
    assert diagnosed_cases({}) == [("topics", "nonprivate")]


def test_each_case_s_table_and_trace_figure_are_collected_under_its_data_set():
    tables, figures = collected_paths(SETTINGS)
    assert tables["results/diagnostics/topics_naive.csv"] == "diagnostics/topics_naive.csv"
    assert tables["results/diagnostics/network_collapsed.csv"] == \
        "diagnostics/network_collapsed.csv"
    assert {"figures/enron_trace_topics_collapsed.png", "figures/enron_trace_topics_naive.png",
            "figures/enron_trace_topics_nonprivate.png",
            "figures/mail_trace_network_collapsed.png"} <= set(figures)
    # one figure per case, none for a whole study
    assert "figures/enron_trace_topics.png" not in figures


def test_settings_without_data_sets_are_refused_naming_the_key():
    with pytest.raises(ValueError, match="dataset: NAME"):
        collected_paths({"prepare_topics": {}})


def test_each_topic_fit_s_score_record_is_collected_under_its_data_set():
    """A study run in pieces keeps each piece's scores: the record of every fit the settings
    name, and no other, and the reference topics."""
    tables, _ = collected_paths(SETTINGS)
    records = {source: target for source, target in tables.items() if source.endswith(".json")
               and source.startswith("results/eval/")}
    fits = ["collapsed_eps3.0_rep0", "collapsed_eps3.0_rep1", "collapsed_eps1.0_rep0",
            "collapsed_eps1.0_rep1", "collapsed_cavi_eps3.0_rep0", "collapsed_cavi_eps1.0_rep0",
            "nonprivate"]
    assert records == {f"results/eval/enron_topics/{fit}.json": f"eval/enron_topics/{fit}.json"
                       for fit in fits}
    # and the reference topics they were matched to, which a later piece's scoring restores
    assert tables["results/eval/enron_topics/nonprivate_topics.npy"] == (
        "eval/enron_topics/nonprivate_topics.npy")
