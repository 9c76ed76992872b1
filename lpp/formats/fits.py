"""Fitted models on disk: what an inference stage hands to the evaluation stage.

A fit directory holds

``fit.npz``
    ``mu_hat`` (posterior mean of the rates over the saved samples), ``log_joint`` and
    ``saved_iterations`` (per saved sample), ``iter_seconds`` (per iteration), and one
    ``samples__<name>`` array per latent (saved draws stacked on axis 0, e.g. ``phi``).
``fit.json``
    format and version, the method, the model and its settings, the run's seed and schedule,
    whether it was interrupted, the sha256 of ``fit.npz``, and what it was fitted to
    (``data``: the privatized directory, or the prepared counts for the non-private method;
    ``data_fingerprint``: the chain's digest of its data, mask and noise levels, with the
    ``engine`` that ran it, where the fit recorded them).

A fit of several chains (:class:`lpp.inference.FitResult` with ``n_chains > 1``) is written as format version 2:
``fit.json`` has the same keys (those of chain 0, with ``iterations_done`` the least and
``interrupted`` any chain's, ``seconds_total`` the sum) plus ``n_chains``, ``chains`` (each
chain's seed, iterations, saved samples and seconds) and ``diagnostics`` (ArviZ's split R-hat
and bulk / tail ESS of the label-invariant quantities by name, the followed entries'
``mu[i,j]`` included, each with the verdict of :func:`lpp.diagnostics.chain_agreement`,
``verdicts`` counting them, and ``rhat_max``, the worst R-hat); ``fit.npz`` holds each chain's
arrays prefixed ``chain<c>__``. :func:`load_fit` reads it as a :class:`SavedChains`;
:func:`load_chains` reads either version as a list of one :class:`SavedFit` per chain. A
one-chain fit is written as version 1, exactly as before.

The sampled true counts of a private fit are *not* saved (they are posterior draws, not the
data, but they are large and nothing downstream needs them).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lpp.formats.files import (FormatError, finite_member, integer_member, meta_field,
                               npz_bytes, read_npz, read_verified, write_verified)

FORMAT_NAME = "lpp.fit"
FORMAT_VERSION = 1
#: the format version of a fit of several chains
CHAINS_FORMAT_VERSION = 2
DATA_FILE = "fit.npz"
META_FILE = "fit.json"
_SAMPLE_PREFIX = "samples__"
#: the per-chain fields of a version-2 ``fit.json`` (``chains``)
_CHAIN_FIELDS = ("seed", "iterations_done", "interrupted", "n_saved", "seconds_total")
#: the arrays of every chain's record (and the samples, prefixed ``samples__``)
_ARRAYS = ("mu_hat", "log_joint", "saved_iterations", "iter_seconds")


@dataclass(frozen=True)
class SavedFit:
    """A fit read back: ``samples[name]`` is (S, ...) per latent; ``meta`` is ``fit.json``."""

    mu_hat: np.ndarray
    samples: dict
    log_joint: np.ndarray
    saved_iterations: np.ndarray
    iter_seconds: np.ndarray
    meta: dict

    @property
    def method(self) -> str:
        return self.meta["method"]

    @property
    def model(self) -> dict:
        """The model's ``params()``, as :attr:`lpp.inference.ChainResult.model` holds them
        (:func:`lpp.inference.model_from_params` rebuilds the model)."""
        return self.meta["model"]


@dataclass(frozen=True)
class SavedChains:
    """A fit of several chains read back: ``chains`` (one :class:`SavedFit` each) and ``meta``
    (``fit.json``, whose ``diagnostics`` holds the R-hat and ESS computed when it was saved)."""

    chains: list
    meta: dict

    @property
    def n_chains(self) -> int:
        return len(self.chains)

    method = property(lambda self: self.meta["method"])
    model = property(lambda self: self.meta["model"])

    @property
    def mu_hat(self) -> np.ndarray:
        """The posterior mean rates pooled over the chains."""
        return sum(np.asarray(c.mu_hat) for c in self.chains) / self.n_chains

    @property
    def rhat_max(self) -> float:
        """The worst R-hat of the fit's label-invariant quantities (NaN if none was computed)."""
        value = (self.meta.get("diagnostics") or {}).get("rhat_max")
        return float("nan") if value is None else float(value)


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None  # strict JSON has no NaN or infinity
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _arrays(result) -> dict:
    if result.mu_hat is None:
        raise ValueError("the fit saved no sample (n_iter <= burn_in?): nothing to write")
    arrays = {"mu_hat": np.asarray(result.mu_hat), "log_joint": result.log_joint,
              "saved_iterations": result.saved_iterations, "iter_seconds": result.iter_seconds}
    arrays.update({_SAMPLE_PREFIX + name: value for name, value in result.samples.items()
                   if name != "y"})
    return arrays


