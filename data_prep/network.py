"""The actor-by-actor matrix of the community-detection case study.

Input: an edge list with one row per (email, recipient) -- columns ``sender``,
``recipient`` and optionally ``type`` (``to``/``cc``/``bcc``) and ``weight`` (whole
non-negative counts: a row with weight ``w`` adds ``w`` where a row without adds one). Order
of operations:

1. Keep the rows whose recipient type is in ``recipient_types`` (default ``to`` and ``cc``:
   in the CMU/Priebe data every ``bcc`` row repeats a ``cc`` row, so counting both would
   count those emails twice). ``to`` and ``cc`` recipients are treated alike: each adds one
   (the paper: "when an email included multiple recipients, we incremented the
   corresponding counts by one").
2. Self-loops (sender == recipient; 13% of the Priebe rows): ``"drop"`` (default) removes
   them before anything is counted -- an email to oneself is no interaction between
   actors, and the community model masks the diagonal anyway. ``"keep"`` counts them (in
   the actor filter and on the diagonal).
3. ``undirected=True``: every edge counts in both directions, ``y_ij = y_ji =`` the edges
   between i and j either way round (a self-loop, when kept, counts once, on the
   diagonal). An actor's edges are then both what it sent and what it received: the filter
   below compares ``min_sent`` and ``min_total`` with the actor's edge count (its row sum),
   not with twice that, and the held-out top senders and recipients are the same actors.
4. Actor filter, one pass over the whole edge list: keep an actor who sent at least
   ``min_sent`` emails and sent plus received at least ``min_total`` (each recipient row
   counts one). Rows and columns are the kept actors, in id order.
5. Held-out mask for link prediction ("we held out all elements of the count matrix that
   involved the top fifty senders or recipients"). Top senders/recipients are the
   ``heldout_top`` kept actors with the largest row/column sums of the kept matrix (ties go
   to the lower id). ``heldout_rule``:

   * ``"block"`` (the default, as in ``params.yaml``; why: ``data_prep/README.md``,
     *Held-out mask*): held out if i is a top sender and j is a top recipient;
   * ``"rows_cols"``: entry (i, j) is held out if i is a top sender or j is a top
     recipient -- each actor "involved" in the role it is top in;
   * ``"any"``: held out if i or j is a top sender or a top recipient (either role);
   * ``"none"``: nothing held out.

   The summary reports, for every rule, the fraction of entries, of emails and of non-zero
   entries held out, and how many actors lose every entry of their row and column.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lpp.validation import MAX_TOTAL_COUNT, check_int
from data_prep.summary import heldout_fractions, network_summary

HELDOUT_RULES = ("rows_cols", "any", "block", "none")
SELF_LOOP_RULES = ("drop", "keep")
EDGE_COLUMNS = ("sender", "recipient")


@dataclass(frozen=True)
class NetworkCounts:
    """An actor-by-actor count matrix with its held-out mask (:func:`build_network`).

    Attributes
    ----------
    counts : numpy.ndarray
        int64, actors x actors: ``counts[i, j]`` is the number of emails (or the summed
        weights) from actor ``i`` to actor ``j``; symmetric for an undirected network.
    actor_ids : list of str
        The row (and column) labels: the node table's ``label_column``, else the actor ids.
    actors : list of dict
        One record per kept actor, in row order: ``id``, the node table's columns, ``sent``
        and ``received`` over the whole edge list, ``sent_in_matrix``,
        ``received_in_matrix``, and ``top_sender_rank`` / ``top_recipient_rank`` (1 for the
        top actor; None outside the held-out top).
    heldout : numpy.ndarray
        bool, the shape of ``counts``: the entries held out for link prediction.
    summary : dict
        Statistics of the matrix, the edge list and every held-out rule (written as
        ``summary.json``).
    """

    counts: np.ndarray
    actor_ids: list[str]
    actors: list[dict]
    heldout: np.ndarray
    summary: dict


def top_actors(totals: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest totals, largest first; ties go to the lower index."""
    return np.argsort(-totals, kind="stable")[:k]


