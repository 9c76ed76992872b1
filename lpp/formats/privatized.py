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
    ``"system"`` or ``"seeded"``, never the seed itself), the row and column ids, the sha256 of
    ``y_tilde.npz``, and the name of the data set it was made from (never its content).

A privatized directory is written whole or not at all: :func:`save_privatized` builds it
beside its target and swaps it in by a rename (:func:`lpp.formats.files.atomic_folder`), so a
failed or killed write leaves the previous folder as it was, and a rewrite leaves nothing of
the previous one (two noisy copies of the same counts, averaged, would halve the noise's
variance). The folder holds only these two files: an existing folder holding anything else is
not replaced.

:func:`load_privatized` trusts nothing in the folder (its sha256 catches damage, not a forgery
that recomputed it): the payload must be integers (a float is refused, never truncated), the
ids must fit the shape, the data file must lie in the folder (no ``..``, no absolute path, no
link out of it), ``alpha`` must be a valid noise level; every refusal is a
:class:`lpp.formats.files.FormatError` (a ``ValueError``) naming the file and the field.

The true counts never enter this format, by construction: :func:`save_privatized` has no
argument for them, and :func:`privatize_counts` is the one function that reads true counts
and writes this format (the data owners' side of the boundary). The held-out mask of the
link-prediction experiment depends on the true counts through the identity of the top
senders and recipients; the paper treats it as part of the experimental design, and so do
we (docs/pipeline.md, *Who sees what*).

Whoever holds the noise seed can regenerate the noise and subtract it, so the seed is the data
owners' secret: nothing in this format records it. By default the noise comes from the
operating system's entropy and is recorded nowhere. A seed (``seed=``) makes the noise
reproducible, which a simulation study needs and a deployment must not use.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lpp.validation import noise_level_array, non_negative_int
from lpp.formats.files import (FormatError, atomic_folder, finite_member, integer_member,
                               meta_field, npz_bytes, read_npz, read_verified, write_verified)
from lpp.mechanism import alpha_from_epsilon, exact_alpha, privatize

FORMAT_NAME = "lpp.formats.privatized"
FORMAT_VERSION = 2  # 1 recorded the noise seed (a leak); such folders are refused
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


#: where the noise of a privatized data set came from (``meta.json``'s ``randomness``)
RANDOMNESS = ("system", "seeded")


def noise_source(seed, *, exact: bool):
    """The random source of the noise, and its ``randomness`` label, for a ``seed``.

    ``seed=None`` gives system randomness, recorded nowhere: the exact sampler reads the
    operating system's CSPRNG bit by bit (``"system"``), the fast sampler a numpy Generator
    seeded from the operating system's entropy. An int or a list of ints gives a reproducible
    stream (``"seeded"``): a simulation device, since whoever holds the seed can regenerate the
    noise and remove it.
    """
    if seed is None:
        return ("system" if exact else np.random.default_rng()), "system"
    return np.random.default_rng(_seed_key(seed)), "seeded"


#: a privacy level enters its copy's seed key in millionths (3.0 -> 3000000)
LEVEL_KEY_SCALE = 1_000_000


def noise_seed(seed, replicate, epsilon_over_n) -> list[int] | None:
    """The seed key of one privatized copy: ``[seed, replicate, level key]``, or None.

    Every (base seed, replicate, privacy level) gets its own noise stream, so copies at
    different levels or replicates are independent, and the same three values always give
    the same copy. The level enters as ``round(epsilon_over_n * 1e6)``. A ``seed`` of
    ``"system"`` (or None) stands for system randomness and gives None, which
    :func:`privatize_counts` reads the same way.

    Parameters
    ----------
    seed : int, "system" or None
        The data owners' base seed (>= 0), or ``"system"``.
    replicate : int
        Which privatized copy at this level (>= 0).
    epsilon_over_n : float
        The privacy level epsilon / N (> 0, finite).

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
        If ``seed`` or ``replicate`` is negative, or ``epsilon_over_n`` is not positive and
        finite.
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
    if system:
        return None
    return [int(seed), int(replicate), int(round(epsilon_over_n * LEVEL_KEY_SCALE))]


#: the mechanisms a privatized folder may record
MECHANISMS = ("fast", "exact")


def _owns(name: str) -> bool:
    return name in (DATA_FILE, META_FILE)


def _refuse_masked(values, name):
    if isinstance(values, np.ma.MaskedArray):
        raise TypeError(f"{name} is a numpy.ma masked array, and a privatized data set has no "
                        "missing entries: privatize and save the observed matrix (entries "
                        "held out of inference go in heldout=)")


def save_privatized(out_dir, y_tilde, alpha, *, epsilon, N, randomness: str, mechanism: str,
                    source: str, row_ids, column_ids, heldout=None) -> Path:
    """Write a privatized data set (``y_tilde.npz`` and ``meta.json``) as a whole folder.

    ``randomness`` (``"system"`` or ``"seeded"``) says where the noise came from; there is
    deliberately no argument for the seed itself. The folder is built beside ``out_dir`` and
    swapped in by a rename (:func:`lpp.formats.files.atomic_folder`): on any failure
    ``out_dir`` is left as it was; an existing ``out_dir`` that holds files other than these
    two is refused. A ``numpy.ma`` masked array is refused (TypeError).
    """
    if randomness not in RANDOMNESS:
        raise ValueError(f"randomness must be one of {RANDOMNESS}, got {randomness!r}")
    _refuse_masked(y_tilde, "y_tilde")
    y_tilde = np.asarray(y_tilde)
    if y_tilde.ndim != 2 or y_tilde.dtype.kind not in "iu":
        raise ValueError(f"y_tilde must be a 2-d integer matrix, got {y_tilde.dtype} "
                         f"with shape {y_tilde.shape}")
    n_rows, n_cols = y_tilde.shape
    if (len(row_ids), len(column_ids)) != (n_rows, n_cols):
        raise ValueError(f"{len(row_ids)} row ids and {len(column_ids)} column ids for a "
                         f"{y_tilde.shape} matrix")
    alpha = noise_level_array(alpha)
    if alpha.shape not in ((), (n_rows, 1)):
        raise ValueError(f"alpha must be a scalar or have shape ({n_rows}, 1), got {alpha.shape}")
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
        "epsilon": float(epsilon), "N": float(N), "epsilon_over_n": float(epsilon) / float(N),
        "mechanism": mechanism, "randomness": randomness, "source": str(source),
        "has_heldout": heldout is not None,
        "row_ids": [str(r) for r in row_ids], "column_ids": [str(c) for c in column_ids],
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
    meta_field(meta, "randomness", path, "str", choices=RANDOMNESS)
    meta_field(meta, "source", path, "str")


def load_privatized(path) -> PrivatizedData:
    """Load and validate a privatized directory (or its ``meta.json``).

    Raises
    ------
    lpp.formats.files.MissingFileError
        No ``meta.json`` at ``path`` (also a ``FileNotFoundError``), or no data file.
    lpp.formats.files.FormatError
        Anything else that is not as this format writes it, naming the file and the field:
        another format or version, a data file outside the folder or not matching its
        sha256, a payload that is not an integer matrix of the recorded shape, ids whose
        number disagrees with it, an alpha outside (0, 1), a held-out mask that is not a
        boolean matrix of that shape, arrays the format never holds.
    """
    meta, data_path, payload = read_verified(
        path, meta_file=META_FILE, format_name=FORMAT_NAME, format_version=FORMAT_VERSION,
        file_key="data_file", sha_key="data_sha256")
    meta_path = data_path.parent / META_FILE
    n_rows, n_cols = meta_field(meta, "shape", meta_path, "int_list", length=2)
    row_ids = meta_field(meta, "row_ids", meta_path, "str_list", length=n_rows)
    column_ids = meta_field(meta, "column_ids", meta_path, "str_list", length=n_cols)
    has_heldout = meta_field(meta, "has_heldout", meta_path, "bool")
    check_meta_settings(meta, meta_path)
    arrays = read_npz(payload, data_path, required=("y_tilde", "alpha")
                      + (("heldout",) if has_heldout else ()))
    y_tilde = integer_member(arrays, "y_tilde", data_path, shape=(n_rows, n_cols))
    alpha = check_noise_level(finite_member(arrays, "alpha", data_path), "alpha", data_path)
    if alpha.shape not in ((), (n_rows, 1)):
        raise FormatError(f"{data_path}: array 'alpha' has shape {alpha.shape}, expected () or "
                          f"({n_rows}, 1)")
    heldout = None
    if has_heldout:
        heldout = arrays["heldout"]
        if heldout.dtype != np.bool_ or heldout.shape != (n_rows, n_cols):
            raise FormatError(f"{data_path}: array 'heldout' must be a boolean "
                              f"{(n_rows, n_cols)} matrix, got {heldout.dtype} {heldout.shape}")
    return PrivatizedData(y_tilde=y_tilde, alpha=float(alpha) if alpha.ndim == 0 else alpha,
                          heldout=heldout, row_ids=row_ids, column_ids=column_ids, meta=meta)


def privatize_counts(counts, out_dir, *, epsilon, N, source: str, row_ids, column_ids,
                     heldout=None, exact: bool = False, seed=None) -> PrivatizedData:
    """Noise true ``counts`` with the geometric mechanism and save the result.

    This is the data owners' side of the boundary: each entry gets independent
    ``2Geo(exp(-epsilon/N))`` noise. ``exact=True`` uses the integer-only sampler (epsilon and
    N are then read as exact rationals); the default is the fast floating-point one.

    ``seed=None`` (the default) draws the noise from system randomness and keeps no trace of
    it: use it for real data. An int or a list of ints (e.g. :func:`noise_seed`) makes the
    noise reproducible for simulation studies; anyone who learns that seed can remove the
    noise, so it is never written to the output (see :func:`noise_source`). ``exact=True``
    with ``seed=None`` is the setting for a formal privacy claim.
    Returns what :func:`load_privatized` would read back. A ``numpy.ma`` masked array is
    refused (TypeError): the format has no missing entries.
    """
    _refuse_masked(counts, "counts")
    rng, randomness = noise_source(seed, exact=exact)
    if exact:
        alpha_exact = exact_alpha(epsilon, N)
        y_tilde = privatize(counts, alpha_exact, rng=rng, exact=True)
        alpha = float(alpha_exact)
    else:
        alpha = float(alpha_from_epsilon(epsilon, N))
        y_tilde = privatize(counts, alpha, rng=rng)
    save_privatized(out_dir, y_tilde, alpha, epsilon=epsilon, N=N, randomness=randomness,
                    mechanism="exact" if exact else "fast", source=source, row_ids=row_ids,
                    column_ids=column_ids, heldout=heldout)
    return load_privatized(out_dir)
