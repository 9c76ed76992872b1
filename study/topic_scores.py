"""One topic fit scored against the true counts, kept as a small record; the records gathered.

    python -m study.topic_scores results/fits/topics/nonprivate --counts data/prepared/topics \\
        --reference-out results/eval/enron_topics/nonprivate_topics.npy \\
        --out results/eval/enron_topics/nonprivate.json
    python -m study.topic_scores results/fits/topics/collapsed_eps1.0_rep0 \\
        --counts data/prepared/topics --reference results/eval/enron_topics/nonprivate_topics.npy \\
        --out results/eval/enron_topics/collapsed_eps1.0_rep0.json

The pipeline scores each topic fit in a stage of its own (``score_nonprivate_topics``,
``score_private_topics@…``, ``score_vi_topics@…``), and ``report_topics`` tabulates and draws the
records. A fit at the paper's scale is about 2 GB and an hour of sampling, its record a few
kilobytes: scored on its own, a fit that is remade is scored again alone, and a study run in
pieces (on machines that keep nothing between pieces) keeps each finished fit's scores,
while a report that read every fit at once needs them all on one disk.

A record (JSON) holds the fit's rows of the score table (:func:`study.reports.fit_score_rows`:
one per chain, :func:`lpp.evaluation.topic_scores` against the true counts), its rows of the
topics-as-words table (:func:`study.topic_words.fit_word_rows`: its topics matched to the
non-private fit's) and its schedule (sweeps, burn-in, thinning, whether variational, the data
folder's name), which the figures' captions read (:func:`study.figures.schedule_settings`),
with the ``n_top`` it was scored with and the sha256 of the reference topics it was matched
to: records of other settings or another reference are refused together
(:func:`read_records`). It holds no run time: the same fit gives the same bytes. A missing
value (a one-chain fit's R-hat, the non-private fit's privacy level) is ``null``, an infinite
one (the log-likelihood of a count a fit gives no chance) the string ``"inf"`` or ``"-inf"``.

The non-private fit's record comes first: its stage also writes the mean topics the other fits
are aligned to (``--reference-out``, a ``.npy`` of K x V floats), which their stages read
(``--reference``), so that no private fit's stage reads the non-private fit itself.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from lpp.evaluation import topic_references
from lpp.formats.files import atomic_write_bytes
from lpp.formats.fits import load_fit

#: the keys of a record
RECORD_KEYS = ("fit", "n_top", "reference_sha256", "scores", "words", "schedule")
#: the keys of a record's schedule (:func:`fit_schedule`)
SCHEDULE_KEYS = ("n_iter", "burn_in", "thin", "variational", "data")
#: the columns of the two tables that hold text; every other one is numeric
_TEXT_COLUMNS = ("fit", "method", "words")


def _plain(value):
    """``value`` as strict JSON holds it: a NaN as None (``null``), an infinity as the string
    ``"inf"`` or ``"-inf"`` (read back as floats by :func:`_numeric`), numpy scalars as
    Python's."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _plain_rows(rows) -> list[dict]:
    return [{key: _plain(value) for key, value in row.items()} for row in rows]


def fit_schedule(metadata) -> dict:
    """The part of a fit's record (:class:`lpp.formats.fits.FitMetadata`) a figure's caption
    reads (:func:`study.figures.schedule_settings`): the data folder by its name alone, so the
    record does not depend on where the work tree lies."""
    return {"n_iter": int(metadata.n_iter), "burn_in": int(metadata.burn_in),
            "thin": int(metadata.thin), "variational": bool(metadata.variational),
            "data": None if metadata.data is None else Path(metadata.data).name}


