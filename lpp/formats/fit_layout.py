"""The layout of a fit directory: what ``fit.npz`` and ``fit.json`` hold, and their typed record.

:mod:`lpp.formats.fits` describes the format; :mod:`lpp.formats.result` turns it into the
result type. This module writes the files from a fit's chains, reads them back checked, and
gives ``fit.json`` as a :class:`FitMetadata`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lpp.formats.files import (FormatError, finite_member, integer_member, meta_field,
                               npz_bytes, read_meta, read_npz, read_verified, write_verified)

FORMAT_NAME = "lpp.fit"
FORMAT_VERSION = 1
#: the format version of a fit of several chains
CHAINS_FORMAT_VERSION = 2
VERSIONS = (FORMAT_VERSION, CHAINS_FORMAT_VERSION)
DATA_FILE = "fit.npz"
META_FILE = "fit.json"
_SAMPLE_PREFIX = "samples__"
#: the per-chain fields of a version-2 ``fit.json`` (``chains``)
CHAIN_FIELDS = ("seed", "iterations_done", "interrupted", "n_saved", "seconds_total")
#: the arrays of every chain's record (and the samples, prefixed ``samples__``)
_ARRAYS = ("mu_hat", "log_joint", "saved_iterations", "iter_seconds")
#: the record of a fit of several chains saved without its diagnostics
NOT_DIAGNOSED = {"rhat_max": None, "unavailable": "not computed when the fit was saved "
                 "(save_fit(..., diagnostics=lpp.diagnostics.diagnostics_record(result)))"}


@dataclass(frozen=True)
class FitMetadata:
    """A fit's record (``fit.json``), typed: what it ran, on what, how, and what it saved.

    A fit read from disk (:meth:`lpp.formats.result.FitResult.load`) has the record its files
    hold; a fit in memory has the record its save would write, without ``data`` and ``extra``
    (``format_version`` None: not saved).

    Attributes
    ----------
    method : str
        The privacy step's name, ``"nonprivate"``, or the name a variational fit was saved under
        (``"collapsed_cavi"``).
    model : dict
        The model's ``params()`` (:func:`lpp.inference.model_from_params` rebuilds it).
    seeds : tuple of int
        Each chain's base seed (chain 0's repeats the fit with ``rng=``).
    n_iter, burn_in, thin : int
        The run's schedule.
    iterations_done : int
        Sweeps completed (the least over the chains).
    interrupted : bool
        Whether a chain was stopped by Ctrl-C.
    n_saved : int
        Saved samples (of chain 0).
    seconds_total : float
        Wall time of the run, all chains.
    engine, data_fingerprint : str or None
        The engine that ran the sweeps and the digest of the data, mask and noise levels the
        chains ran on; None where the fit did not record them.
    device : str
        ``"cpu"``, or the GPU that ran the sweeps.
    data : str or None
        What the fit was fitted to (the privatized folder, or the prepared counts).
    extra : dict
        The settings recorded with the fit (the privacy level, the design, a variational fit's
        own record); :attr:`epsilon_over_n`, :attr:`heldout_used`, :attr:`vi_method`,
        :attr:`converged` and :attr:`start_seconds` read the pipeline's.
    diagnostics : dict or None
        A fit of several chains: its convergence record (R-hat, ESS, verdicts).
    format_version : int or None
        1 (one chain) or 2 (several) as saved; None for a fit not saved.
    data_sha256 : str or None
        The sha256 of ``fit.npz`` as saved.
    """

    method: str
    model: dict
    seeds: tuple
    n_iter: int
    burn_in: int
    thin: int
    iterations_done: int
    interrupted: bool
    n_saved: int
    seconds_total: float
    engine: str | None = None
    data_fingerprint: str | None = None
    device: str = "cpu"
    data: str | None = None
    extra: dict = field(default_factory=dict)
    diagnostics: dict | None = None
    format_version: int | None = None
    data_sha256: str | None = None

    @property
    def n_chains(self) -> int:
        return len(self.seeds)

    @property
    def seed(self) -> int:
        """Chain 0's base seed: ``rng=seed`` repeats every chain."""
        return self.seeds[0]

    @property
    def epsilon_over_n(self) -> float | None:
        """The privacy level the data were privatized at, per entry, as recorded (None: not
        recorded, or a non-private fit)."""
        return self.extra.get("epsilon_over_n")

    @property
    def heldout_used(self) -> bool:
        """Whether the fit ran with the data's held-out mask (a fit that does not record it
        predates the unmasked design and was masked)."""
        return bool(self.extra.get("heldout_used", True))

    @property
    def vi_method(self) -> str | None:
        """The variational method a variational fit ran (None: a Gibbs fit)."""
        return self.extra.get("vi_method")

    @property
    def variational(self) -> bool:
        return self.vi_method is not None

    @property
    def converged(self) -> bool | None:
        """Whether a variational fit's optimiser converged (None: a Gibbs fit)."""
        value = self.extra.get("converged")
        return None if value is None else bool(value)

    @property
    def start_seconds(self) -> float | None:
        """Wall time of a variational fit's start (None: a Gibbs fit)."""
        value = self.extra.get("start_seconds")
        return None if value is None else float(value)

    @property
    def rhat_max(self) -> float:
        """The worst R-hat of a fit of several chains (NaN if none was computed)."""
        value = (self.diagnostics or {}).get("rhat_max")
        return math.nan if value is None else float(value)

    @classmethod
    def from_record(cls, meta: dict, path="fit.json") -> "FitMetadata":
        """The record of a ``fit.json`` object ``meta``, its fields checked (a
        :class:`lpp.formats.files.FormatError` naming ``path`` and the field)."""
        meta_field(meta, "method", path, "str")
        meta_field(meta, "model", path, "dict")
        chains = meta.get("chains")
        if meta.get("format_version") == CHAINS_FORMAT_VERSION or chains is not None:
            chains = _chain_records(meta, path)
        seeds = (tuple(int(c["seed"]) for c in chains) if chains
                 else (int(meta_field(meta, "seed", path, "int")),))
        extra = meta.get("extra") or {}
        if not isinstance(extra, dict):
            raise FormatError(f"{path}: field 'extra' must be an object")
        return cls(
            method=meta["method"], model=meta["model"], seeds=seeds,
            n_iter=meta_field(meta, "n_iter", path, "int"),
            burn_in=meta_field(meta, "burn_in", path, "int"),
            thin=meta_field(meta, "thin", path, "int"),
            iterations_done=meta_field(meta, "iterations_done", path, "int"),
            interrupted=meta_field(meta, "interrupted", path, "bool"),
            n_saved=meta_field(meta, "n_saved", path, "int"),
            seconds_total=float(meta.get("seconds_total") or 0.0),
            engine=meta.get("engine"), data_fingerprint=meta.get("data_fingerprint"),
            device=meta.get("device", "cpu"), data=meta.get("data"), extra=extra,
            diagnostics=meta.get("diagnostics"), format_version=meta.get("format_version"),
            data_sha256=meta.get("data_sha256"))


