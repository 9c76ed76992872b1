"""Fitted models on disk: what an inference stage hands to the evaluation stage.

A fit directory holds

``fit.npz``
    ``mu_hat`` (posterior mean of the rates over the saved samples), ``log_joint`` and
    ``saved_iterations`` (per saved sample), ``iter_seconds`` (per iteration), and one
    ``samples__<name>`` array per latent (saved draws stacked on axis 0, e.g. ``phi``).
``fit.json``
    format (``lpp.fit``) and version, the method, the model and its settings, the run's seed
    and schedule, whether it was interrupted, the sha256 of ``fit.npz``, the settings recorded
    under ``extra``, and what it was fitted to (``data``: the privatized directory, or the
    prepared counts for the non-private method; ``data_fingerprint``: the chain's digest of its
    data, mask and noise levels, with the ``engine`` that ran it, where the fit recorded them).

A fit of several chains (:class:`lpp.inference.FitResult` with ``n_chains > 1``) is written as
format version 2: ``fit.json`` has the same keys (those of chain 0, with ``iterations_done``
the least and ``interrupted`` any chain's, ``seconds_total`` the sum) plus ``n_chains``,
``chains`` (each chain's seed, iterations, saved samples and seconds) and ``diagnostics``
(ArviZ's split R-hat and bulk / tail ESS of the label-invariant quantities by name, the
followed entries' ``mu[i,j]`` included, each with the verdict of
:func:`lpp.diagnostics.chain_agreement`, ``verdicts`` counting them, and ``rhat_max``, the
worst R-hat); ``fit.npz`` holds each chain's arrays prefixed ``chain<c>__``. A one-chain fit is
written as version 1. Both versions are read.

A fit saves and loads itself: ``result.save(out_dir, data=...)`` and
:meth:`lpp.inference.FitResult.load` (or :func:`load_fit`), which gives the same type back,
its record typed (:class:`FitMetadata`, ``result.metadata``). A checkpoint of a chain is
another format (``lpp.checkpoint``, :mod:`lpp.inference.checkpoint`), told apart by
:mod:`lpp.formats.kinds`.

The sampled true counts of a private fit are *not* saved (they are posterior draws, not the
data, but they are large and nothing downstream needs them).
"""
from __future__ import annotations

import warnings
from pathlib import Path

from lpp.formats.fit_layout import (CHAINS_FORMAT_VERSION, DATA_FILE, FORMAT_NAME,
                                    FORMAT_VERSION, META_FILE, NOT_DIAGNOSED, FitMetadata,
                                    read_fit_metadata)
from lpp.formats.result import ChainResult, FitResult

__all__ = ["CHAINS_FORMAT_VERSION", "DATA_FILE", "FORMAT_NAME", "FORMAT_VERSION", "META_FILE",
           "NOT_DIAGNOSED", "FitMetadata", "FitResult", "load_chains", "load_fit",
           "read_metadata", "save_fit"]


def save_fit(result, out_dir, *, data: str, extra: dict | None = None,
             diagnostics: dict | None = None) -> Path:
    """Write a fit (a :class:`lpp.inference.FitResult`, or one chain) as ``fit.npz`` +
    ``fit.json``, all or nothing: ``FitResult.of(result).save(...)``
    (:meth:`lpp.inference.FitResult.save` says what each argument records)."""
    return FitResult.of(result).save(out_dir, data=data, extra=extra, diagnostics=diagnostics)


def load_fit(path) -> FitResult:
    """The fit saved at ``path`` (its directory or ``fit.json``), one chain or several:
    :meth:`lpp.inference.FitResult.load`."""
    return FitResult.load(path)


def load_chains(path) -> list[ChainResult]:
    """The chains of the fit saved at ``path``, one :class:`lpp.inference.ChainResult` each."""
    return list(load_fit(path).chains)


def read_metadata(path) -> FitMetadata:
    """The typed record of the fit at ``path`` (``fit.json``), checked, without reading its
    arrays."""
    return read_fit_metadata(path)


#: the names of earlier releases' types of a fit read back, and what replaces them
_RETIRED = {"SavedFit": "a fit of one chain", "SavedChains": "a fit of several chains"}


def __getattr__(name: str):
    if name in _RETIRED:
        warnings.warn(f"lpp.formats.fits.{name} ({_RETIRED[name]} read back) is "
                      "lpp.inference.FitResult, which load_fit returns; the name will be "
                      "removed: use FitResult, and its typed record result.metadata for the "
                      "fields of fit.json", FutureWarning, stacklevel=2)
        return FitResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