def heldout_mask(counts: np.ndarray, *, top: int, rule: str) -> tuple[np.ndarray, dict]:
    """The held-out mask of ``rule`` (module docstring) and the top sender/recipient indices."""
    if rule not in HELDOUT_RULES:
        raise ValueError(f"prepare_network.heldout_rule must be one of {HELDOUT_RULES}, got "
                         f"{rule!r}")
    n = counts.shape[0]
    check_int(top, "prepare_network.heldout_top", minimum=0)
    if top > n:
        raise ValueError(f"prepare_network.heldout_top={top} exceeds the number of actors kept "
                         f"({n}): lower prepare_network.heldout_top, or keep more actors by "
                         "lowering prepare_network.min_total or prepare_network.min_sent")
    senders = top_actors(counts.sum(axis=1), top)
    recipients = top_actors(counts.sum(axis=0), top)
    is_sender = np.zeros(n, dtype=bool)
    is_sender[senders] = True
    is_recipient = np.zeros(n, dtype=bool)
    is_recipient[recipients] = True
    if rule == "rows_cols":
        mask = is_sender[:, None] | is_recipient[None, :]
    elif rule == "any":
        either = is_sender | is_recipient
        mask = either[:, None] | either[None, :]
    elif rule == "block":
        mask = is_sender[:, None] & is_recipient[None, :]
    else:
        mask = np.zeros((n, n), dtype=bool)
    return mask, {"top_senders": senders, "top_recipients": recipients}


def _actor_universe(rows: pd.DataFrame) -> np.ndarray:
    """Every actor in the edge rows, in id order (numeric ids numerically, others as text)."""
    both = pd.concat([rows["sender"], rows["recipient"]], ignore_index=True)
    if pd.api.types.is_integer_dtype(both):
        return np.sort(both.unique().astype(np.int64))
    return np.array(sorted(set(both.astype(str))), dtype=object)