def _chain_records(meta: dict, path) -> list:
    """The ``chains`` of a version-2 ``fit.json``, checked against ``n_chains``."""
    chains = meta_field(meta, "chains", path, "any")
    if not (isinstance(chains, list) and chains and all(isinstance(c, dict) for c in chains)):
        raise FormatError(f"{path}: field 'chains' must be a non-empty list of objects")
    if meta_field(meta, "n_chains", path, "int") != len(chains):
        raise FormatError(f"{path}: field 'n_chains' is {meta['n_chains']}, but 'chains' "
                          f"lists {len(chains)}")
    for c, fields in enumerate(chains):
        for key in CHAIN_FIELDS:
            meta_field(fields, key, f"{path} (chains[{c}])")
    return chains


def jsonable(value):
    """``value`` as JSON holds it: numpy scalars and arrays as numbers and lists, NaN and
    infinity as None (strict JSON has neither)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def check_extra(extra) -> None:
    """A TypeError naming ``extra`` when it is not a dict of what JSON holds (numbers,
    strings, bools, None, lists and dicts of them; NaN and infinity are stored as null), so
    that the failure names the setting rather than surface from the JSON encoder."""
    if extra is None:
        return
    if not isinstance(extra, dict):
        raise TypeError(f"extra must be a dict of settings, got {type(extra).__name__}")
    try:
        json.dumps(jsonable(extra), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"extra must hold JSON values (numbers, strings, bools, None, lists "
                        f"and dicts of them): {exc}") from None


def chain_arrays(chain) -> dict:
    """The arrays ``fit.npz`` keeps of one chain (not its sampled counts ``y``)."""
    if chain.mu_hat is None:
        raise ValueError("the fit saved no sample (n_iter <= burn_in?): nothing to write")
    arrays = {"mu_hat": np.asarray(chain.mu_hat), "log_joint": chain.log_joint,
              "saved_iterations": chain.saved_iterations, "iter_seconds": chain.iter_seconds}
    arrays.update({_SAMPLE_PREFIX + name: value for name, value in chain.samples.items()
                   if name != "y"})
    return arrays


def chain_record(chain, data, extra) -> dict:
    """The ``fit.json`` of a fit of the one chain ``chain`` (format version 1)."""
    return {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "method": chain.method,
        "model": jsonable(chain.model), "seed": int(chain.seed), "n_iter": chain.n_iter,
        "burn_in": chain.burn_in, "thin": chain.thin,
        "iterations_done": chain.iterations_done, "interrupted": bool(chain.interrupted),
        "n_saved": chain.n_saved, "data": str(data), "data_file": DATA_FILE,
        "data_sha256": None,
        "seconds_total": float(np.nansum(chain.iter_seconds)),
        "extra": jsonable(extra or {}),
        **({"engine": chain.engine, "data_fingerprint": chain.data_fingerprint}
           if getattr(chain, "data_fingerprint", None) else {}),
        # recorded off the CPU only: a CPU fit's record is unchanged
        **({"device": chain.device} if getattr(chain, "device", "cpu") != "cpu" else {}),
    }


def fit_record(chains, data, extra, diagnostics) -> dict:
    """The ``fit.json`` of a fit of ``chains``: version 1 for one chain, 2 for several
    (chain 0's fields, with ``iterations_done`` the least, ``interrupted`` any chain's,
    ``seconds_total`` the sum, plus ``n_chains``, ``chains`` and ``diagnostics``)."""
    if len(chains) == 1:
        if diagnostics is not None:
            raise ValueError("diagnostics are recorded for a fit of several chains only")
        return chain_record(chains[0], data, extra)
    records = [chain_record(chain, data, extra) for chain in chains]
    meta = dict(records[0])
    meta.update(format_version=CHAINS_FORMAT_VERSION,
                iterations_done=min(m["iterations_done"] for m in records),
                interrupted=any(m["interrupted"] for m in records),
                seconds_total=float(sum(m["seconds_total"] for m in records)),
                n_chains=len(records),
                chains=[{k: m[k] for k in CHAIN_FIELDS} for m in records],
                diagnostics=jsonable(NOT_DIAGNOSED if diagnostics is None else diagnostics))
    return meta


def write_fit(chains, out_dir, *, data, extra=None, diagnostics=None) -> Path:
    """Write the fit of ``chains`` as ``fit.npz`` + ``fit.json`` in ``out_dir``, all or nothing
    (:func:`lpp.formats.files.write_verified`); ``out_dir``."""
    check_extra(extra)
    meta = fit_record(chains, data, extra, diagnostics)
    if len(chains) == 1:
        arrays = chain_arrays(chains[0])
    else:
        arrays = {f"chain{c}__{name}": value for c, chain in enumerate(chains)
                  for name, value in chain_arrays(chain).items()}
    return write_verified(out_dir, npz_bytes(arrays), meta, meta_file=META_FILE,
                          file_key="data_file", sha_key="data_sha256")


def read_fit_metadata(path) -> FitMetadata:
    """The record of the fit at ``path`` (its folder or ``fit.json``), checked, without
    reading ``fit.npz``."""
    meta, meta_path = read_meta(path, meta_file=META_FILE, format_name=FORMAT_NAME,
                                format_version=VERSIONS)
    return FitMetadata.from_record(meta, meta_path)


def read_fit(path) -> tuple[FitMetadata, list[dict]]:
    """The record of the fit at ``path`` and each chain's checked arrays and fields: a list of
    ``{"arrays": {name: array}, "samples": {latent: draws}, "fields": {seed, iterations_done,
    interrupted, ...}}``, one per chain.

    Nothing is trusted: ``fit.npz`` must lie in the folder, hold the arrays of every chain
    ``fit.json`` lists and nothing else, each chain's saved iterations rising integers with one
    log joint (finite) and one draw of every sample (finite) each, finite rates and
    non-negative (or NaN: not timed) seconds per iteration.
    """
    meta, data_path, payload = read_verified(
        path, meta_file=META_FILE, format_name=FORMAT_NAME, format_version=VERSIONS,
        file_key="data_file", sha_key="data_sha256")
    meta_path = data_path.parent / META_FILE
    record = FitMetadata.from_record(meta, meta_path)
    if meta["format_version"] == FORMAT_VERSION:
        arrays = read_npz(payload, data_path, required=_ARRAYS, prefixes=(_SAMPLE_PREFIX,))
        fields = {key: meta[key] for key in CHAIN_FIELDS if key in meta}
        return record, [_chain(arrays, fields, data_path, meta_path)]
    prefixes = [f"chain{c}__" for c in range(record.n_chains)]
    arrays = read_npz(payload, data_path,
                      required=[p + name for p in prefixes for name in _ARRAYS],
                      prefixes=[p + _SAMPLE_PREFIX for p in prefixes])
    chains = []
    for c, (prefix, fields) in enumerate(zip(prefixes, meta["chains"])):
        mine = {name[len(prefix):]: value for name, value in arrays.items()
                if name.startswith(prefix)}
        chains.append(_chain(mine, fields, f"{data_path} (chain {c})",
                             f"{meta_path} (chains[{c}])"))
    return record, chains


def _chain(arrays: dict, fields: dict, data_path, meta_path) -> dict:
    """One chain's arrays read back, checked against each other and against its fields."""
    arrays = dict(arrays)
    saved_iterations = integer_member(arrays, "saved_iterations", data_path, ndim=1)
    if saved_iterations.size and (saved_iterations[0] < 0
                                  or np.any(np.diff(saved_iterations) <= 0)):
        raise FormatError(f"{data_path}: array 'saved_iterations' must be non-negative and "
                          "rise strictly")
    n_saved = saved_iterations.size
    if "n_saved" in fields and fields["n_saved"] != n_saved:
        raise FormatError(f"{meta_path}: field 'n_saved' is {fields['n_saved']!r}, but "
                          f"{data_path} holds {n_saved} saved iterations")
    finite_member(arrays, "log_joint", data_path, shape=(n_saved,))
    seconds = finite_member(arrays, "iter_seconds", data_path, ndim=1, allow_nan=True)
    if np.any(seconds < 0):
        raise FormatError(f"{data_path}: array 'iter_seconds' holds negative seconds")
    mu_hat = finite_member(arrays, "mu_hat", data_path)
    if np.any(mu_hat < 0):
        raise FormatError(f"{data_path}: array 'mu_hat' holds negative rates")
    for name in [name for name in arrays if name.startswith(_SAMPLE_PREFIX)]:
        value = finite_member(arrays, name, data_path)
        if value.ndim == 0 or value.shape[0] != n_saved:
            raise FormatError(f"{data_path}: array {name!r} has shape {value.shape}, expected "
                              f"one draw per saved iteration ({n_saved}, ...)")
    samples = {name[len(_SAMPLE_PREFIX):]: arrays.pop(name)
               for name in list(arrays) if name.startswith(_SAMPLE_PREFIX)}
    arrays["mu_hat"] = mu_hat
    return {"arrays": arrays, "samples": samples, "fields": fields}