def score_fit(fit_dir, counts_dir, *, n_top: int = 10, reference_topics=None,
              reference_name: str = "the reference topics"):
    """The record of the topic fit at ``fit_dir`` scored against the true counts of the
    prepared folder ``counts_dir``.

    Parameters
    ----------
    fit_dir : path-like
        A saved topic-model fit (``lpp.formats.fits``); its folder name names it.
    counts_dir : path-like
        The prepared true counts (``data_prep.load_counts``), taken in the private folders'
        canonical order (:func:`lpp.formats.privatized.canonical_counts`), the fits' order.
    n_top : int
        Top words per topic for NPMI and coherence, and listed in the words table.
    reference_topics : numpy.ndarray, optional
        The mean topics the fit's topics are matched to (the non-private fit's,
        :func:`study.topic_words.reference_mean_topics`). None: the fit is the reference
        itself, matched to its own.
    reference_name : str, optional
        Where ``reference_topics`` were read, for the error when they do not fit the counts.

    Returns
    -------
    (dict, numpy.ndarray)
        The record (:data:`RECORD_KEYS`) and the fit's own reference topics (those it was
        matched to).

    Raises
    ------
    ValueError
        Naming ``reference_name``: the reference topics are not K x V for the counts' V words;
        naming ``fit_dir``: the fit does not match the counts, or has another vocabulary or
        number of topics than the reference.
    """
    # the compendium's loaders: imported here, so that reading records needs neither
    from data_prep import load_counts
    from lpp.formats.privatized import canonical_counts
    from study.reports import fit_score_rows, topic_score
    from study.topic_words import fit_word_rows, reference_mean_topics

    fit_dir = Path(fit_dir)
    truth = canonical_counts(load_counts(counts_dir))
    if reference_topics is not None and (np.ndim(reference_topics) != 2 or np.shape(
            reference_topics)[1] != len(truth.column_ids)):
        raise ValueError(f"{reference_name}: not K x V mean topics of the {len(truth.column_ids)} "
                         f"words of {counts_dir} (shape {np.shape(reference_topics)})")
    fit = load_fit(fit_dir)
    name = fit_dir.name
    # a paper-scale fit takes minutes: say what is under way
    print(f"{fit_dir}: scoring {fit.n_chains} chain(s) against {counts_dir} (n_top {n_top})",
          flush=True)
    try:
        if reference_topics is None:
            reference_topics = reference_mean_topics(fit)
        score, columns = topic_score(truth.counts, n_top=n_top)
        scores = fit_score_rows(fit, name, score, columns)
        words = fit_word_rows(fit, name, truth.column_ids, reference_topics, n_words=n_top)
    except ValueError as error:
        raise ValueError(f"{fit_dir}: {error}") from None
    record = {"fit": name, "n_top": int(n_top),
              "reference_sha256": hashlib.sha256(_npy_bytes(reference_topics)).hexdigest(),
              "scores": _plain_rows(scores), "words": _plain_rows(words),
              "schedule": fit_schedule(fit.metadata)}
    return record, reference_topics


