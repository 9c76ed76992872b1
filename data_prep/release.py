"""The data owners' release of a prepared matrix: what its private folders say about it.

A prepared matrix (:func:`data_prep.prepare_topics`, :func:`data_prep.prepare_network`) is
cut from a corpus by rules, and some rules read the true counts: the documents with enough
word tokens, the most frequent words, the actors above an activity threshold, the top senders
and recipients whose entries are held out. Which rows, columns and entries those rules kept is
itself a release, one that no privacy level covers. :func:`selection_record` states each
choice from the settings the prepared folder recorded (never from its statistics: no total, no
rank, no count of what was dropped); :func:`privatize_prepared` privatizes a prepared folder
with that record and its copy number in the private folder's ledger
(:mod:`lpp.formats.privatized`, docs/privacy.md).
"""
from __future__ import annotations

from pathlib import Path

from lpp.formats.counts import CountData, load_counts
from lpp.formats.privatized import PrivatizedData, dataset_id, noise_seed, privatize_counts

__all__ = ["selection_record", "privatize_prepared"]

_NOT_RECORDED = ("not recorded by the prepared data: read it as chosen from the true counts")


def _entry(what: str, rule: str, from_counts: bool) -> dict:
    return {"what": what, "rule": rule, "from_true_counts": bool(from_counts), "epsilon": None}


def _topic_selection(params: dict) -> list[dict]:
    entries = []
    if "n_docs" in params and "min_tokens" in params:
        n_docs, min_tokens = params["n_docs"], params["min_tokens"]
        eligible = (f"the documents with at least {min_tokens} word tokens (counted before the "
                    "vocabulary)" if min_tokens else "every document")
        rule = (eligible[0].upper() + eligible[1:] if n_docs is None else
                f"{n_docs} documents sampled uniformly at random (the owners' sample seed, not "
                f"recorded) among {eligible}")
        entries.append(_entry("rows", rule, min_tokens > 0))
    else:
        entries.append(_entry("rows", _NOT_RECORDED, True))
    if params.get("public_vocab"):
        entries.append(_entry("columns", f"a public vocabulary fixed before the counts were "
                                         f"read ({Path(params['public_vocab']).name}), in "
                                         "alphabetical order", False))
    elif "vocab_size" in params and "max_df" in params:
        size, max_df = params["vocab_size"], params["max_df"]
        below = f"with document frequency below {max_df} in the sampled documents"
        rule = (f"every word type {below}" if size is None else
                f"the {size} word types with the most tokens in the sampled documents, among "
                f"those {below}")
        entries.append(_entry("columns", rule, True))
    else:
        entries.append(_entry("columns", _NOT_RECORDED, True))
    return entries


_HELDOUT_RULES = {
    "block": "the entries from the {top} top senders to the {top} top recipients",
    "rows_cols": "every entry of the {top} top senders' rows and of the {top} top recipients' "
                 "columns",
    "any": "every entry of an actor among the {top} top senders or the {top} top recipients",
}


def _network_selection(params: dict) -> list[dict]:
    entries = []
    if "min_sent" in params and "min_total" in params:
        min_sent, min_total = params["min_sent"], params["min_total"]
        undirected = params.get("undirected", False)
        loops = "self-loops dropped" if params.get("self_loops") == "drop" else "self-loops kept"
        activity = (f"with at least {min_sent} and at least {min_total} emails in all"
                    if undirected else f"who sent at least {min_sent} emails and sent plus "
                                       f"received at least {min_total}")
        rule = f"the actors {activity} in the whole edge list ({loops}); rows and columns alike"
        from_counts = min_sent > 0 or min_total > 0
    else:
        rule, from_counts = _NOT_RECORDED, True
    entries += [_entry("rows", rule, from_counts), _entry("columns", rule, from_counts)]
    rule_name, top = params.get("heldout_rule"), params.get("heldout_top")
    if rule_name == "none" or top == 0:
        entries.append(_entry("heldout", "no entry held out", False))
    elif rule_name in _HELDOUT_RULES and top is not None:
        entries.append(_entry(
            "heldout", _HELDOUT_RULES[rule_name].format(top=top) + " (top: the largest true row "
            "or column totals, ties to the lower id; held-out rule " + rule_name + ")", True))
    else:
        entries.append(_entry("heldout", _NOT_RECORDED, True))
    return entries


def selection_record(meta: dict) -> list[dict]:
    """How the rows, the columns and the held-out entries of a prepared matrix were chosen.

    Parameters
    ----------
    meta : dict
        A prepared folder's ``meta.json`` (:attr:`lpp.formats.counts.CountData.meta`): its
        ``kind`` and ``params`` are read, nothing else.

    Returns
    -------
    list of dict
        Entries ``{"what", "rule", "from_true_counts", "epsilon"}`` as a private folder's
        ``selection`` holds them (:func:`lpp.formats.privatized.check_selection`): ``rows``
        and ``columns``, and for a network ``heldout``. ``epsilon`` is None: none of these
        choices is made by a privacy mechanism. A rule the metadata does not record is stated
        as such and counted as chosen from the true counts.
    """
    params = meta.get("params") or {}
    kind = meta.get("kind")
    if kind == "topics":
        return _topic_selection(params)
    if kind == "network":
        return _network_selection(params)
    return [_entry("rows", _NOT_RECORDED, True), _entry("columns", _NOT_RECORDED, True)]


def privatize_prepared(counts_dir, out_dir, *, epsilon_over_n: float, N: float = 1.0,
                       noise_seed_base="system", simulation: bool = False, replicate: int = 0,
                       exact: bool = False) -> tuple[CountData, PrivatizedData]:
    """Privatize the prepared folder ``counts_dir`` into ``out_dir``, as the pipeline does.

    The noise stream is :func:`lpp.formats.privatized.noise_seed` of ``noise_seed_base``
    (``"system"``: the operating system's randomness, recorded nowhere), ``replicate``, the
    level and the data set (the digest of its row and column ids), so that data sets noised
    under one base seed are independent. A base seed is a secret key of the owners' (too large
    to guess: :func:`lpp.formats.privatized.check_secret_key`), or any seed of a simulation
    study with ``simulation=True``, which the folder then states; the private folder records ``replicate`` as its ledger's ``copy`` and
    :func:`selection_record` of the prepared metadata as its ``selection``, and its rows and
    columns are in canonical order (:func:`lpp.formats.privatized.privatize_counts`).

    Returns
    -------
    (CountData, PrivatizedData)
        The prepared counts as read (in their own order: map them to the private folder's with
        :func:`lpp.formats.privatized.canonical_counts`) and the private folder as written.
    """
    data = load_counts(counts_dir)
    private = privatize_counts(
        data.counts, out_dir, epsilon=epsilon_over_n * N, N=N,
        seed=noise_seed(noise_seed_base, replicate, epsilon_over_n,
                        dataset_id(data.row_ids, data.column_ids)), source=str(counts_dir),
        row_ids=data.row_ids, column_ids=data.column_ids, heldout=data.arrays.get("heldout"),
        exact=exact, simulation=simulation, copy=replicate,
        selection=selection_record(data.meta))
    return data, private
