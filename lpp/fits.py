"""Fitted models on disk: what an inference stage hands to the evaluation stage.

A fit directory holds

``fit.npz``
    ``mu_hat`` (posterior mean of the rates over the saved samples), ``log_joint`` and
    ``saved_iterations`` (per saved sample), ``iter_seconds`` (per iteration), and one
    ``samples__<name>`` array per latent (saved draws stacked on axis 0, e.g. ``phi``).
``fit.json``
    format and version, the method, the model and its settings, the run's seed and schedule,
    whether it was interrupted, the sha256 of ``fit.npz``, and what it was fitted to
    (``data``: the privatized directory, or the prepared counts for the non-private method).

The sampled true counts of a private fit are *not* saved (they are posterior draws, not the
data, but they are large and nothing downstream needs them).
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lpp.io import npz_bytes, read_verified, write_verified

FORMAT_NAME = "lpp.fit"
FORMAT_VERSION = 1
DATA_FILE = "fit.npz"
META_FILE = "fit.json"
_SAMPLE_PREFIX = "samples__"


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
        """The model's ``params()``, as :attr:`lpp.inference.FitResult.model` holds them
        (:func:`lpp.inference.model_from_params` rebuilds the model)."""
        return self.meta["model"]


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def save_fit(result, out_dir, *, data: str, extra: dict | None = None) -> Path:
    """Write a :class:`lpp.inference.FitResult` as ``fit.npz`` + ``fit.json`` atomically."""
    if result.mu_hat is None:
        raise ValueError("the fit saved no sample (n_iter <= burn_in?): nothing to write")
    arrays = {"mu_hat": np.asarray(result.mu_hat), "log_joint": result.log_joint,
              "saved_iterations": result.saved_iterations, "iter_seconds": result.iter_seconds}
    arrays.update({_SAMPLE_PREFIX + name: value for name, value in result.samples.items()
                   if name != "y"})
    meta = {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "method": result.method,
        "model": _jsonable(result.model), "seed": int(result.seed), "n_iter": result.n_iter,
        "burn_in": result.burn_in, "thin": result.thin,
        "iterations_done": result.iterations_done, "interrupted": bool(result.interrupted),
        "n_saved": result.n_saved, "data": str(data), "data_file": DATA_FILE,
        "data_sha256": None,
        "seconds_total": float(np.nansum(result.iter_seconds)),
        "extra": _jsonable(extra or {}),
    }
    return write_verified(out_dir, npz_bytes(arrays), meta, meta_file=META_FILE,
                          file_key="data_file", sha_key="data_sha256")


def load_fit(path) -> SavedFit:
    """Read a fit directory (or its ``fit.json``), checking format, version and checksum."""
    meta, _, payload = read_verified(
        path, meta_file=META_FILE, format_name=FORMAT_NAME, format_version=FORMAT_VERSION,
        file_key="data_file", sha_key="data_sha256")
    with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    samples = {name[len(_SAMPLE_PREFIX):]: arrays.pop(name)
               for name in list(arrays) if name.startswith(_SAMPLE_PREFIX)}
    return SavedFit(mu_hat=arrays["mu_hat"], samples=samples, log_joint=arrays["log_joint"],
                    saved_iterations=arrays["saved_iterations"],
                    iter_seconds=arrays["iter_seconds"], meta=meta)
