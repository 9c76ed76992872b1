"""A fit's result: its chains (MCMC or variational), their typed record, saved and loaded whole.

:class:`FitResult` is what :func:`lpp.inference.fit_private`, :func:`lpp.inference.fit_nonprivate`
return, what :meth:`lpp.vi.VIResult.save` writes, and what :meth:`FitResult.load` (or
:func:`lpp.formats.fits.load_fit`) reads back from a fit directory (:mod:`lpp.formats.fits`);
its :attr:`FitResult.metadata` is the typed record of ``fit.json``
(:class:`lpp.formats.fit_layout.FitMetadata`). Each chain is a :class:`ChainResult`.
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from lpp.formats.files import FormatError
from lpp.formats.fit_layout import FitMetadata, fit_record, read_fit, write_fit
from lpp.formats.kinds import FIT_FORMAT, wrong_kind

@dataclass
class ChainResult:
    """One chain of a fit (an item of :attr:`FitResult.chains`): its draws, log joint,
    timings and last point.

    Attributes
    ----------
    method : str
        The privacy step's name, or ``"nonprivate"``.
    model : dict
        The model's hyperparameters (``model.params()``).
    seed : int
        The base seed: ``rng=seed`` repeats the run bit for bit.
    n_iter, burn_in, thin : int
        The run's settings; iteration t (1-based) is saved when t > burn_in and
        (t - burn_in) % thin == 0.
    iterations_done : int
        Sweeps completed (fewer than ``n_iter`` when interrupted).
    interrupted : bool
        Whether Ctrl-C stopped the run.
    saved_iterations : ndarray of int64
        The 1-based iteration of each saved sample.
    samples : dict of ndarray
        The saved draws of each latent stacked along axis 0 (and of the counts ``"y"`` with
        ``save_counts=True``).
    mu_hat : ndarray or None
        The mean of the rates over the saved iterations (None before the first).
    log_joint : ndarray
        ``log p(Z, y, y_tilde)`` per saved sample (``log p(Z, y)`` without a noise model).
    iter_seconds : ndarray
        Wall time per completed iteration (the first includes numba's compilation).
    state, aux : dict of ndarray
        The chain's last point.
    engine : str
        ``"dense"`` or the name of the fused engine that ran the sweeps.
    device : str
        ``"cpu"``, or the name of the GPU that ran them.
    data_fingerprint : str or None
        A digest of the data, mask and noise levels the chain ran on (what its checkpoints
        are tied to; :func:`lpp.inference.checkpoint_from_fit` checks it before continuing a
        saved chain). None where not recorded.
    metadata : FitMetadata or None
        The record of the fit directory the chain was read from (its privacy level, the data
        it was fitted to, ...); None for a chain in memory. A chain read from disk has no last
        point of its own (``state`` and ``aux`` are empty; its last saved draw is in
        ``samples``) and ``engine`` None where the fit did not record it.
    """

    method: str
    model: dict
    seed: int
    n_iter: int
    burn_in: int
    thin: int
    iterations_done: int
    interrupted: bool
    saved_iterations: np.ndarray
    samples: dict
    mu_hat: np.ndarray | None
    log_joint: np.ndarray
    iter_seconds: np.ndarray
    state: dict = field(repr=False)
    aux: dict = field(repr=False)
    engine: str = "dense"
    data_fingerprint: str | None = None
    device: str = "cpu"
    metadata: FitMetadata | None = field(default=None, repr=False)

    @property
    def n_saved(self) -> int:
        return int(self.saved_iterations.size)

    @property
    def complete(self) -> bool:
        return self.iterations_done >= self.n_iter


#: what each chain has of its own; a fit of one chain offers them as its own attributes
PER_CHAIN = ("saved_iterations", "samples", "log_joint", "iter_seconds", "state", "aux",
             "data_fingerprint", "iterations_done", "n_saved")


@dataclass
class FitResult:
    """The result of :func:`~lpp.inference.fit_private` / :func:`~lpp.inference.fit_nonprivate`:
    the fit's chains, one or several (``n_chains``).

    The chains are the fit's statistical unit: each is a :class:`ChainResult` of the same
    model, data and schedule with its own random streams (:func:`chain_seeds`). Their
    components are labelled independently (a topic model is invariant to permuting its
    topics), so only label-invariant quantities are compared or pooled across chains: the
    rates ``mu_hat``, the log joint, the total rate (:func:`lpp.diagnostics.fit_diagnostics`).

    What every chain shares (``seed`` of chain 0, ``method``, ``model``, ``n_iter``,
    ``burn_in``, ``thin``, ``engine``) and what is pooled (``mu_hat``, ``interrupted``,
    ``complete``) are attributes of the fit. What each chain has of its own
    (:data:`PER_CHAIN`: ``samples``, ``log_joint``, ``state``, ...) is read from
    ``chains[c]``; a fit of one chain also offers it as its own attribute
    (``result.samples`` is ``result.chains[0].samples``), a fit of several refuses to pick one.

    A fit saves itself (:meth:`save`: a fit directory, :mod:`lpp.formats.fits`) and loads
    itself (:meth:`load`); what it recorded is :attr:`metadata`, typed.

    Attributes
    ----------
    chains : list of ChainResult
        One per chain; chain 0 runs on the fit's ``rng``.
    exclude : ndarray of bool or None
        Entries never followed by :func:`lpp.diagnostics.fit_diagnostics` (the fit's mask:
        the data say nothing there, so chains may disagree for reasons that are not mixing).
    """

    chains: list
    exclude: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_chains(self) -> int:
        return len(self.chains)

    @property
    def seeds(self) -> list[int]:
        """Each chain's base seed (chain 0's is the fit's ``rng``)."""
        return [int(c.seed) for c in self.chains]

    seed = property(lambda self: self.chains[0].seed, doc="The base seed: ``rng=seed`` "
                    "repeats every chain.")
    method = property(lambda self: self.chains[0].method)
    model = property(lambda self: self.chains[0].model)
    n_iter = property(lambda self: self.chains[0].n_iter)
    burn_in = property(lambda self: self.chains[0].burn_in)
    thin = property(lambda self: self.chains[0].thin)
    engine = property(lambda self: self.chains[0].engine)
    device = property(lambda self: self.chains[0].device)
    interrupted = property(lambda self: any(c.interrupted for c in self.chains))
    complete = property(lambda self: all(c.complete for c in self.chains))

    @property
    def mu_hat(self) -> np.ndarray | None:
        """The posterior mean rates pooled over the chains (each chain's mean, averaged; None
        while a chain has no saved sample); a fit of one chain gives its chain's as it is."""
        if self.n_chains == 1:
            return self.chains[0].mu_hat
        if any(c.mu_hat is None for c in self.chains):
            return None
        return sum(np.asarray(c.mu_hat) for c in self.chains) / self.n_chains

    @property
    def metadata(self) -> FitMetadata:
        """The fit's record, typed: the one its directory holds for a fit read from disk, the
        one a save would write for a fit in memory (without ``data`` and ``extra``)."""
        saved = getattr(self.chains[0], "metadata", None)
        if saved is not None:
            return saved
        record = FitMetadata.from_record(fit_record(self.chains, "", None, None), "the fit")
        return replace(record, data=None, diagnostics=None, format_version=None)

    @property
    def meta(self) -> dict:
        """``fit.json``'s fields as a dict, as the fit types of earlier releases held them
        (deprecated: :attr:`metadata` is the typed record; ``meta["extra"][...]`` is
        ``metadata.extra[...]``, ``meta["diagnostics"]`` ``metadata.diagnostics``)."""
        warnings.warn("result.meta (fit.json as a dict) is deprecated and will be removed: "
                      "read the typed record result.metadata (e.g. metadata.method, "
                      "metadata.epsilon_over_n, metadata.extra, metadata.diagnostics)",
                      FutureWarning, stacklevel=2)
        record = asdict(self.metadata)
        record["seed"] = record["seeds"][0]
        record["n_chains"] = len(record["seeds"])
        return record

    @property
    def rhat_max(self) -> float:
        """The worst R-hat recorded with a fit of several chains (deprecated:
        ``metadata.rhat_max``)."""
        warnings.warn("result.rhat_max is deprecated and will be removed: read "
                      "result.metadata.rhat_max", FutureWarning, stacklevel=2)
        return self.metadata.rhat_max

    def save(self, out_dir, *, data: str | None = None, extra: dict | None = None,
             diagnostics: dict | None = None) -> Path:
        """Write the fit as a fit directory (``fit.npz`` + ``fit.json``), all or nothing.

        A rewrite of a fit directory that fails part way (an exception, Ctrl-C) leaves the
        previous fit whole (:func:`lpp.formats.files.write_verified`). The directory is
        updated in place, not replaced whole, so other files in it are left alone. A fit of
        one chain is written as format version 1, of several as version 2, with their
        diagnostics.

        Parameters
        ----------
        out_dir : path-like
            The fit directory (created).
        data : str
            What the fit was fitted to (recorded in ``fit.json``); a fit read from disk keeps
            its own by default.
        extra : dict, optional
            Settings recorded under ``extra`` (e.g. the privacy level ``epsilon_over_n``);
            a fit read from disk keeps its own by default.
        diagnostics : dict, optional
            A fit of several chains: its convergence record,
            ``lpp.diagnostics.diagnostics_record(result)`` (ArviZ, ``lpp[diagnostics]``). Without
            it the record says that none was computed.

        Returns
        -------
        pathlib.Path
            ``out_dir``.
        """
        saved = getattr(self.chains[0], "metadata", None)
        if data is None:
            if saved is None or saved.data is None:
                raise ValueError("data= is required: what the fit was fitted to (a folder, a "
                                 "name), recorded in fit.json")
            data = saved.data
        if saved is not None:
            extra = saved.extra if extra is None else extra
            if diagnostics is None and self.n_chains > 1:
                diagnostics = saved.diagnostics
        return write_fit(self.chains, out_dir, data=data, extra=extra, diagnostics=diagnostics)

    @classmethod
    def load(cls, path) -> "FitResult":
        """The fit saved at ``path`` (its directory or ``fit.json``), of format version 1 or 2,
        checked for format, version and checksum and its arrays against each other
        (:func:`lpp.formats.fit_layout.read_fit`).

        Raises
        ------
        lpp.formats.files.MissingFileError
            No ``fit.json`` at ``path`` (also a ``FileNotFoundError``), or no data file.
        lpp.formats.files.FormatError
            Anything not as :meth:`save` writes it, naming the file and the field; a
            checkpoint of a chain (:mod:`lpp.formats.kinds`), naming it.
        """
        problem = wrong_kind(path, FIT_FORMAT)
        if problem is not None:
            raise FormatError(f"{problem}: a run continues from it "
                              "(RunOptions(checkpoint=..., resume=True))")
        metadata, chains = read_fit(path)
        return cls([_loaded_chain(metadata, chain) for chain in chains])

    @classmethod
    def of(cls, result) -> "FitResult":
        """``result`` as a fit: a :class:`FitResult` as it is, anything else with ``chains``
        as a fit of those, and one chain (a :class:`ChainResult`, or an object with its
        attributes) as a fit of one."""
        if isinstance(result, cls):
            return result
        return cls(list(getattr(result, "chains", [result])))

    def _own(self, name: str):
        if self.n_chains != 1:
            raise AttributeError(f"a fit of {self.n_chains} chains has one {name} per chain: "
                                 f"read result.chains[c].{name}")
        return getattr(self.chains[0], name)


for _name in PER_CHAIN:
    setattr(FitResult, _name, property(
        lambda self, _name=_name: self._own(_name),
        doc=f"``chains[0].{_name}`` of a fit of one chain (see :class:`ChainResult`)."))
del _name


def _loaded_chain(metadata: FitMetadata, chain: dict) -> ChainResult:
    """A chain of a fit read from disk (:func:`lpp.formats.fit_layout.read_fit`)."""
    arrays, fields = chain["arrays"], chain["fields"]
    return ChainResult(
        method=metadata.method, model=metadata.model, seed=int(fields["seed"]),
        n_iter=metadata.n_iter, burn_in=metadata.burn_in, thin=metadata.thin,
        iterations_done=int(fields["iterations_done"]),
        interrupted=bool(fields["interrupted"]),
        saved_iterations=arrays["saved_iterations"], samples=chain["samples"],
        mu_hat=arrays["mu_hat"], log_joint=arrays["log_joint"],
        iter_seconds=arrays["iter_seconds"], state={}, aux={}, engine=metadata.engine,
        data_fingerprint=metadata.data_fingerprint, device=metadata.device, metadata=metadata)