def save_fit(result, out_dir, *, data: str, extra: dict | None = None,
             diagnostics: dict | None = None) -> Path:
    """Write a fit as ``fit.npz`` + ``fit.json``, all or nothing.

    A rewrite of a fit directory that fails part way (an exception, Ctrl-C) leaves the
    previous fit whole (:func:`lpp.formats.files.write_verified`). The directory is updated in
    place, not replaced whole, so other files in it are left alone.

    Parameters
    ----------
    result : lpp.inference.FitResult or lpp.inference.ChainResult
        A fit of one chain, or a chain, is written as format version 1; a fit of several
        chains as version 2, with their diagnostics.
    out_dir : path-like
        The fit directory (created).
    data : str
        What the fit was fitted to (recorded in ``fit.json``).
    extra : dict, optional
        Settings recorded under ``extra`` (e.g. the privacy level).
    diagnostics : dict, optional
        A fit of several chains: its convergence record,
        ``lpp.diagnostics.diagnostics_record(result)`` (ArviZ, ``lpp[diagnostics]``), kept
        under ``diagnostics``. Without it the record says that none was computed.

    Returns
    -------
    pathlib.Path
        ``out_dir``.
    """
    _check_extra(extra)
    chains = getattr(result, "chains", [result])  # a fit, or one chain (a ChainResult)
    if len(chains) > 1:
        return _save_chains(result, out_dir, data=data, extra=extra, diagnostics=diagnostics)
    if diagnostics is not None:
        raise ValueError("diagnostics are recorded for a fit of several chains only")
    result = chains[0]
    arrays = _arrays(result)
    meta = _meta(result, data, extra)
    return write_verified(out_dir, npz_bytes(arrays), meta, meta_file=META_FILE,
                          file_key="data_file", sha_key="data_sha256")


def _check_extra(extra) -> None:
    """A TypeError naming ``extra`` when it is not a dict of what JSON holds (numbers,
    strings, bools, None, lists and dicts of them; NaN and infinity are stored as null), so
    that the failure names the setting rather than surface from the JSON encoder."""
    if extra is None:
        return
    if not isinstance(extra, dict):
        raise TypeError(f"extra must be a dict of settings, got {type(extra).__name__}")
    try:
        json.dumps(_jsonable(extra), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"extra must hold JSON values (numbers, strings, bools, None, lists "
                        f"and dicts of them): {exc}") from None


def _meta(result, data, extra) -> dict:
    return {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "method": result.method,
        "model": _jsonable(result.model), "seed": int(result.seed), "n_iter": result.n_iter,
        "burn_in": result.burn_in, "thin": result.thin,
        "iterations_done": result.iterations_done, "interrupted": bool(result.interrupted),
        "n_saved": result.n_saved, "data": str(data), "data_file": DATA_FILE,
        "data_sha256": None,
        "seconds_total": float(np.nansum(result.iter_seconds)),
        "extra": _jsonable(extra or {}),
        **({"engine": result.engine, "data_fingerprint": result.data_fingerprint}
           if getattr(result, "data_fingerprint", None) else {}),
        # recorded off the CPU only: a CPU fit's record is unchanged
        **({"device": result.device} if getattr(result, "device", "cpu") != "cpu" else {}),
    }


#: the record of a fit of several chains saved without its diagnostics
NOT_DIAGNOSED = {"rhat_max": None, "unavailable": "not computed when the fit was saved "
                 "(save_fit(..., diagnostics=lpp.diagnostics.diagnostics_record(result)))"}


def _save_chains(result, out_dir, *, data, extra, diagnostics) -> Path:
    arrays = {}
    for c, chain in enumerate(result.chains):
        arrays.update({f"chain{c}__{name}": value for name, value in _arrays(chain).items()})
    metas = [_meta(chain, data, extra) for chain in result.chains]
    meta = dict(metas[0])
    meta.update(format_version=CHAINS_FORMAT_VERSION,
                iterations_done=min(m["iterations_done"] for m in metas),
                interrupted=any(m["interrupted"] for m in metas),
                seconds_total=float(sum(m["seconds_total"] for m in metas)),
                n_chains=len(metas),
                chains=[{k: m[k] for k in _CHAIN_FIELDS} for m in metas],
                diagnostics=_jsonable(NOT_DIAGNOSED if diagnostics is None else diagnostics))
    return write_verified(out_dir, npz_bytes(arrays), meta, meta_file=META_FILE,
                          file_key="data_file", sha_key="data_sha256")


