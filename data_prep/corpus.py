"""Python API and command line: any supported corpus -> a prepared count matrix.

Topic model (document-by-word)::

    python -m data_prep.corpus topics --format mbox --input mail.mbox --out data/prepared/mine

Community model (actor-by-actor)::

    python -m data_prep.corpus network --format edges --input edges.tsv --out data/prepared/net

The same network under another held-out rule (the counts copied, the mask recomputed)::

    python -m data_prep.corpus remask --input data/prepared/net --heldout-rule rows_cols \
        --out data/prepared/net_rows_cols

An optional path or column given as ``none`` is unset (so that a pipeline can template every
option). The defaults are the paper's settings (10,000 documents with at least 50 tokens, a
10,000-word vocabulary of types with document frequency < 0.3; actors who sent at least 1
and sent or received at least 100 emails; the top 50 senders/recipients held out). Every
input is checksummed into the output's metadata; nothing is written unless the whole run
succeeds. Tarballs and compressed files are read within size limits (``--max-member-bytes``,
``--max-archive-bytes``); CSV/TSV text is decoded as ``--encoding`` says, or detected. See
``data_prep/README.md`` for the formats and the rules.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from data_prep import formats
from data_prep._cli import byte_size, run_reporting_errors
from data_prep.emails import BODY_RULES, Email, EmailStats, collect_emails, document_text
from lpp.formats.counts import load_counts, write_counts
from data_prep.network import (HELDOUT_RULES, SELF_LOOP_RULES, NetworkCounts, build_network,
                               email_edges, heldout_mask)
from data_prep.streams import MAX_ARCHIVE_BYTES, MAX_MEMBER_BYTES, ReadOptions
from data_prep.tokens import Tokenizer
from data_prep.topics import (BagOfWordsDocuments, TextDocuments, TopicCounts,
                              build_topic_counts, check_topic_params)
from data_prep.vocabulary import read_word_list

TEXT_FORMATS = ("text-dir", "text-lines", "text-csv")
EMAIL_FORMATS = ("emails-csv", "mbox", "maildir", "email-dir", "email-tar")
BAG_OF_WORDS_FORMATS = ("uci",)
TOPIC_FORMATS = TEXT_FORMATS + EMAIL_FORMATS + BAG_OF_WORDS_FORMATS
NETWORK_FORMATS = ("edges",) + EMAIL_FORMATS

#: the paper's settings (Schein et al. 2019, §5) and this project's choices (``heldout_rule``)
TOPIC_DEFAULTS = {"n_docs": 10_000, "min_tokens": 50, "vocab_size": 10_000, "max_df": 0.3,
                  "min_token_length": 1, "stop_words": "none", "body_rule": "own_text",
                  "seed": 2019}
NETWORK_DEFAULTS = {"recipient_types": ["to", "cc"], "self_loops": "drop", "min_sent": 1,
                    "min_total": 100, "heldout_top": 50, "heldout_rule": "block",
                    "undirected": False}
#: settings recorded in an output's ``params`` only when they differ from these values, so
#: that the outputs of runs that do not use them keep their bytes
_RECORDED_WHEN_SET = {"weight_column": None, "undirected": False}


def _check_format(fmt: str, allowed: Sequence[str], what: str,
                  section: str = "prepare_topics") -> None:
    if fmt not in allowed:
        raise ValueError(f"format {fmt!r} cannot be used for {what}; set {section}.format "
                         f"(--format) to one of {list(allowed)}")


def read_emails(fmt: str, source, *, message_column: str = "message",
                id_column: str | None = None, options: ReadOptions = formats.DEFAULT_READ
                ) -> tuple[list[Email], EmailStats]:
    """Parse, order and de-duplicate the emails of an email-format input."""
    _check_format(fmt, EMAIL_FORMATS, "emails")
    if fmt == "emails-csv":
        items = formats.iter_emails_csv(source, message_column=message_column,
                                        id_column=id_column, options=options)
    elif fmt == "email-tar":
        items = formats.iter_email_tar(source, options)
    else:
        items = {"mbox": formats.iter_mbox, "maildir": formats.iter_maildir,
                 "email-dir": formats.iter_email_dir}[fmt](source)
    emails, stats = collect_emails(items)
    if not emails:
        raise ValueError(f"the corpus is empty: no readable email in {source} "
                         f"({stats.read} read, {stats.malformed} malformed)")
    return emails, stats


def documents_from_emails(emails: Sequence[Email], tokenizer: Tokenizer,
                          body_rule: str) -> TextDocuments:
    return TextDocuments([m.source_id for m in emails],
                         [document_text(m, body_rule) for m in emails], tokenizer)


def load_documents(fmt: str, source, *, tokenizer: Tokenizer, body_rule: str = "own_text",
                   vocab=None, text_column: str = "text", id_column: str | None = None,
                   message_column: str = "message",
                   options: ReadOptions = formats.DEFAULT_READ):
    """Documents of any topic format, plus a dict of corpus statistics for the summary."""
    _check_format(fmt, TOPIC_FORMATS, "a document-by-word matrix")
    if fmt in EMAIL_FORMATS:
        emails, stats = read_emails(fmt, source, message_column=message_column,
                                    id_column=id_column, options=options)
        documents = documents_from_emails(emails, tokenizer, body_rule)
        return documents, {"email_parsing": stats.as_dict()}
    if fmt == "uci":
        if vocab is None:
            raise ValueError("the uci format needs the vocab file: set prepare_topics.vocab "
                             "(--vocab)")
        ids, counts, types = formats.read_uci(source, vocab, options)
        return BagOfWordsDocuments(ids, counts, types, tokenizer), {}
    if fmt == "text-dir":
        ids, texts = formats.read_text_dir(source)
    elif fmt == "text-lines":
        ids, texts = formats.read_text_lines(source, options)
    else:
        ids, texts = formats.read_text_csv(source, text_column=text_column, id_column=id_column,
                                           options=options)
    if not ids:
        raise ValueError(f"the corpus is empty: no document in {source}")
    return TextDocuments(ids, texts, tokenizer), {}


def write_topics(out, result: TopicCounts, *, params: dict, inputs: dict):
    return write_counts(out, result.counts, row_ids=result.doc_ids,
                        column_ids=result.vocabulary, kind="topics", params=params,
                        inputs=inputs, summary=result.summary)


def _read_options(encoding, max_member_bytes, max_archive_bytes) -> tuple[ReadOptions, dict]:
    """The reading options, and what the output's ``params`` record of them: the encoding
    when one is given (it can change the text read); the limits never change a result."""
    options = ReadOptions(encoding=encoding, max_member_bytes=max_member_bytes,
                          max_archive_bytes=max_archive_bytes)
    return options, ({} if encoding is None else {"encoding": encoding})


def prepare_topics(source, out=None, *, fmt: str, vocab=None, public_vocab=None,
                   text_column: str = "text", id_column: str | None = None,
                   message_column: str = "message", sha256: str | None = None,
                   encoding: str | None = None, max_member_bytes: int = MAX_MEMBER_BYTES,
                   max_archive_bytes: int = MAX_ARCHIVE_BYTES, **settings) -> TopicCounts:
    """Build (and, if ``out`` is given, write) a document-by-word matrix.

    ``settings`` override :data:`TOPIC_DEFAULTS` (``n_docs``, ``min_tokens``,
    ``vocab_size``, ``max_df``, ``min_token_length``, ``stop_words``, ``body_rule``,
    ``seed``); ``n_docs`` and ``vocab_size`` may be ``"all"`` (or None), as in
    ``params.yaml``. ``sha256`` pins the input file's checksum. ``encoding``,
    ``max_member_bytes`` and ``max_archive_bytes`` say how inputs are read
    (:class:`data_prep.streams.ReadOptions`).

    ``public_vocab``: a file of words, one per line (:func:`data_prep.vocabulary.read_word_list`),
    fixed before the counts are read: the columns are its words in alphabetical order, and
    ``vocab_size`` and ``max_df`` choose nothing, so the vocabulary says nothing of the counts
    (docs/privacy.md). Without it the vocabulary is the paper's rule, chosen from the counts.
    ``vocab`` is the ``uci`` format's word table (word ids to words), nothing else.
    """
    unknown = set(settings) - set(TOPIC_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown topic setting(s): {sorted(unknown)}")
    params = {**TOPIC_DEFAULTS, **settings}
    for name in ("n_docs", "vocab_size"):  # "all", as in params.yaml and on the command line
        if isinstance(params[name], str) and params[name] == "all":
            params[name] = None
    options, read_record = _read_options(encoding, max_member_bytes, max_archive_bytes)
    _check_format(fmt, TOPIC_FORMATS, "a document-by-word matrix")
    check_topic_params(n_docs=params["n_docs"], min_tokens=params["min_tokens"],
                       vocab_size=params["vocab_size"], max_df=params["max_df"])
    if params["body_rule"] not in BODY_RULES:
        raise ValueError(f"prepare_topics.body_rule must be one of {BODY_RULES}, got "
                         f"{params['body_rule']!r}")
    if vocab is not None and fmt != "uci":
        raise ValueError(f"prepare_topics.vocab (--vocab) is the uci format's word table, and "
                         f"the {fmt} format has none: set it to none; for a vocabulary fixed "
                         "in advance set prepare_topics.public_vocab (--public-vocab)")
    tokenizer = Tokenizer.from_params(params["min_token_length"], params["stop_words"])
    inputs = {"input": formats.input_record(source, sha256)}
    if vocab is not None:
        inputs["vocab"] = formats.input_record(vocab)
    public_words = None
    if public_vocab is not None:
        public_words = read_word_list(public_vocab)
        inputs["public_vocab"] = formats.input_record(public_vocab)
    documents, corpus_stats = load_documents(
        fmt, source, tokenizer=tokenizer, body_rule=params["body_rule"], vocab=vocab,
        text_column=text_column, id_column=id_column, message_column=message_column,
        options=options)
    result = build_topic_counts(documents, n_docs=params["n_docs"],
                                min_tokens=params["min_tokens"],
                                vocab_size=params["vocab_size"], max_df=params["max_df"],
                                seed=params["seed"], extra_summary=corpus_stats,
                                public_vocabulary=public_words)
    if out is not None:
        record = {"format": fmt, **params, "text_column": text_column, "id_column": id_column,
                  "message_column": message_column, **read_record}
        if public_vocab is not None:  # recorded only when set: other outputs keep their bytes
            record["public_vocab"] = str(public_vocab)
        write_topics(out, result, params=record, inputs=inputs)
    return result


def write_network(out, result: NetworkCounts, *, params: dict, inputs: dict):
    def ranked(key):
        return [a for _, a in sorted((x[key], label) for x, label in
                                     zip(result.actors, result.actor_ids) if x[key])]

    return write_counts(out, result.counts, row_ids=result.actor_ids,
                        column_ids=result.actor_ids, kind="network", params=params,
                        inputs=inputs, summary=result.summary,
                        arrays={"heldout": result.heldout},
                        extra_meta={"top_senders": ranked("top_sender_rank"),
                                    "top_recipients": ranked("top_recipient_rank"),
                                    "actors": result.actors})


def prepare_network(source, out=None, *, fmt: str = "edges", nodes=None,
                    node_id_column: str = "id", label_column: str | None = None,
                    sender_column: str = "from", recipient_column: str = "to",
                    type_column: str | None = None, weight_column: str | None = None,
                    message_column: str = "message",
                    id_column: str | None = None, sha256: str | None = None,
                    encoding: str | None = None, max_member_bytes: int = MAX_MEMBER_BYTES,
                    max_archive_bytes: int = MAX_ARCHIVE_BYTES, **settings) -> NetworkCounts:
    """Build (and, if ``out`` is given, write) an actor-by-actor matrix.

    ``settings`` override :data:`NETWORK_DEFAULTS` (``recipient_types``, ``self_loops``,
    ``min_sent``, ``min_total``, ``heldout_top``, ``heldout_rule``, ``undirected``). For
    ``edges`` input the columns are named by ``sender_column``, ``recipient_column``,
    ``type_column`` and ``weight_column`` (whole non-negative counts: a row adds its weight
    instead of one); a node table (``nodes``, keyed by ``node_id_column``) adds actor details
    and ``label_column`` names the actors. ``undirected=True`` counts each edge in both
    directions (:mod:`data_prep.network`). Email formats give one edge per To/Cc/Bcc recipient. ``encoding``
    (of the edge list and node table, or of an emails CSV), ``max_member_bytes`` and
    ``max_archive_bytes`` say how inputs are read (:class:`data_prep.streams.ReadOptions`).
    """
    unknown = set(settings) - set(NETWORK_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown network setting(s): {sorted(unknown)}")
    params = {**NETWORK_DEFAULTS, **settings}
    options, read_record = _read_options(encoding, max_member_bytes, max_archive_bytes)
    _check_format(fmt, NETWORK_FORMATS, "an actor-by-actor matrix", "prepare_network")
    if weight_column is not None and fmt != "edges":
        raise ValueError(f"prepare_network.weight_column names a column of an edge list; the "
                         f"{fmt} format has none: set it to none")
    inputs = {"input": formats.input_record(source, sha256)}
    node_table = None
    if nodes is not None:
        inputs["nodes"] = formats.input_record(nodes)
        node_table = formats.read_nodes(nodes, id_column=node_id_column, options=options)
        if label_column is not None and label_column not in node_table.columns:
            raise ValueError(f"{nodes} has no column {label_column!r} "
                             "(prepare_network.label_column); its columns are "
                             f"{[node_id_column, *node_table.columns]}")
    elif label_column is not None:
        raise ValueError("prepare_network.label_column names a column of the node table: set "
                         "prepare_network.nodes (--nodes) too, or label_column to none")
    extra = {}
    if fmt == "edges":
        edges = formats.read_edge_list(source, sender_column=sender_column,
                                       recipient_column=recipient_column,
                                       type_column=type_column, weight_column=weight_column,
                                       options=options)
    else:
        emails, stats = read_emails(fmt, source, message_column=message_column,
                                    id_column=id_column, options=options)
        edges = email_edges(emails)
        extra = {"email_parsing": stats.as_dict()}
    result = build_network(edges, recipient_types=params["recipient_types"],
                           self_loops=params["self_loops"], min_sent=params["min_sent"],
                           min_total=params["min_total"], heldout_top=params["heldout_top"],
                           heldout_rule=params["heldout_rule"],
                           undirected=params["undirected"], nodes=node_table,
                           label_column=label_column, source=source, nodes_source=nodes)
    result.summary.update(extra)
    if out is not None:
        record = {"format": fmt, **params, "sender_column": sender_column,
                  "recipient_column": recipient_column, "type_column": type_column,
                  "weight_column": weight_column, "node_id_column": node_id_column,
                  "label_column": label_column, **read_record}
        record = {k: v for k, v in record.items()
                  if k not in _RECORDED_WHEN_SET or v != _RECORDED_WHEN_SET[k]}
        write_network(out, result, params=record, inputs=inputs)
    return result


def remask_network(source, out, *, heldout_rule: str) -> NetworkCounts:
    """A prepared network again under another held-out rule: same counts, actors and top
    lists; the mask of ``heldout_rule`` (:func:`data_prep.network.heldout_mask`, with the
    source's ``heldout_top``), the summary's held-out block and the recorded rule replaced.

    The pipeline fits both the project's ``block`` design and the paper's literal
    ``rows_cols`` reading from one parse of the corpus (``data_prep/README.md``, *Held-out
    mask*).
    """
    data = load_counts(source)
    if data.kind != "network":
        raise ValueError(f"{source} holds {data.kind!r} counts, not a network")
    if heldout_rule not in HELDOUT_RULES:
        raise ValueError(f"heldout_rule must be one of {HELDOUT_RULES}, got {heldout_rule!r}")
    meta = data.meta
    top = meta["params"]["heldout_top"]
    counts = data.counts.toarray()
    mask, _ = heldout_mask(counts, top=top, rule=heldout_rule)
    summary = dict(meta["summary"])
    by_rule = summary["heldout"]["by_rule"]
    summary["heldout"] = {"rule": heldout_rule, "top": top, **by_rule[heldout_rule],
                          "by_rule": by_rule}
    result = NetworkCounts(counts=counts, actor_ids=meta["row_ids"], actors=meta["actors"],
                           heldout=mask, summary=summary)
    params = {**meta["params"], "heldout_rule": heldout_rule}
    inputs = {**meta["inputs"], "remasked_from": formats.input_record(source)}
    if out is not None:
        write_counts(out, counts, row_ids=meta["row_ids"], column_ids=meta["column_ids"],
                     kind="network", params=params, inputs=inputs, summary=summary,
                     arrays={"heldout": mask},
                     extra_meta={"top_senders": meta["top_senders"],
                                 "top_recipients": meta["top_recipients"],
                                 "actors": meta["actors"]})
    return result


# ---------------------------------------------------------------- command line

def _count_or_all(text: str) -> int | None:
    return None if text == "all" else int(text)


def _true_or_false(text: str) -> bool:
    if text.strip().lower() not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"not true or false: {text!r}")
    return text.strip().lower() == "true"


def _optional(text: str) -> str | None:
    """An optional path or column; ``none`` leaves it unset.

    The pipeline templates every option of a prepare stage from ``params.yaml``, so an option
    that a corpus does not use (a node table, a type column) needs a value meaning "unset".
    """
    return None if text == "none" else text


def _add_read_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--encoding", type=_optional,
                        help="text encoding of CSV/TSV input (default, or 'none': UTF-16/32 by "
                             "byte-order mark, else UTF-8 with cp1252/latin-1 for other cells)")
    parser.add_argument("--max-member-bytes", type=byte_size, default=MAX_MEMBER_BYTES,
                        help="largest tarball member read, e.g. 64M (default)")
    parser.add_argument("--max-archive-bytes", type=byte_size, default=MAX_ARCHIVE_BYTES,
                        help="most bytes read out of a tarball or compressed file, e.g. 4G "
                             "(default)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m data_prep.corpus", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    topics = commands.add_parser("topics", help="document-by-word counts")
    topics.add_argument("--format", required=True, choices=TOPIC_FORMATS)
    topics.add_argument("--input", required=True, help="file or folder")
    topics.add_argument("--out", required=True, help="output folder")
    topics.add_argument("--vocab", type=_optional, help="vocab file of the uci format")
    topics.add_argument("--public-vocab", type=_optional,
                        help="a file of words, one per line, fixed in advance: the columns "
                             "(vocab-size and max-df then choose nothing), or 'none'")
    topics.add_argument("--text-column", default="text", help="text-csv: the text column")
    topics.add_argument("--message-column", default="message",
                        help="emails-csv: the raw-message column")
    topics.add_argument("--id-column", type=_optional,
                        help="csv formats: the document id column (default, or 'none': row number)")
    topics.add_argument("--sha256", help="expected sha256 of the input file")
    d = TOPIC_DEFAULTS
    topics.add_argument("--n-docs", type=_count_or_all, default=d["n_docs"],
                        help="documents to sample, or 'all'")
    topics.add_argument("--min-tokens", type=int, default=d["min_tokens"])
    topics.add_argument("--vocab-size", type=_count_or_all, default=d["vocab_size"],
                        help="vocabulary size, or 'all'")
    topics.add_argument("--max-df", type=float, default=d["max_df"])
    topics.add_argument("--min-token-length", type=int, default=d["min_token_length"])
    topics.add_argument("--stop-words", default=d["stop_words"],
                        help="'none', 'gensim' or a file with one word per line")
    topics.add_argument("--body-rule", default=d["body_rule"], choices=BODY_RULES)
    topics.add_argument("--seed", type=int, default=d["seed"])
    _add_read_options(topics)

    network = commands.add_parser("network", help="actor-by-actor counts")
    network.add_argument("--format", default="edges", choices=NETWORK_FORMATS)
    network.add_argument("--input", required=True)
    network.add_argument("--out", required=True)
    network.add_argument("--nodes", type=_optional, help="node table (TSV/CSV), or 'none'")
    network.add_argument("--node-id-column", default="id")
    network.add_argument("--label-column", type=_optional,
                         help="node-table column naming the actors, or 'none' (the ids)")
    network.add_argument("--sender-column", default="from")
    network.add_argument("--recipient-column", default="to")
    network.add_argument("--type-column", type=_optional,
                         help="recipient type column (to/cc/bcc), or 'none'")
    network.add_argument("--weight-column", type=_optional,
                         help="edges: a column of counts (a row adds its count instead of one), "
                              "or 'none'")
    network.add_argument("--message-column", default="message")
    network.add_argument("--id-column", type=_optional)
    network.add_argument("--sha256")
    n = NETWORK_DEFAULTS
    network.add_argument("--recipient-types", default=",".join(n["recipient_types"]),
                         help="comma-separated types to count, or 'all'")
    network.add_argument("--self-loops", default=n["self_loops"], choices=SELF_LOOP_RULES)
    network.add_argument("--min-sent", type=int, default=n["min_sent"])
    network.add_argument("--min-total", type=int, default=n["min_total"])
    network.add_argument("--heldout-top", type=int, default=n["heldout_top"])
    network.add_argument("--heldout-rule", default=n["heldout_rule"],
                         choices=HELDOUT_RULES)
    network.add_argument("--undirected", type=_true_or_false, default=n["undirected"],
                         help="true: each edge counts in both directions (default: false)")
    _add_read_options(network)

    remask = commands.add_parser("remask", help="a prepared network under another held-out rule")
    remask.add_argument("--input", required=True, help="a prepared network folder")
    remask.add_argument("--out", required=True)
    remask.add_argument("--heldout-rule", required=True, choices=HELDOUT_RULES)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    def run() -> int:
        if args.command == "remask":
            result = remask_network(args.input, args.out, heldout_rule=args.heldout_rule)
            print(f"wrote {args.out}: held out by rule {args.heldout_rule}: "
                  f"{result.heldout.mean():.1%} of the entries")
            return 0
        reading = {"encoding": args.encoding, "max_member_bytes": args.max_member_bytes,
                   "max_archive_bytes": args.max_archive_bytes}
        if args.command == "topics":
            result = prepare_topics(
                args.input, args.out, fmt=args.format, vocab=args.vocab,
                public_vocab=args.public_vocab, text_column=args.text_column,
                id_column=args.id_column, message_column=args.message_column,
                sha256=args.sha256, n_docs=args.n_docs, min_tokens=args.min_tokens,
                vocab_size=args.vocab_size, max_df=args.max_df,
                min_token_length=args.min_token_length, stop_words=args.stop_words,
                body_rule=args.body_rule, seed=args.seed, **reading)
        else:
            types = None if args.recipient_types == "all" else [
                t for t in args.recipient_types.split(",") if t.strip()]
            result = prepare_network(
                args.input, args.out, fmt=args.format, nodes=args.nodes,
                node_id_column=args.node_id_column, label_column=args.label_column,
                sender_column=args.sender_column, recipient_column=args.recipient_column,
                type_column=args.type_column, weight_column=args.weight_column,
                message_column=args.message_column,
                id_column=args.id_column, sha256=args.sha256, recipient_types=types,
                self_loops=args.self_loops, min_sent=args.min_sent, min_total=args.min_total,
                heldout_top=args.heldout_top, heldout_rule=args.heldout_rule,
                undirected=args.undirected, **reading)
        shape = result.counts.shape
        print(f"wrote {args.out}: {shape[0]} x {shape[1]} counts, "
              f"{int(result.counts.sum())} in total")
        return 0

    return run_reporting_errors(run)


if __name__ == "__main__":
    sys.exit(main())