def write_record(record: dict, path) -> Path:
    """Write a record as JSON, atomically, its folder created; the same record, the same
    bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    atomic_write_bytes(path, text.encode())
    return path


def read_records(scores_dir, names, *, n_top: int | None = None) -> tuple[list[dict], list[str]]:
    """The records under ``scores_dir`` of the fits ``names`` names, in its order, and the names
    of the records there that it does not name (an earlier run's: DVC leaves a dropped stage's
    output in place), which a report leaves out and lists. The records must agree on ``n_top``
    (and have the one given) and on the reference topics they were matched to.

    Parameters
    ----------
    scores_dir : path-like
        A folder of records (``<fit>.json``).
    names : iterable of str or mapping
        The fits wanted (:func:`study.reports.named_fits`: a mapping whose values say which
        stage and settings make each fit, for the error).
    n_top : int, optional
        The top words the records must have been scored with (the report's setting).

    Raises
    ------
    FileNotFoundError
        If a named fit has no record (the error names the file and, with a mapping, the score
        stage that makes it).
    ValueError
        If a record is not one, or was scored with another ``n_top`` or matched to other
        reference topics than the others (the error names the file).
    """
    scores_dir = Path(scores_dir)
    wanted = list(names)
    missing = [name for name in wanted if not (scores_dir / f"{name}.json").exists()]
    if missing:
        shown = [f"  {scores_dir / f'{name}.json'}"
                 + (f" ({_score_stage(names[name])})" if isinstance(names, Mapping) else "")
                 for name in missing[:5]]
        if len(missing) > 5:
            shown.append(f"  and {len(missing) - 5} more")
        raise FileNotFoundError(
            f"{len(missing)} fit(s) that the settings name have no scores under {scores_dir}:\n"
            + "\n".join(shown) + "\nrun their score stages (dvc repro), or take the fits out of "
            "the settings (params.yaml)")
    records = []
    for name in wanted:
        path = scores_dir / f"{name}.json"
        record = _read_record(path, name)
        if n_top is not None and record["n_top"] != n_top:
            raise ValueError(f"{path}: scored with n_top {record['n_top']}, the report's is "
                             f"{n_top}: run its score stage again (dvc repro)")
        if records and (record["n_top"], record["reference_sha256"]) != (
                records[0]["n_top"], records[0]["reference_sha256"]):
            raise ValueError(f"{path}: scored with n_top {record['n_top']} against reference "
                             f"topics {record['reference_sha256'][:12]}, "
                             f"{scores_dir / (records[0]['fit'] + '.json')} with n_top "
                             f"{records[0]['n_top']} against "
                             f"{records[0]['reference_sha256'][:12]}: records of one scoring "
                             "only (dvc repro)")
        records.append(record)
    left_out = sorted(p.stem for p in scores_dir.glob("*.json") if p.stem not in set(wanted))
    return records, left_out


def _score_stage(described: str) -> str:
    """The score stage of a fit from its description (:func:`study.reports.named_fits`:
    ``stage infer_private_topics: …``): ``stage score_private_topics: …``."""
    return described.replace("stage infer_", "made by stage score_", 1)


def _read_record(path: Path, name: str) -> dict:
    """The record at ``path`` of fit ``name``, its shape checked (the error names the file)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not a score record ({error})") from None
    if not isinstance(record, dict) or set(record) != set(RECORD_KEYS) \
            or record["fit"] != name:
        raise ValueError(f"{path}: not the score record of fit {name!r} (keys "
                         f"{', '.join(RECORD_KEYS)})")
    rows_ok = all(isinstance(record[key], list) and record[key]
                  and all(isinstance(row, dict) for row in record[key])
                  for key in ("scores", "words"))
    schedule = record["schedule"]
    if not rows_ok or not isinstance(schedule, dict) or set(schedule) != set(SCHEDULE_KEYS):
        raise ValueError(f"{path}: a score record's scores and words are lists of rows and its "
                         f"schedule has {', '.join(SCHEDULE_KEYS)}")
    return record


def _numeric(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every column but the text ones numeric (a ``null`` read back is NaN,
    ``"inf"`` and ``"-inf"`` the infinities)."""
    for column in table.columns:
        if column not in _TEXT_COLUMNS and column != "chain":
            table[column] = pd.to_numeric(table[column])
    return table


def score_table(records, true_counts, true_rates=None) -> pd.DataFrame:
    """The score table of ``records`` (:func:`read_records`), fits in the records' order, then
    the reference rows (:func:`lpp.evaluation.topic_references`): the table
    :func:`study.reports.score_topic_fits` makes from the fits themselves."""
    from study.reports import score_frame

    rows = [row for record in records for row in record["scores"]]
    return _numeric(score_frame(rows, topic_references(true_counts, true_rates)))


def word_table(records, reference: str | None = None) -> pd.DataFrame:
    """The topics-as-words table of ``records``: the reference fit's rows first (by default
    :data:`study.topic_words.REFERENCE_FIT`), then the others in the records' order: the table
    :func:`study.topic_words.topic_word_table` makes from the fits themselves.

    Raises
    ------
    FileNotFoundError
        If no record is the reference fit's.
    """
    from study.topic_words import REFERENCE_FIT, WORD_COLUMNS

    reference = REFERENCE_FIT if reference is None else reference
    order = [record["fit"] for record in records]
    if reference not in order:
        raise FileNotFoundError(f"no scores of the fit {reference!r} to align the topics to "
                                f"(found {', '.join(order)})")
    first = records[order.index(reference)]
    rows = [row for record in [first, *(r for r in records if r is not first)]
            for row in record["words"]]
    return _numeric(pd.DataFrame(rows, columns=list(WORD_COLUMNS)))


def schedules(records) -> list[SimpleNamespace]:
    """The records' schedules as :func:`study.figures.schedule_settings` reads them."""
    return [SimpleNamespace(**record["schedule"]) for record in records]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1].strip())
    parser.add_argument("fit", type=Path, help="the fit's folder (results/fits/topics/<fit>)")
    parser.add_argument("--counts", type=Path, required=True,
                        help="the prepared true counts (data/prepared/topics)")
    parser.add_argument("--out", type=Path, required=True, help="the record to write (.json)")
    parser.add_argument("--n-top", type=int, default=10,
                        help="top words per topic: NPMI, coherence and the words table")
    reference = parser.add_mutually_exclusive_group(required=True)
    reference.add_argument("--reference", type=Path,
                           help="the non-private fit's mean topics (.npy) to match the topics to")
    reference.add_argument("--reference-out", type=Path,
                           help="the fit is the reference: write its mean topics here (.npy)")
    args = parser.parse_args(argv)
    if args.n_top < 1:
        parser.error(f"--n-top must be at least 1 (got {args.n_top})")
    for path, what in ((args.fit, "fit folder"), (args.counts, "counts folder")):
        if not path.is_dir():
            parser.error(f"{path}: no such {what}")
    topics = None
    if args.reference is not None:
        if not args.reference.is_file():
            parser.error(f"--reference {args.reference}: no such file (the non-private fit's "
                         "score stage writes it)")
        try:
            topics = np.load(args.reference, allow_pickle=False)
        except ValueError as error:
            parser.error(f"--reference {args.reference}: not a .npy array ({error})")
    record, topics = score_fit(args.fit, args.counts, n_top=args.n_top, reference_topics=topics,
                               reference_name=f"--reference {args.reference}")
    if args.reference_out is not None:
        buffer = _npy_bytes(topics)
        args.reference_out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(args.reference_out, buffer)
    write_record(record, args.out)
    print(f"{args.fit}: {len(record['scores'])} chain(s) scored -> {args.out}", flush=True)
    return 0


def _npy_bytes(array) -> bytes:
    """``array`` as the bytes of a ``.npy`` file (float64, C order)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array, dtype=np.float64), allow_pickle=False)
    return buffer.getvalue()


if __name__ == "__main__":
    sys.exit(main())