def load_fit(path):
    """Read a fit directory (or its ``fit.json``), checking format, version and checksum.

    Nothing is trusted: ``fit.npz`` must lie in the folder, hold the arrays of every chain
    ``fit.json`` lists and nothing else, each chain's saved iterations rising integers with one
    log joint (finite) and one draw of every sample (finite) each, finite rates and
    non-negative (or NaN: not timed) seconds per iteration.

    Returns
    -------
    SavedFit or SavedChains
        A :class:`SavedFit` for a one-chain fit, a :class:`SavedChains` for several
        (:func:`load_chains` gives a list either way).

    Raises
    ------
    lpp.formats.files.MissingFileError
        No ``fit.json`` at ``path`` (also a ``FileNotFoundError``), or no data file.
    lpp.formats.files.FormatError
        Anything not as :func:`save_fit` writes it, naming the file and the field.
    """
    meta, data_path, payload = read_verified(
        path, meta_file=META_FILE, format_name=FORMAT_NAME,
        format_version=(FORMAT_VERSION, CHAINS_FORMAT_VERSION),
        file_key="data_file", sha_key="data_sha256")
    meta_path = data_path.parent / META_FILE
    meta_field(meta, "method", meta_path, "str")
    meta_field(meta, "model", meta_path, "dict")
    if meta["format_version"] == FORMAT_VERSION:
        arrays = read_npz(payload, data_path, required=_ARRAYS, prefixes=(_SAMPLE_PREFIX,))
        return _saved(arrays, meta, data_path, meta_path)
    chains_meta = meta_field(meta, "chains", meta_path, "any")
    if not (isinstance(chains_meta, list) and chains_meta
            and all(isinstance(c, dict) for c in chains_meta)):
        raise FormatError(f"{meta_path}: field 'chains' must be a non-empty list of objects")
    if meta_field(meta, "n_chains", meta_path, "int") != len(chains_meta):
        raise FormatError(f"{meta_path}: field 'n_chains' is {meta['n_chains']}, but 'chains' "
                          f"lists {len(chains_meta)}")
    prefixes = [f"chain{c}__" for c in range(len(chains_meta))]
    arrays = read_npz(payload, data_path,
                      required=[p + name for p in prefixes for name in _ARRAYS],
                      prefixes=[p + _SAMPLE_PREFIX for p in prefixes])
    chains = []
    for c, fields in enumerate(chains_meta):
        for key in _CHAIN_FIELDS:
            meta_field(fields, key, f"{meta_path} (chains[{c}])")
        prefix = prefixes[c]
        mine = {name[len(prefix):]: value for name, value in arrays.items()
                if name.startswith(prefix)}
        chain_meta = {k: v for k, v in meta.items()
                      if k not in ("n_chains", "chains", "diagnostics")}
        chain_meta.update(fields, format_version=FORMAT_VERSION, chain=c)
        chains.append(_saved(mine, chain_meta, f"{data_path} (chain {c})",
                             f"{meta_path} (chains[{c}])"))
    return SavedChains(chains=chains, meta=meta)


def load_chains(path) -> list[SavedFit]:
    """The chains of a fit directory, one :class:`SavedFit` each (one for a one-chain fit)."""
    fit = load_fit(path)
    return list(fit.chains) if isinstance(fit, SavedChains) else [fit]


def _saved(arrays: dict, meta: dict, data_path, meta_path) -> SavedFit:
    """One chain's arrays read back, checked against each other and against ``meta``."""
    arrays = dict(arrays)
    saved_iterations = integer_member(arrays, "saved_iterations", data_path, ndim=1)
    if saved_iterations.size and (saved_iterations[0] < 0
                                  or np.any(np.diff(saved_iterations) <= 0)):
        raise FormatError(f"{data_path}: array 'saved_iterations' must be non-negative and "
                          "rise strictly")
    n_saved = saved_iterations.size
    if "n_saved" in meta and meta["n_saved"] != n_saved:
        raise FormatError(f"{meta_path}: field 'n_saved' is {meta['n_saved']!r}, but "
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
    return SavedFit(mu_hat=mu_hat, samples=samples, log_joint=arrays["log_joint"],
                    saved_iterations=arrays["saved_iterations"],
                    iter_seconds=arrays["iter_seconds"], meta=meta)
