import numpy as np
import pandas as pd
import pytest

from data_prep.emails import collect_emails
from data_prep.network import build_network, email_edges, heldout_mask

T, F = True, False

ROWS = [  # sender, recipient, type
    (0, 1, "to"), (0, 1, "to"), (0, 2, "cc"), (0, 2, "bcc"), (1, 0, "to"), (1, 1, "to"),
    (2, 0, "cc"), (2, 0, "bcc"), (3, 0, "to"), (0, 4, "to"), (1, 4, "to"), (2, 4, "TO "),
]
# counting to+cc without self-loops: sent 0:4 1:2 2:2 3:1 4:0, received 0:3 1:2 2:1 3:0 4:3.
# With min_sent=1, min_total=3: keep 0, 1, 2 (2 is exactly at the threshold); 3 sent+received
# only 1; 4 received 3 but sent nothing.


@pytest.fixture
def edges():
    return pd.DataFrame(ROWS, columns=["sender", "recipient", "type"])


def _build(edges, **settings):
    args = {"min_sent": 1, "min_total": 3, "heldout_top": 1}
    return build_network(edges, **{**args, **settings})


def test_exact_matrix(edges):
    result = _build(edges)
    assert result.actor_ids == ["0", "1", "2"]
    np.testing.assert_array_equal(result.counts, [[0, 2, 1], [1, 0, 0], [1, 0, 0]])
    assert [(a["id"], a["sent"], a["received"]) for a in result.actors] == [
        (0, 4, 3), (1, 2, 2), (2, 2, 1)]
    stats = result.summary["edges"]
    assert stats["rows_by_type"] == {"bcc": 2, "cc": 2, "to": 8}
    assert stats["bcc_mirrors_cc"] is True
    assert (stats["rows_counted"], stats["self_loop_rows"]) == (9, 1)
    assert result.summary["actors"] == 3 and result.summary["self_loop_emails"] == 0


def test_self_loops_kept_on_request(edges):
    result = _build(edges, self_loops="keep")
    np.testing.assert_array_equal(result.counts, [[0, 2, 1], [1, 1, 0], [1, 0, 0]])
    assert result.summary["self_loop_emails"] == 1


def test_bcc_rows_would_double_count_cc(edges):
    result = _build(edges, recipient_types=None)
    np.testing.assert_array_equal(result.counts, [[0, 2, 2], [1, 0, 0], [2, 0, 0]])
    altered = edges.copy()
    altered.loc[3, "recipient"] = 1
    assert _build(altered).summary["edges"]["bcc_mirrors_cc"] is False


def test_to_and_cc_are_treated_alike(edges):
    swapped = edges.assign(type=edges["type"].str.strip().str.lower().map(
        {"to": "cc", "cc": "to", "bcc": "bcc"}))
    a, b = _build(edges), _build(swapped)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert a.actor_ids == b.actor_ids


def test_actor_filter_thresholds(edges):
    assert _build(edges, min_total=4).actor_ids == ["0", "1"]
    assert _build(edges, min_sent=0, min_total=3).actor_ids == ["0", "1", "2", "4"]
    assert _build(edges, min_sent=3).actor_ids == ["0"]


def test_heldout_rules_exact():
    counts = np.array([[0, 5, 0, 0], [0, 0, 0, 0], [1, 3, 0, 0], [0, 0, 2, 0]])
    # row sums 5, 0, 4, 2 -> top sender 0 (then 2); column sums 1, 8, 2, 0 -> recipient 1
    expected = {
        "rows_cols": [[T, T, T, T], [F, T, F, F], [F, T, F, F], [F, T, F, F]],
        "any": [[T, T, T, T], [T, T, T, T], [T, T, F, F], [T, T, F, F]],
        "block": [[F, T, F, F], [F, F, F, F], [F, F, F, F], [F, F, F, F]],
        "none": [[F] * 4] * 4,
    }
    for rule, mask in expected.items():
        got, tops = heldout_mask(counts, top=1, rule=rule)
        np.testing.assert_array_equal(got, mask, err_msg=rule)
        assert list(tops["top_senders"]) == [0] and list(tops["top_recipients"]) == [1]
    two, tops = heldout_mask(counts, top=2, rule="block")
    assert list(tops["top_senders"]) == [0, 2] and list(tops["top_recipients"]) == [1, 2]
    assert two.sum() == 4 and two[2, 2] and two[0, 1]
    # ties go to the lower index
    _, tops = heldout_mask(np.ones((3, 3), dtype=int), top=1, rule="rows_cols")
    assert list(tops["top_senders"]) == [0] == list(tops["top_recipients"])