def build_network(edges: pd.DataFrame, *, recipient_types=("to", "cc"), self_loops: str = "drop",
                  min_sent: int = 1, min_total: int = 100, heldout_top: int = 50,
                  heldout_rule: str = "block", undirected: bool = False,
                  nodes: pd.DataFrame | None = None,
                  label_column: str | None = None, source=None,
                  nodes_source=None) -> NetworkCounts:
    """Build the filtered actor-by-actor counts and the held-out mask (module docstring).

    ``edges``: columns ``sender``, ``recipient`` (ints or strings) and optionally ``type``
    and ``weight`` (non-negative integers adding up to at most
    :data:`lpp.validation.MAX_TOTAL_COUNT`).
    ``recipient_types=None`` counts every row. ``nodes``: optional table indexed by actor id
    whose columns are copied into the actor records; ``label_column`` of it names the rows
    and columns (default: the actor id). Node-table ids and edge ids are compared as text
    (an integer as its digits), and every kept actor must have a row in the node table.
    ``source`` and ``nodes_source`` (the files read, if any) name the inputs in errors.
    """
    edges_name = f"the edge list {source}" if source is not None else "the edge list"
    missing = [c for c in EDGE_COLUMNS if c not in edges.columns]
    if missing:
        raise ValueError(f"the edge list lacks column(s) {missing}; it has {list(edges.columns)}")
    if len(edges) == 0:
        raise ValueError("the edge list is empty")
    if edges[list(EDGE_COLUMNS)].isna().any().any():
        raise ValueError("the edge list has rows without a sender or a recipient")
    if "weight" in edges.columns and not (pd.api.types.is_integer_dtype(edges["weight"])
                                          and (edges["weight"] >= 0).all()):
        raise ValueError(f"{edges_name}: the edge weights must be non-negative integers "
                         "(counts): check prepare_network.weight_column")
    if "weight" in edges.columns:
        _check_weight_total(edges["weight"].to_numpy(), edges_name)
    if self_loops not in SELF_LOOP_RULES:
        raise ValueError(f"prepare_network.self_loops must be one of {SELF_LOOP_RULES}, got "
                         f"{self_loops!r}")
    check_int(min_sent, "prepare_network.min_sent", minimum=0)
    check_int(min_total, "prepare_network.min_total", minimum=0)
    if not isinstance(undirected, bool):
        raise TypeError(f"prepare_network.undirected must be true or false, got "
                        f"{type(undirected).__name__}")
    if heldout_rule not in HELDOUT_RULES:
        raise ValueError(f"prepare_network.heldout_rule must be one of {HELDOUT_RULES}, got "
                         f"{heldout_rule!r}")

    if not all(pd.api.types.is_integer_dtype(edges[c]) for c in EDGE_COLUMNS):
        edges = edges.assign(sender=edges["sender"].astype(str),
                             recipient=edges["recipient"].astype(str))
    stats: dict = {"rows_read": int(len(edges))}
    rows = edges
    if "type" in edges.columns:
        kinds = edges["type"].astype(str).str.strip().str.lower()
        stats["rows_by_type"] = {k: int(v) for k, v in sorted(kinds.value_counts().items())}
        stats["bcc_mirrors_cc"] = _bcc_mirrors_cc(edges, kinds)
        if recipient_types is not None:
            wanted = {str(t).strip().lower() for t in recipient_types}
            if not wanted:
                raise ValueError("prepare_network.recipient_types is empty: no edge would be "
                                 "counted")
            rows = edges[kinds.isin(wanted).to_numpy()]
    elif recipient_types is not None:
        stats["note"] = "no recipient type column: every row counted"
    stats["rows_with_counted_types"] = int(len(rows))
    loops = (rows["sender"] == rows["recipient"]).to_numpy()
    stats["self_loop_rows"] = int(loops.sum())
    if self_loops == "drop":
        rows = rows[~loops]
    stats["rows_counted"] = int(len(rows))
    if len(rows) == 0:
        raise ValueError("no edge is left to count after the recipient-type and self-loop "
                         "rules: widen prepare_network.recipient_types or set "
                         "prepare_network.self_loops to keep")

    universe = _actor_universe(rows)
    index = pd.Index(universe)
    src = index.get_indexer(rows["sender"])
    dst = index.get_indexer(rows["recipient"])
    n_all = len(universe)
    full = np.zeros((n_all, n_all), dtype=np.int64)
    if "weight" in rows.columns:
        weights = rows["weight"].to_numpy(dtype=np.int64)
        stats["weight_total"] = int(weights.sum())
        np.add.at(full, (src, dst), weights)
    else:
        np.add.at(full, (src, dst), 1)
    if undirected:
        stats["undirected"] = True
        full = full + full.T - np.diag(np.diag(full))
    sent, received = full.sum(axis=1), full.sum(axis=0)
    total = sent if undirected else sent + received
    keep = np.flatnonzero((sent >= min_sent) & (total >= min_total))
    if keep.size == 0:
        what = "has at least" if undirected else "sent at least"
        raise ValueError(f"no actor {what} {min_sent} and {'' if undirected else 'sent plus '}"
                         f"received at least {min_total} emails: lower "
                         "prepare_network.min_sent or prepare_network.min_total")
    counts = full[np.ix_(keep, keep)]
    mask, tops = heldout_mask(counts, top=heldout_top, rule=heldout_rule)

    actors = []
    rank_sender = {int(a): r + 1 for r, a in enumerate(tops["top_senders"])}
    rank_recipient = {int(a): r + 1 for r, a in enumerate(tops["top_recipients"])}
    info = (_node_rows(nodes, universe[keep], nodes_source) if nodes is not None
            else None)
    for position, actor in enumerate(keep):
        record = {"id": _plain(universe[actor])}
        if info is not None:
            record.update({k: _plain(v) for k, v in info.iloc[position].items()})
        record.update({
            "sent": int(sent[actor]), "received": int(received[actor]),
            "sent_in_matrix": int(counts[position].sum()),
            "received_in_matrix": int(counts[:, position].sum()),
            "top_sender_rank": rank_sender.get(position),
            "top_recipient_rank": rank_recipient.get(position),
        })
        actors.append(record)
    labels = [str(a[label_column]) if label_column else str(a["id"]) for a in actors]
    if len(set(labels)) != len(labels):
        raise ValueError(f"actor labels from column {label_column!r} are not unique: set "
                         "prepare_network.label_column to a column of unique names, or to none")

    by_rule = {rule: heldout_fractions(counts, heldout_mask(counts, top=heldout_top,
                                                           rule=rule)[0])
               for rule in HELDOUT_RULES}
    heldout = {"rule": heldout_rule, "top": heldout_top, **by_rule[heldout_rule],
               "by_rule": by_rule}
    summary = network_summary(counts, edge_stats=stats, heldout=heldout,
                              extra={"actors_in_edge_list": int(n_all)})
    return NetworkCounts(counts=counts, actor_ids=labels, actors=actors, heldout=mask,
                         summary=summary)


