"""Privatized data sets on disk: the only data a private method may read.

A privatized directory holds

``y_tilde.npz``
    ``y_tilde``: the noised counts ``y + tau`` as a dense matrix (noise makes every entry
    informative), stored in the smallest signed integer type that holds them; ``alpha``:
    the mechanism's parameter per row (shape ``(D, 1)``) or one scalar; optionally
    ``heldout``: a boolean matrix, True = held out of inference (a design choice of the
    experimenter that travels with the data, see below).
``meta.json``
    ``format``/``format_version``, ``epsilon``, ``N``, ``epsilon_over_n``, the mechanism
    (``fast`` or ``exact``), where the noise's randomness came from (``randomness``:
    ``"system"``, ``"secret key"`` or ``"simulation"``, never the seed itself), ``order`` (how rows and columns are
    ordered: :data:`ORDER`), ``ledger`` (what the folder releases, for composition:
    ``dataset_id``, ``copy``, ``release_sha256``; :mod:`lpp.formats.ledger`), ``selection``
    (how the rows, the columns and the held-out mask were chosen, and whether from the true
    counts; None where the writer did not say), the row and column ids, the sha256 of
    ``y_tilde.npz``, and the name of the data set it was made from (never its content).

**Order.** Rows and columns are in the canonical order of their ids (:func:`canonical_key`:
ids compared as text, digit runs by value), never in an order the data chose: a vocabulary
ranked by frequency, kept in that order, would tell the analyst the rank of every word's true
total. :func:`privatize_counts` sorts the counts, their ids and the held-out mask into that
order before it draws the noise (so the noise, too, is drawn in canonical order, and the
folder does not depend on the order the owners kept their counts in);
:func:`save_privatized` and :func:`load_privatized` refuse ids out of that order, or
repeated. The owners map the folder back to their own order by the ids
(:func:`canonical_counts` puts prepared counts in the folder's order).

**Ledger.** ``dataset_id`` names the counts a folder privatizes by a digest of its canonical
row and column ids (:func:`dataset_id`) — never of the counts: a digest of the true counts
would let an analyst confirm a guessed reconstruction exactly, a release no epsilon covers,
while the ids are in the folder already, so their digest adds nothing. ``copy`` is the
replicate (None where there is one copy), and ``release_sha256`` a digest of the released
``y_tilde`` and ``alpha`` (public values: it tells two reads of the same release from two
releases). :func:`lpp.formats.ledger.composed_epsilon` sums epsilon over the releases of the
same counts that a reader holds.

**Selection.** Rows, columns and the held-out mask may have been chosen from the true counts
(the documents with enough tokens, the most frequent words, the actors above an activity
threshold, the top senders): such a choice is itself a release, outside epsilon.
``selection`` states it: a list of ``{"what": "rows" | "columns" | "heldout", "rule": text,
"from_true_counts": bool, "epsilon": None or the epsilon of a private choice}``
(:func:`check_selection`); the rules name settings, never statistics of the counts.

A privatized directory is written whole or not at all: :func:`save_privatized` builds it
beside its target and swaps it in by a rename (:func:`lpp.formats.files.atomic_folder`), so a
failed or killed write leaves the previous folder as it was, and a rewrite leaves nothing of
the previous one (two noisy copies of the same counts, averaged, would halve the noise's
variance). The folder holds only these two files: an existing folder holding anything else is
not replaced.

:func:`load_privatized` trusts nothing in the folder (its sha256 catches damage, not a forgery
that recomputed it): the payload must be integers (a float is refused, never truncated), the
ids must fit the shape and be in canonical order, the ledger's digests must match the ids and
the payload, the data file must lie in the folder (no ``..``, no absolute path, no link out
of it), ``alpha`` must be a valid noise level; every refusal is a
:class:`lpp.formats.files.FormatError` (a ``ValueError``) naming the file and the field.

The true counts never enter this format, by construction: :func:`save_privatized` has no
argument for them, and :func:`privatize_counts` is the one function that reads true counts
and writes this format (the data owners' side of the boundary). The held-out mask of the
link-prediction experiment depends on the true counts through the identity of the top
senders and recipients; the paper treats it as part of the experimental design, and so do
we, and ``selection`` says so (docs/privacy.md).

Whoever holds the noise seed can regenerate the noise and subtract it, so the seed is the data
owners' secret: nothing in this format records it. By default the noise comes from the
operating system's entropy and is recorded nowhere. A seed (``seed=``) makes the noise
reproducible: for a private release it must be a secret key too large to guess
(:data:`MIN_SECRET_KEY`; the folder's ``randomness`` is ``secret key``), since the folder
states every other part of the noise's key and an analyst can try small seeds in order. A
simulation study, which needs small reproducible seeds, says so (``simulation=True``): its
folders record ``randomness: simulation`` and every reader warns, once, that their noise is
reproducible by whoever holds the seed (:class:`SimulationWarning`).

Files beside a folder whose names are temporary (``.NAME.<random>.tmp`` or ``.old``: a write
killed part way, or the folder it was replacing) are never read (:func:`lpp.formats.files.read_meta`)
and are removed by the next write to any folder beside them.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import numbers
import re
import struct
import warnings
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np

from lpp.validation import is_sha256_hex, noise_level_array, non_negative_int
from lpp.formats.files import (FormatError, atomic_folder, finite_member, integer_member,
                               known_fields, meta_field, npz_bytes, read_meta, read_npz,
                               read_verified, write_verified)
from lpp.mechanism import alpha_from_epsilon, exact_alpha, privatize

FORMAT_NAME = "lpp.formats.privatized"
#: 1 recorded the noise seed (a leak); 2 kept the order the owners gave (a vocabulary ranked by
#: frequency, say: a leak) and stated no ledger; such folders are refused. 3 labelled any seed
#: ``seeded``, guessable or not: read, as a simulation (:func:`is_simulation`)
FORMAT_VERSION = 4
READ_VERSIONS = (3, 4)
#: every field of a folder's ``meta.json``; any other is refused on reading
META_FIELDS = ("format", "format_version", "shape", "data_file", "data_sha256", "epsilon", "N",
               "epsilon_over_n", "mechanism", "randomness", "source", "has_heldout", "order",
               "ledger", "selection", "row_ids", "column_ids")
DATA_FILE = "y_tilde.npz"
META_FILE = "meta.json"
_SIGNED_TYPES = (np.int8, np.int16, np.int32, np.int64)


@dataclass(frozen=True)
class PrivatizedData:
    """Privatized counts with what a private method needs to read them.

    ``y_tilde`` is int64 (D x V); ``alpha`` a float or a ``(D, 1)`` array; ``heldout`` a
    boolean matrix (True = held out, i.e. the inference ``mask``) or None.
    """

    y_tilde: np.ndarray
    alpha: float | np.ndarray
    heldout: np.ndarray | None
    row_ids: list[str]
    column_ids: list[str]
    meta: dict

    @property
    def release_sha256(self) -> str:
        """The digest of the released values (``meta["ledger"]["release_sha256"]``, checked
        against them on load): what tells this release from every other, e.g. to key a fit's
        seed by it (:func:`lpp.randomness.release_seed`)."""
        return self.meta["ledger"]["release_sha256"]


# ---- order, ledger and selection: what a private folder may say about itself --------------

#: how a private folder orders its rows and columns (``meta.json``'s ``order``)
ORDER = "canonical ids"
_DIGIT_RUN = re.compile(r"([0-9]+)")


def canonical_key(identifier) -> tuple:
    """The sort key of the canonical order: an id's text, its digit runs compared by value.

    ``"d2"`` comes before ``"d10"`` (the documents' natural order), and ``"a"`` before
    ``"b"``. Ids that compare equal as values (``"07"``, ``"7"``) are ordered by their text.
    The key depends on the id alone, so the order it gives carries nothing of the counts.
    """
    text = str(identifier)
    parts = []
    for part in _DIGIT_RUN.split(text):
        if not part:
            continue
        if _DIGIT_RUN.fullmatch(part):
            digits = part.lstrip("0") or "0"
            parts.append((0, len(digits), digits, ""))  # by value, without int()'s size limit
        else:
            parts.append((1, 0, "", part))
    return tuple(parts), text


def canonical_order(ids, what: str = "ids") -> np.ndarray:
    """The permutation that puts ``ids`` in canonical order: ``ids[order]`` is sorted by
    :func:`canonical_key`.

    Raises
    ------
    ValueError
        If an id repeats: the order of two equal ids would be the order they were given in,
        which may come from the counts.
    """
    ids = [str(i) for i in ids]
    if len(set(ids)) != len(ids):
        seen, repeated = set(), []
        for i in ids:
            if i in seen and i not in repeated:
                repeated.append(i)
            seen.add(i)
        raise ValueError(f"{what} repeat ({repeated[:5]}): a private folder needs distinct ids, "
                         "so that their canonical order is the ids' alone")
    return np.asarray(sorted(range(len(ids)), key=lambda k: canonical_key(ids[k])),
                      dtype=np.int64)


def is_canonical(ids) -> bool:
    """Whether ``ids`` are distinct and in canonical order (:func:`canonical_key`)."""
    keys = [canonical_key(i) for i in ids]
    return all(a < b for a, b in zip(keys, keys[1:]))


def _check_canonical(ids, what: str, error=ValueError, where: str = "") -> None:
    if not is_canonical(ids):
        raise error(f"{where}{what} are not distinct and in canonical order (sorted by "
                    "lpp.formats.privatized.canonical_key): an order the owners chose, such as "
                    "a vocabulary ranked by frequency, tells the analyst the rank of each true "
                    "total. privatize_counts sorts rows and columns itself; to write y_tilde "
                    "yourself, put them in canonical_order first")


_DATASET_PREFIX = "ids-sha256:"
_DATASET_ID = re.compile(r"ids-sha256:[0-9a-f]{64}")


def dataset_id(row_ids, column_ids) -> str:
    """The identifier of the counts a private folder privatizes: the sha256 of its rows' and
    columns' ids in canonical order (``ids-sha256:<hex>``).

    Folders over the same rows and columns are copies of the same counts to
    :func:`lpp.formats.ledger.composed_epsilon`. It is a digest of the ids, never of the
    counts: a digest of the true counts would let whoever holds a guess of them confirm it
    exactly (a release no epsilon covers), while the ids are in the folder already, so their
    digest releases nothing new.
    """
    rows = [str(r) for r in row_ids]
    cols = [str(c) for c in column_ids]
    rows = [rows[k] for k in canonical_order(rows, "row ids")]
    cols = [cols[k] for k in canonical_order(cols, "column ids")]
    text = json.dumps({"row_ids": rows, "column_ids": cols}, ensure_ascii=True,
                      separators=(",", ":"))
    return _DATASET_PREFIX + hashlib.sha256(text.encode()).hexdigest()


def release_sha256(y_tilde, alpha) -> str:
    """A digest of the released values (``y_tilde`` as int64 and ``alpha`` as float64, with
    their shapes): two folders with the same digest hold the same release, read twice."""
    h = hashlib.sha256()
    for name, array in (("y_tilde", np.ascontiguousarray(y_tilde, dtype=np.int64)),
                        ("alpha", np.ascontiguousarray(alpha, dtype=np.float64))):
        h.update(f"{name}{list(array.shape)}".encode())
        h.update(array.tobytes())
    return h.hexdigest()


#: what a selection entry may say was chosen
SELECTED = ("rows", "columns", "heldout")
_SELECTION_KEYS = ("what", "rule", "from_true_counts", "epsilon")


def check_selection(selection, error=ValueError, where: str = "") -> list | None:
    """``selection`` checked: None (not stated) or a list of entries
    ``{"what": "rows" | "columns" | "heldout", "rule": str, "from_true_counts": bool,
    "epsilon": None | number > 0}`` with no other key; a copy as plain JSON values.

    ``epsilon`` is None for a choice no privacy mechanism made (e.g. the most frequent words),
    or the epsilon of a differentially private choice, which the ledger then adds once per
    data set. A choice from the true counts with ``epsilon`` None is a non-private release.
    """
    if selection is None:
        return None
    if not isinstance(selection, (list, tuple)):
        raise error(f"{where}selection must be a list of entries or None, got "
                    f"{type(selection).__name__}")
    checked = []
    for k, entry in enumerate(selection):
        if not isinstance(entry, dict) or set(entry) != set(_SELECTION_KEYS):
            raise error(f"{where}selection[{k}] must have exactly the keys "
                        f"{list(_SELECTION_KEYS)}, got {entry!r:.120}")
        if entry["what"] not in SELECTED:
            raise error(f"{where}selection[{k}]['what'] must be one of {SELECTED}, got "
                        f"{entry['what']!r:.40}")
        if not isinstance(entry["rule"], str) or not entry["rule"]:
            raise error(f"{where}selection[{k}]['rule'] must be a non-empty string")
        if not isinstance(entry["from_true_counts"], bool):
            raise error(f"{where}selection[{k}]['from_true_counts'] must be true or false")
        eps = entry["epsilon"]
        if eps is not None and (isinstance(eps, bool) or not isinstance(eps, numbers.Real)
                                or not math.isfinite(eps) or eps <= 0):
            raise error(f"{where}selection[{k}]['epsilon'] must be None or a finite number > 0, "
                        f"got {eps!r:.40}")
        checked.append({"what": entry["what"], "rule": entry["rule"],
                        "from_true_counts": entry["from_true_counts"],
                        "epsilon": None if eps is None else float(eps)})
    return checked


def canonical_counts(data):
    """Prepared counts (a :class:`lpp.formats.counts.CountData`) in the order of the private
    folders made from them: rows and columns sorted by :func:`canonical_key`.

    The owners' evaluation scores fits of private folders against the true counts; those fits
    are in canonical order, so the truth must be too. The counts, the ids, every extra array
    of the matrix's shape (the held-out mask) and the network's per-actor records
    (``meta["actors"]``) are permuted alike; ``meta["order"]`` records :data:`ORDER`.
    Applying it twice changes nothing.

    Raises
    ------
    ValueError
        If an id repeats, or an extra array does not have the matrix's shape (no rule says
        how to order it).
    """
    rows = canonical_order(data.row_ids, "row ids")
    cols = canonical_order(data.column_ids, "column ids")
    shape = tuple(data.counts.shape)
    arrays = {}
    for name, array in data.arrays.items():
        if tuple(np.shape(array)) != shape:
            raise ValueError(f"extra array {name!r} has shape {np.shape(array)}, not the "
                             f"matrix's {shape}: no rule puts it in canonical order")
        arrays[name] = np.asarray(array)[np.ix_(rows, cols)]
    counts = data.counts[rows][:, cols]
    if hasattr(counts, "sort_indices"):
        counts = counts.tocsr()
        counts.sort_indices()
    meta = {**data.meta, "order": ORDER,
            "row_ids": [data.row_ids[k] for k in rows],
            "column_ids": [data.column_ids[k] for k in cols]}
    actors = data.meta.get("actors")
    if isinstance(actors, list) and len(actors) == shape[0]:
        meta["actors"] = [actors[k] for k in rows]
    return dataclasses.replace(data, counts=counts, row_ids=meta["row_ids"],
                               column_ids=meta["column_ids"], meta=meta, arrays=arrays)


def _smallest_signed(y_tilde: np.ndarray) -> np.ndarray:
    low, high = (int(y_tilde.min()), int(y_tilde.max())) if y_tilde.size else (0, 0)
    for dtype in _SIGNED_TYPES:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return y_tilde.astype(dtype, copy=False)
    raise AssertionError("unreachable: int64 holds every privatized count")


def _seed_key(seed):
    """A seed as a key of ``numpy.random.default_rng``: an int or a non-empty list of ints."""
    if isinstance(seed, (list, tuple)) and seed:
        return [non_negative_int(s, "seed") for s in seed]
    return non_negative_int(seed, "seed")


#: where the noise of a privatized data set came from (``meta.json``'s ``randomness``):
#: the operating system's entropy, recorded nowhere; a secret key of the owners'; or a seed of
#: a simulation study, which whoever holds it can regenerate (not a private release)
RANDOMNESS = ("system", "secret key", "simulation")
#: what the format's version 3 recorded for any seed, guessable or not: read as a simulation
LEGACY_SEEDED = "seeded"
#: the smallest secret key taken for a private release: an analyst who tries seeds 0, 1, 2, ...
#: (thousands a second) reaches every smaller one. A key of 128 random bits
#: (``secrets.randbits(128)``) lies below it with probability 2**-32
MIN_SECRET_KEY = 2**96
#: what a simulation folder's readers are told, once per folder and process
SIMULATION_NOTICE = ("noise reproducible by whoever holds the seed: a simulation, not a "
                     "private release")


class SimulationWarning(UserWarning):
    """A private folder's noise came from a simulation's seed: whoever holds the seed
    regenerates the noise and removes it, so the folder is not a private release."""


def noise_source(seed, *, exact: bool, simulation: bool = False):
    """The random source of the noise, and its ``randomness`` label, for a ``seed``.

    ``seed=None`` gives system randomness, recorded nowhere: the exact sampler reads the
    operating system's CSPRNG bit by bit (``"system"``), the fast sampler a numpy Generator
    seeded from the operating system's entropy. A seed gives a reproducible stream, which
    whoever holds the seed can regenerate and subtract: with ``simulation=True`` any seed is
    taken and labelled ``"simulation"`` (the folder then says it is not a private release);
    otherwise the seed must be a secret key (:func:`check_secret_key`), labelled
    ``"secret key"``.

    Raises
    ------
    ValueError
        For a guessable seed without ``simulation=True``, or ``simulation=True`` without a
        seed.
    """
    if not isinstance(simulation, (bool, np.bool_)):
        raise TypeError(f"simulation must be True or False, got {simulation!r}")
    if seed is None:
        if simulation:
            raise ValueError("simulation=True declares noise that a seed reproduces, but no seed "
                             "was given: pass seed=, or drop simulation for system randomness")
        return ("system" if exact else np.random.default_rng()), "system"
    key = _seed_key(seed)
    if not simulation:
        check_secret_key(key)
    return np.random.default_rng(key), ("simulation" if simulation else "secret key")


def check_secret_key(seed) -> None:
    """Refuse a noise seed an analyst could guess, for a release that is not a simulation.

    The secret part of a seed is the seed itself, or the first entry of a list of ints
    (:func:`noise_seed` puts the owners' base seed there; the other entries — the copy, the
    level, the data set — are public). It must be at least :data:`MIN_SECRET_KEY`: a private
    folder states everything else in the key, so a small seed is found by trying seeds in
    order, and with it every true count.
    """
    secret = seed[0] if isinstance(seed, (list, tuple)) else seed
    if int(secret) < MIN_SECRET_KEY:
        raise ValueError(
            f"seed {int(secret)} can be guessed: the private folder states every other part of "
            "the noise's key, so an analyst who tries seeds 0, 1, 2, ... regenerates the noise "
            "and removes it. For real data leave seed=None (system randomness, recorded "
            "nowhere). For a reproducible release keep a secret key of 128 random bits from the "
            "analyst (seed=secrets.randbits(128); keys below 2**96 are refused). For a "
            "simulation study pass simulation=True: the folder then states that its noise is "
            "reproducible by whoever holds the seed, not a private release")


def is_simulation(meta: dict) -> bool:
    """Whether a private folder's ``meta.json`` says its noise came from a simulation's seed
    (``randomness: simulation``, or ``seeded`` in the format's version 3, which took any
    seed)."""
    return meta.get("randomness") in ("simulation", LEGACY_SEEDED)


_NOTIFIED: set = set()


def notify_simulation(meta: dict, path) -> None:
    """Warn (:class:`SimulationWarning`) that the folder at ``path`` is a simulation, once per
    folder and release in this process; nothing for a private release."""
    if not is_simulation(meta):
        return
    key = (str(Path(path).absolute()), meta.get("ledger", {}).get("release_sha256"))
    if key in _NOTIFIED:
        return
    _NOTIFIED.add(key)
    warnings.warn(f"{path}: {SIMULATION_NOTICE}", SimulationWarning, stacklevel=3)


#: a privacy level written with at most six decimals enters its copy's seed key in millionths
#: (3.0 -> 3000000); any other level by its bits (:func:`level_key`)
LEVEL_KEY_SCALE = 1_000_000


def level_key(epsilon_over_n: float) -> int:
    """The integer by which a privacy level enters a copy's seed key: one per distinct level.

    A level that is the float nearest a multiple of 1e-6 (what a decimal with at most six
    places reads as) gives its number of millionths; any other level gives ``2**64`` plus its
    IEEE-754 bits, above every number of millionths, so that two levels never share a key (and
    therefore never share their noise), however close they are.
    """
    level = float(epsilon_over_n)
    millionths = round(level * LEVEL_KEY_SCALE)
    if millionths < 2**63 and millionths / LEVEL_KEY_SCALE == level:
        return millionths
    return 2**64 + struct.unpack("<Q", struct.pack("<d", level))[0]


def noise_seed(seed, replicate, epsilon_over_n, dataset: str) -> list[int] | None:
    """The seed key of one privatized copy: ``[seed, replicate, level key, data set key]``, or
    None.

    Every (base seed, replicate, privacy level, data set) gets its own noise stream, so copies
    at different levels or replicates, and copies of different data sets noised under one base
    seed, are independent; the same four values always give the same copy. Without the data
    set in the key, two matrices noised at the same level and replicate would share their
    random numbers, and whoever holds one of them would learn the other's noise. The level
    enters as :func:`level_key` (its millionths, or its bits), the data set as the integer of its
    :func:`dataset_id` digest (a digest of the row and column ids, which the private folder
    holds anyway). A ``seed`` of ``"system"`` (or None) stands for system randomness and gives
    None, which :func:`privatize_counts` reads the same way.

    Parameters
    ----------
    seed : int, "system" or None
        The data owners' base seed (>= 0), or ``"system"``.
    replicate : int
        Which privatized copy at this level (>= 0).
    epsilon_over_n : float
        The privacy level epsilon / N (> 0, finite).
    dataset : str
        :func:`dataset_id` of the counts' row and column ids.

    Returns
    -------
    list of int or None
        A key for ``numpy.random.default_rng`` (``privatize_counts(seed=...)``); None for
        system randomness.

    Raises
    ------
    TypeError
        If ``seed`` or ``replicate`` is not an integer, or ``epsilon_over_n`` not a number.
    ValueError
        If ``seed`` or ``replicate`` is negative, ``epsilon_over_n`` is not positive and
        finite, or ``dataset`` is not a :func:`dataset_id`.
    """
    system = seed is None or seed == "system"
    if not system and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise TypeError(f'seed must be an integer or "system", got {seed!r}')
    seed = None if system else non_negative_int(seed, "seed")
    replicate = non_negative_int(replicate, "replicate")
    if isinstance(epsilon_over_n, bool) or not isinstance(epsilon_over_n, numbers.Real):
        raise TypeError(f"epsilon_over_n must be a number, got {epsilon_over_n!r}")
    if not (math.isfinite(epsilon_over_n) and epsilon_over_n > 0):
        raise ValueError(f"epsilon_over_n (the privacy level epsilon / N) must be positive "
                         f"and finite, got {epsilon_over_n}")
    if not (isinstance(dataset, str) and _DATASET_ID.fullmatch(dataset)):
        raise ValueError(f"dataset must be lpp.formats.privatized.dataset_id of the counts' "
                         f"row and column ids ('ids-sha256:' and 64 hex digits), got "
                         f"{dataset!r}")
    if system:
        return None
    return [int(seed), int(replicate), level_key(epsilon_over_n),
            int(dataset.removeprefix(_DATASET_PREFIX), 16)]


#: the mechanisms a privatized folder may record
MECHANISMS = ("fast", "exact")

#: how far a folder's ``epsilon_over_n`` may sit from the ``-log(alpha)`` of its noisiest
#: row, relative: exp and log round, and the exact sampler's rational level is rounded to a
#: float alpha
LEVEL_RTOL = 1e-9


def check_release_settings(epsilon, N, mechanism, source) -> tuple[float, float]:
    """``(epsilon, N)`` as floats, after refusing settings a private folder cannot record or
    its reader would refuse: ``epsilon`` and ``N`` positive finite real numbers (not bools;
    the exact sampler's rationals are converted by :func:`privatize_counts`), ``mechanism``
    one of :data:`MECHANISMS`, ``source`` a non-empty str. Called before anything is written,
    so a bad setting never replaces a good folder."""
    values = []
    for name, value in (("epsilon", epsilon), ("N", N)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {value!r}")
        if not (math.isfinite(float(value)) and float(value) > 0.0):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        values.append(float(value))
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    if not isinstance(source, str) or not source:
        raise TypeError(f"source must be a non-empty str (where the counts come from), got "
                        f"{source!r}")
    return values[0], values[1]


def noisiest_level(alpha) -> float:
    """The privacy loss per unit of count of the least noised row: ``-log(min(alpha))``."""
    return float(-np.log(np.min(alpha)))


def check_level(alpha, epsilon_over_n: float, error=ValueError, where: str = "",
                bound_only: bool = False) -> None:
    """Refuse a recorded ``epsilon_over_n`` that is not the privacy loss of the noise
    ``alpha`` holds: the ledger adds up the recorded levels, so a level below the noise's
    would be a false privacy claim, and one above it mislabels the release.

    ``epsilon_over_n`` must equal :func:`noisiest_level` (within :data:`LEVEL_RTOL`); with
    ``bound_only`` (one block of a folder whose other blocks are elsewhere) it must only not
    be exceeded.
    """
    loss = noisiest_level(alpha)
    slack = LEVEL_RTOL * max(1.0, epsilon_over_n)
    if loss > epsilon_over_n + slack or (not bound_only and loss < epsilon_over_n - slack):
        raise error(f"{where}the noise level alpha (its least noised row: epsilon/N = "
                    f"-log(alpha) = {loss:.12g}) is not the recorded epsilon/N = "
                    f"{epsilon_over_n:.12g}: a private folder records the privacy loss of its "
                    "own noise")


def _owns(name: str) -> bool:
    return name in (DATA_FILE, META_FILE)


def _refuse_masked(values, name):
    if isinstance(values, np.ma.MaskedArray):
        raise TypeError(f"{name} is a numpy.ma masked array, and a privatized data set has no "
                        "missing entries: privatize and save the observed matrix (entries "
                        "held out of inference go in heldout=)")


def _check_copy(copy, error=ValueError, where: str = ""):
    if copy is None:
        return None
    if isinstance(copy, bool) or not isinstance(copy, numbers.Integral) or copy < 0:
        raise error(f"{where}copy (the replicate) must be None or an integer >= 0, got {copy!r}")
    return int(copy)


def save_privatized(out_dir, y_tilde, alpha, *, epsilon, N, randomness: str, mechanism: str,
                    source: str, row_ids, column_ids, heldout=None, copy=None,
                    selection=None) -> Path:
    """Write a privatized data set (``y_tilde.npz`` and ``meta.json``) as a whole folder.

    ``randomness`` (one of :data:`RANDOMNESS`: ``"system"``, ``"secret key"`` or
    ``"simulation"``) says where the noise came from; there is deliberately no argument for the
    seed itself. ``row_ids`` and ``column_ids`` must be
    distinct and in canonical order (:func:`canonical_order`; ValueError otherwise), so that
    the order of the rows and columns says nothing of the counts. ``copy`` is the replicate
    (None: the one copy) and ``selection`` how the rows, columns and held-out mask were chosen
    (:func:`check_selection`; None: not stated); both go to the ledger with
    :func:`dataset_id` and :func:`release_sha256`. The folder is built beside ``out_dir`` and
    swapped in by a rename (:func:`lpp.formats.files.atomic_folder`): on any failure
    ``out_dir`` is left as it was; an existing ``out_dir`` that holds files other than these
    two is refused. A ``numpy.ma`` masked array is refused (TypeError).
    """
    if randomness not in RANDOMNESS:
        raise ValueError(f"randomness must be one of {RANDOMNESS}, got {randomness!r}")
    epsilon, N = check_release_settings(epsilon, N, mechanism, source)
    _refuse_masked(y_tilde, "y_tilde")
    y_tilde = np.asarray(y_tilde)
    if y_tilde.ndim != 2 or y_tilde.dtype.kind not in "iu":
        raise ValueError(f"y_tilde must be a 2-d integer matrix, got {y_tilde.dtype} "
                         f"with shape {y_tilde.shape}")
    n_rows, n_cols = y_tilde.shape
    if (len(row_ids), len(column_ids)) != (n_rows, n_cols):
        raise ValueError(f"{len(row_ids)} row ids and {len(column_ids)} column ids for a "
                         f"{y_tilde.shape} matrix")
    row_ids, column_ids = [str(r) for r in row_ids], [str(c) for c in column_ids]
    _check_canonical(row_ids, "row ids")
    _check_canonical(column_ids, "column ids")
    copy = _check_copy(copy)
    selection = check_selection(selection)
    alpha = noise_level_array(alpha)
    if alpha.shape not in ((), (n_rows, 1)):
        raise ValueError(f"alpha must be a scalar or have shape ({n_rows}, 1), got {alpha.shape}")
    check_level(alpha, epsilon / N)
    arrays = {"y_tilde": _smallest_signed(y_tilde), "alpha": alpha}
    if heldout is not None:
        heldout = np.asarray(heldout)
        if heldout.shape != y_tilde.shape or heldout.dtype != np.bool_:
            raise ValueError(f"heldout must be a boolean {y_tilde.shape} matrix, got "
                             f"{heldout.dtype} {heldout.shape}")
        arrays["heldout"] = heldout
    meta = {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION,
        "shape": [n_rows, n_cols], "data_file": DATA_FILE, "data_sha256": None,
        "epsilon": epsilon, "N": N, "epsilon_over_n": epsilon / N,
        "mechanism": mechanism, "randomness": randomness, "source": source,
        "has_heldout": heldout is not None, "order": ORDER,
        "ledger": {"dataset_id": dataset_id(row_ids, column_ids), "copy": copy,
                   "release_sha256": release_sha256(y_tilde, alpha)},
        "selection": selection,
        "row_ids": row_ids, "column_ids": column_ids,
    }
    payload = npz_bytes(arrays)
    with atomic_folder(out_dir, owns=_owns) as tmp:
        write_verified(tmp, payload, meta, meta_file=META_FILE, file_key="data_file",
                       sha_key="data_sha256")
    return Path(out_dir)


def check_noise_level(alpha: np.ndarray, name: str, path) -> np.ndarray:
    """``alpha`` read from ``path``, checked as a noise level (a FormatError naming both)."""
    try:
        return noise_level_array(alpha, name)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"{path}: array {name!r}: {exc}") from None


def check_meta_settings(meta: dict, path) -> None:
    """The mechanism's settings recorded in a private folder's ``meta.json`` at ``path``."""
    epsilon = meta_field(meta, "epsilon", path, "number")
    n = meta_field(meta, "N", path, "number")
    if meta_field(meta, "epsilon_over_n", path, "number") != float(epsilon) / float(n):
        raise FormatError(f"{path}: field 'epsilon_over_n' ({meta['epsilon_over_n']!r}) is not "
                          f"epsilon / N ({epsilon!r} / {n!r})")
    meta_field(meta, "mechanism", path, "str", choices=MECHANISMS)
    meta_field(meta, "randomness", path, "str",
               choices=RANDOMNESS if meta["format_version"] == FORMAT_VERSION
               else ("system", LEGACY_SEEDED))
    meta_field(meta, "source", path, "str")


def check_meta_release(meta: dict, path, row_ids, column_ids) -> dict:
    """The order, ledger and selection recorded in a private folder's ``meta.json``: the ids
    in canonical order, ``ledger.dataset_id`` the digest of these ids, ``ledger.copy`` None or
    an integer, ``ledger.release_sha256`` a hex digest (the caller compares it with the data),
    ``selection`` as :func:`check_selection` takes it. Returns the ledger."""
    meta_field(meta, "order", path, "str", choices=(ORDER,))
    _check_canonical(row_ids, "field 'row_ids': the row ids", FormatError, f"{path}: ")
    _check_canonical(column_ids, "field 'column_ids': the column ids", FormatError, f"{path}: ")
    ledger = meta_field(meta, "ledger", path, "dict")
    where = f"{path} (ledger)"
    if set(ledger) != {"dataset_id", "copy", "release_sha256"}:
        raise FormatError(f"{where}: must hold exactly dataset_id, copy and release_sha256, got "
                          f"{sorted(ledger)}")
    if meta_field(ledger, "dataset_id", where, "str") != dataset_id(row_ids, column_ids):
        raise FormatError(f"{where}: field 'dataset_id' is not the digest of the folder's ids")
    _check_copy(ledger["copy"], FormatError, f"{where}: ")
    digest = meta_field(ledger, "release_sha256", where, "str")
    if not is_sha256_hex(digest):
        raise FormatError(f"{where}: field 'release_sha256' must be a sha256 hex digest")
    if "selection" not in meta:
        raise FormatError(f"{path}: field 'selection' is missing")
    check_selection(meta["selection"], FormatError, f"{path}: field 'selection': ")
    return ledger


def load_privatized_meta(path) -> dict:
    """A private folder's ``meta.json``, checked as :func:`load_privatized` checks it, without
    reading the data (the ledger's ``release_sha256`` is not compared with the payload: use
    :func:`load_privatized` for that). What :func:`lpp.formats.ledger.read_release` reads."""
    meta, meta_path = read_meta(path, meta_file=META_FILE, format_name=FORMAT_NAME,
                                format_version=READ_VERSIONS)
    known_fields(meta, meta_path, META_FIELDS)
    n_rows, n_cols = meta_field(meta, "shape", meta_path, "int_list", length=2)
    row_ids = meta_field(meta, "row_ids", meta_path, "str_list", length=n_rows)
    column_ids = meta_field(meta, "column_ids", meta_path, "str_list", length=n_cols)
    meta_field(meta, "has_heldout", meta_path, "bool")
    check_meta_settings(meta, meta_path)
    check_meta_release(meta, meta_path, row_ids, column_ids)
    notify_simulation(meta, meta_path.parent)
    return meta


def load_privatized(path) -> PrivatizedData:
    """Load and validate a privatized directory (or its ``meta.json``).

    A folder whose noise came from a simulation's seed (:func:`is_simulation`) is read, with a
    :class:`SimulationWarning` the first time this process reads it.

    Raises
    ------
    lpp.formats.files.MissingFileError
        No ``meta.json`` at ``path`` (also a ``FileNotFoundError``), or no data file.
    lpp.formats.files.FormatError
        Anything else that is not as this format writes it, naming the file and the field:
        another format or version, a data file outside the folder or not matching its
        sha256, a payload that is not an integer matrix of the recorded shape, ids whose
        number disagrees with it or that are not in canonical order, a ledger whose digests
        do not match the ids and the payload, a selection of another form, an alpha outside
        (0, 1), a held-out mask that is not a boolean matrix of that shape, arrays the format
        never holds.
    """
    return _load_privatized(path, notify=True)


def _load_privatized(path, *, notify: bool) -> PrivatizedData:
    meta, data_path, payload = read_verified(
        path, meta_file=META_FILE, format_name=FORMAT_NAME, format_version=READ_VERSIONS,
        file_key="data_file", sha_key="data_sha256")
    meta_path = data_path.parent / META_FILE
    known_fields(meta, meta_path, META_FIELDS)
    n_rows, n_cols = meta_field(meta, "shape", meta_path, "int_list", length=2)
    row_ids = meta_field(meta, "row_ids", meta_path, "str_list", length=n_rows)
    column_ids = meta_field(meta, "column_ids", meta_path, "str_list", length=n_cols)
    has_heldout = meta_field(meta, "has_heldout", meta_path, "bool")
    check_meta_settings(meta, meta_path)
    ledger = check_meta_release(meta, meta_path, row_ids, column_ids)
    arrays = read_npz(payload, data_path, required=("y_tilde", "alpha")
                      + (("heldout",) if has_heldout else ()),
                      expect={"y_tilde": ("iu", [(n_rows, n_cols)]),
                              "alpha": ("iuf", [(), (n_rows, 1)]),
                              "heldout": ("b", [(n_rows, n_cols)])})
    y_tilde = integer_member(arrays, "y_tilde", data_path, shape=(n_rows, n_cols))
    alpha = check_noise_level(finite_member(arrays, "alpha", data_path), "alpha", data_path)
    if alpha.shape not in ((), (n_rows, 1)):
        raise FormatError(f"{data_path}: array 'alpha' has shape {alpha.shape}, expected () or "
                          f"({n_rows}, 1)")
    check_level(alpha, meta["epsilon_over_n"], FormatError, f"{meta_path} and {data_path}: ")
    if release_sha256(y_tilde, alpha) != ledger["release_sha256"]:
        raise FormatError(f"{meta_path} (ledger): field 'release_sha256' does not match "
                          f"{data_path}'s y_tilde and alpha")
    heldout = None
    if has_heldout:
        heldout = arrays["heldout"]
        if heldout.dtype != np.bool_ or heldout.shape != (n_rows, n_cols):
            raise FormatError(f"{data_path}: array 'heldout' must be a boolean "
                              f"{(n_rows, n_cols)} matrix, got {heldout.dtype} {heldout.shape}")
    if notify:
        notify_simulation(meta, meta_path.parent)
    return PrivatizedData(y_tilde=y_tilde, alpha=float(alpha) if alpha.ndim == 0 else alpha,
                          heldout=heldout, row_ids=row_ids, column_ids=column_ids, meta=meta)


def _permuted(values, rows, cols):
    """``values[rows][:, cols]`` for a dense array, a scipy sparse matrix or anything
    ``numpy.asarray`` reads (a sparse matrix stays sparse)."""
    if hasattr(values, "tocsr") and hasattr(values, "nnz"):
        return values.tocsr()[rows][:, cols]
    return np.asarray(values)[np.ix_(rows, cols)]


def privatize_counts(counts, out_dir, *, epsilon, N, source: str, row_ids, column_ids,
                     heldout=None, exact: bool = False, seed=None, simulation: bool = False,
                     copy=None, selection=None) -> PrivatizedData:
    """Noise true ``counts`` with the geometric mechanism and save the result.

    This is the data owners' side of the boundary: each entry gets independent
    ``2Geo(exp(-epsilon/N))`` noise. ``exact=True`` uses the integer-only sampler (epsilon and
    N are then read as exact rationals); the default is the fast floating-point one.

    The rows and columns (their ids, the counts and ``heldout``) are first put in canonical
    order (:func:`canonical_order`; ids must be distinct), and the noise is drawn in that
    order: the folder is the same whatever order the owners kept their counts in, and its
    order tells the analyst nothing of them. Map it back by the ids.

    ``seed=None`` (the default) draws the noise from system randomness and keeps no trace of
    it: use it for real data. An int or a list of ints (e.g. :func:`noise_seed`) makes the
    noise reproducible, and anyone who learns that seed can remove the noise, so it is never
    written to the output (see :func:`noise_source`): without ``simulation`` the seed must be a
    secret key of the owners' (at least :data:`MIN_SECRET_KEY`, e.g.
    ``secrets.randbits(128)``; a guessable seed is refused); ``simulation=True`` takes any seed
    and the folder states that it is a simulation, not a private release (its readers say so).
    ``exact=True`` with ``seed=None`` is the setting for a formal privacy claim. ``copy`` (the replicate)
    and ``selection`` (how rows, columns and mask were chosen) go to the ledger
    (:func:`save_privatized`).
    Returns what :func:`load_privatized` would read back. A ``numpy.ma`` masked array is
    refused (TypeError): the format has no missing entries.
    """
    _refuse_masked(counts, "counts")
    shape = tuple(np.shape(counts)) if not hasattr(counts, "nnz") else tuple(counts.shape)
    if len(shape) != 2 or shape != (len(row_ids), len(column_ids)):
        raise ValueError(f"{len(row_ids)} row ids and {len(column_ids)} column ids for counts "
                         f"of shape {shape}")
    rows = canonical_order(row_ids, "row ids")
    cols = canonical_order(column_ids, "column ids")
    counts = _permuted(counts, rows, cols)
    row_ids = [str(row_ids[k]) for k in rows]
    column_ids = [str(column_ids[k]) for k in cols]
    if heldout is not None:
        heldout = np.asarray(heldout)
        if heldout.shape != shape:
            raise ValueError(f"heldout must be a boolean {shape} matrix, got {heldout.dtype} "
                             f"{heldout.shape}")
        heldout = heldout[np.ix_(rows, cols)]
    copy = _check_copy(copy)
    selection = check_selection(selection)
    if exact:  # the exact sampler reads rationals ("1/3"); the folder records their floats
        alpha_exact = exact_alpha(epsilon, N)
        epsilon, N = (float(Fraction(x)) if isinstance(x, (str, Decimal)) else x
                      for x in (epsilon, N))
    epsilon, N = check_release_settings(epsilon, N, "exact" if exact else "fast", source)
    rng, randomness = noise_source(seed, exact=exact, simulation=simulation)
    if exact:
        y_tilde = privatize(counts, alpha_exact, rng=rng, exact=True)
        alpha = float(alpha_exact)
    else:
        alpha = float(alpha_from_epsilon(epsilon, N))
        y_tilde = privatize(counts, alpha, rng=rng)
    save_privatized(out_dir, y_tilde, alpha, epsilon=epsilon, N=N, randomness=randomness,
                    mechanism="exact" if exact else "fast", source=source, row_ids=row_ids,
                    column_ids=column_ids, heldout=heldout, copy=copy, selection=selection)
    return _load_privatized(out_dir, notify=False)  # its writer declared what it is