def test_heldout_summary_and_actor_ranks(edges):
    result = _build(edges, heldout_rule="rows_cols")
    # top sender 0 (3 sent), top recipient 0 (column sums 2, 2, 1: tie broken to 0)
    np.testing.assert_array_equal(result.heldout, [[T, T, T], [T, F, F], [T, F, F]])
    held = result.summary["heldout"]
    assert held["rule"] == "rows_cols" and held["entries"] == pytest.approx(5 / 9, abs=1e-6)
    assert held["counts"] == 1.0 and held["actors_fully_heldout"] == 1
    assert set(held["by_rule"]) == {"rows_cols", "any", "block", "none"}
    assert result.actors[0]["top_sender_rank"] == 1 and result.actors[1]["top_sender_rank"] is None


def test_string_actors_and_node_labels():
    edges = pd.DataFrame({"sender": ["b@x", "a@x", "a@x"], "recipient": ["a@x", "b@x", "c@x"]})
    result = build_network(edges, min_sent=1, min_total=2, heldout_top=0)
    assert result.actor_ids == ["a@x", "b@x"]
    np.testing.assert_array_equal(result.counts, [[0, 1], [1, 0]])
    nodes = pd.DataFrame({"email": ["alpha", "beta"], "name": ["A", None]},
                         index=pd.Index([0, 1], name="id"))
    numeric = pd.DataFrame({"sender": [0, 1], "recipient": [1, 0]})
    labelled = build_network(numeric, min_total=2, heldout_top=0, nodes=nodes,
                             label_column="email")
    assert labelled.actor_ids == ["alpha", "beta"]
    assert labelled.actors[1]["name"] is None and labelled.actors[0]["email"] == "alpha"
    twins = nodes.assign(email=["same", "same"])
    with pytest.raises(ValueError, match="not unique"):
        build_network(numeric, min_total=2, heldout_top=0, nodes=twins, label_column="email")


def test_node_ids_match_edge_ids_as_text():
    # integer edge ids against a node table read as text (one id was not a number): the
    # lookup found no actor, and every actor lost its details silently
    numeric = pd.DataFrame({"sender": [1, 2], "recipient": [2, 1]})
    nodes = pd.DataFrame({"email": ["a@x", "b@x", "q@x"]},
                         index=pd.Index(["1", "2", "q"], name="id"))
    result = build_network(numeric, min_total=2, heldout_top=0, nodes=nodes,
                           label_column="email")
    assert result.actor_ids == ["a@x", "b@x"]
    assert [a["id"] for a in result.actors] == [1, 2]  # the edge list's ids, as before
    # ... and the other way round: text edge ids against an integer index
    text = pd.DataFrame({"sender": ["1", "2"], "recipient": ["2", "1"]})
    plain = build_network(text, min_total=2, heldout_top=0,
                          nodes=nodes.iloc[:2].set_axis(pd.Index([1, 2], name="id")))
    assert [a["email"] for a in plain.actors] == ["a@x", "b@x"]
    twins = nodes.set_axis(pd.Index(["1", " 1", "2"], name="id"))
    with pytest.raises(ValueError, match=r"the node table: the ids of its id column 'id' "
                                         r"repeat once compared as text: \['1'\]"):
        build_network(numeric, min_total=2, heldout_top=0, nodes=twins)