def _check_weight_total(weights: np.ndarray, edges_name: str) -> None:
    """Refuse weights adding up to more than :data:`MAX_TOTAL_COUNT`, the most counts lpp
    fits: past it the int64 sums here (the matrix, the row and column sums, the bcc check)
    would come close to wrapping round silently (five weights of 4e18 summed to 1.55e18).
    Every row counts, also those the type and self-loop rules drop: the bcc check sums them."""
    # The float64 sum cannot wrap; once it is at most twice the limit, the int64 sum cannot
    # either, and that one is exact.
    approx = float(weights.sum(dtype=np.float64))
    total = approx if approx > 2 * MAX_TOTAL_COUNT else int(weights.sum(dtype=np.int64))
    if total > MAX_TOTAL_COUNT:
        raise ValueError(f"{edges_name}: the edge weights add up to {total:.4g}, more than the "
                         f"{MAX_TOTAL_COUNT:.0e} counts lpp fits (lpp.validation.MAX_TOTAL_COUNT):"
                         " check prepare_network.weight_column, or scale the weights down")


def _id_text(value) -> str:
    """An actor id as the text that edge ids and node-table ids are compared by: an integer as
    its digits, anything else as its stripped text. A node table with one non-numeric id is
    read as text while the edge list's ids are integers (or the other way round), and looking
    integers up among strings found nothing: every actor lost its details, silently."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return str(int(value))
    return str(value).strip()


def _node_rows(nodes: pd.DataFrame, ids: np.ndarray, nodes_source) -> pd.DataFrame:
    """The node table's rows of the actors ``ids``, in that order; a ``ValueError`` naming the
    table and the ids it lacks when some actor has no row (reindex gave such an actor empty
    details, and its label became the text "None")."""
    name = f"the node table {nodes_source}" if nodes_source is not None else "the node table"
    column = f" {nodes.index.name!r}" if nodes.index.name is not None else ""
    keys = pd.Index([_id_text(v) for v in nodes.index], dtype=object)
    if keys.has_duplicates:
        twice = list(dict.fromkeys(keys[keys.duplicated()]))
        raise ValueError(f"{name}: the ids of its id column{column} repeat once compared as "
                         f"text: {twice[:5]}")
    wanted = [_id_text(v) for v in ids]
    absent = [w for w in wanted if w not in keys]
    if absent:
        more = f" and {len(absent) - 5} more" if len(absent) > 5 else ""
        raise ValueError(
            f"{name} has no row for {len(absent)} of the {len(wanted)} actors kept: ids "
            f"{absent[:5]}{more} of the edge list are missing from its id column{column} "
            "(compared as text): add them, or check prepare_network.node_id_column "
            "(--node-id-column) and the sender and recipient columns")
    return nodes.set_axis(keys, axis=0).loc[wanted]


def _plain(value):
    """numpy/pandas scalars to JSON-ready Python values (NaN -> None)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def _bcc_mirrors_cc(edges: pd.DataFrame, kinds: pd.Series) -> bool | None:
    """Whether the bcc rows repeat the cc rows exactly (as a multiset of sender-recipient
    pairs, each row counted by its weight); ``None`` when there is no bcc row."""
    if not (kinds == "bcc").any():
        return None
    copied = kinds.isin(["cc", "bcc"]).to_numpy()
    rows = edges.loc[copied, ["sender", "recipient"]].assign(
        kind=kinds[copied].to_numpy(),
        weight=edges.loc[copied, "weight"].to_numpy() if "weight" in edges.columns else 1)
    table = rows.groupby(["sender", "recipient", "kind"])["weight"].sum().unstack(
        "kind", fill_value=0)
    return bool("cc" in table and (table["cc"] == table["bcc"]).all())


def email_edges(emails) -> pd.DataFrame:
    """One edge row per (email, recipient) from parsed emails: columns sender, recipient,
    type (``to``/``cc``/``bcc``). Emails without a sender are skipped."""
    records = [(m.sender, r, kind) for m in emails if m.sender
               for kind, recipients in (("to", m.to), ("cc", m.cc), ("bcc", m.bcc))
               for r in recipients]
    return pd.DataFrame.from_records(records, columns=["sender", "recipient", "type"])