def test_kept_actors_missing_from_the_node_table_are_refused():
    # actor 3 had no row: its label became the text "None"
    edges = pd.DataFrame({"sender": [1, 2, 1, 2, 1, 3], "recipient": [2, 1, 2, 1, 3, 1]})
    nodes = pd.DataFrame({"email": ["a@x", "b@x"]}, index=pd.Index([1, 2], name="id"))
    for label_column in ("email", None):
        with pytest.raises(ValueError, match=r"the node table has no row for 1 of the 3 actors "
                                             r"kept: ids \['3'\] .*id column 'id'"):
            build_network(edges, min_total=0, heldout_top=1, nodes=nodes,
                          label_column=label_column)
    # only kept actors need a row; many missing ones are listed in part
    assert build_network(edges, min_total=3, heldout_top=1, nodes=nodes).actor_ids == ["1", "2"]
    many = pd.DataFrame({"sender": list(range(10)), "recipient": [9] + list(range(9))})
    with pytest.raises(ValueError, match=r"no row for 8 of the 10 actors kept: ids "
                                         r"\['0', '3', '4', '5', '6'\] and 3 more"):
        build_network(many, min_total=0, heldout_top=1, nodes=nodes)


def test_edge_weights_adding_up_past_the_count_limit_are_refused():
    # five weights of 4e18 summed to 1553255926290448384 in int64
    huge = pd.DataFrame({"sender": [1] * 5, "recipient": [2] * 5, "weight": [4 * 10**18] * 5})
    with pytest.raises(ValueError, match=r"the edge list: the edge weights add up to 2e\+19, "
                                         r"more than the 1e\+15 counts lpp fits"):
        build_network(huge, min_sent=0, min_total=0, heldout_top=1)
    # just past the limit (exact: float64 could not tell 10**15 + 1 from 10**15 in a sum of
    # many rows), rows dropped by the self-loop rule included
    over = pd.DataFrame({"sender": [1, 2, 1], "recipient": [2, 1, 1],
                         "weight": [10**15 - 5, 5, 1]})
    with pytest.raises(ValueError, match="add up to 1e\\+15, more than"):
        build_network(over, min_sent=0, min_total=0, heldout_top=1)
    at = build_network(over.iloc[:2], min_sent=0, min_total=0, heldout_top=1)
    assert at.counts.sum() == 10**15 and at.summary["edges"]["weight_total"] == 10**15


def test_edges_from_parsed_emails(message):
    emails, _ = collect_emails([
        ("1", message("x", sender="A@x.com", to="b@x.com, c@x.com", cc="d@x.com",
                      bcc="d@x.com")),
        ("2", "To: b@x.com\nSubject: no sender\n\nbody"),
    ])
    rows = email_edges(emails)
    assert rows.values.tolist() == [["a@x.com", "b@x.com", "to"], ["a@x.com", "c@x.com", "to"],
                                    ["a@x.com", "d@x.com", "cc"], ["a@x.com", "d@x.com", "bcc"]]


@pytest.mark.parametrize("settings, error, match", [
    ({"heldout_top": 4}, ValueError, "exceeds the number of actors kept .3.: lower "
                                     "prepare_network.heldout_top, or .*min_total"),
    ({"heldout_rule": "rows"}, ValueError, "heldout_rule"),
    ({"self_loops": "zero"}, ValueError, "self_loops"),
    ({"min_total": 1000}, ValueError, "no actor"),
    ({"min_sent": -1}, ValueError, "min_sent"),
    ({"min_total": 2.5}, TypeError, "min_total"),
    ({"recipient_types": []}, ValueError, "recipient_types is empty"),
    ({"recipient_types": ["fax"]}, ValueError, "no edge is left"),
])
def test_bad_settings(edges, settings, error, match):
    with pytest.raises(error, match=match):
        _build(edges, **settings)


def test_bad_edge_tables(edges):
    with pytest.raises(ValueError, match="lacks column"):
        build_network(edges.rename(columns={"recipient": "to"}))
    with pytest.raises(ValueError, match="empty"):
        build_network(edges.iloc[:0])
    with pytest.raises(ValueError, match="without a sender"):
        build_network(edges.assign(sender=[None] + [1] * (len(edges) - 1)))
