"""The record of a run: one entry per completed iteration, and the result it becomes.

Each iteration's bookkeeping ends in a single ``list.append``, so a Ctrl-C can never leave the
record half-written; only the last saved entry keeps the running sum of the rates.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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


class Entry(tuple):
    """A completed iteration: ``(t, seconds, draws, log_joint, mu_sum)``, draws None if unsaved."""

    __slots__ = ()
    t = property(lambda self: self[0])
    seconds = property(lambda self: self[1])
    draws = property(lambda self: self[2])
    log_joint = property(lambda self: self[3])
    mu_sum = property(lambda self: self[4])


class Record:
    """The run's history, one :class:`Entry` per completed iteration.

    Each iteration's bookkeeping ends in a single ``list.append``, so a Ctrl-C can never leave
    it half-written; the only gap it can leave is a sweep whose entry was not appended yet,
    which :meth:`book` then completes from the chain (the same values, without the timing).
    """

    def __init__(self, names, burn_in: int, thin: int, rates: bool = True):
        self.names, self.burn_in, self.thin = tuple(names), burn_in, thin
        #: whether saved sweeps add their rates into the running sum (False: no array of the
        #: data's size is kept, and the fit has no mu_hat)
        self.rates = rates
        self.entries: list[Entry] = []
        # the running sum that the last saved entry replaced: no entry refers to it, so the
        # next saved sweep writes its sum there instead of into a new array of the data's size
        # (at 10,000 x 10,000, a fresh 800 MB array costs seconds of page faults; the add, 0.1 s)
        self._spare = None

    def is_saved(self, t: int) -> bool:
        return t > self.burn_in and (t - self.burn_in) % self.thin == 0

    @property
    def mu_sum(self):
        for e in reversed(self.entries):
            if e.draws is not None:
                return e.mu_sum
        return None

    @property
    def last_t(self) -> int:
        return self.entries[-1].t if self.entries else 0

    def book(self, sampler, seconds: float) -> None:
        """Append the entry of the sampler's last sweep (a :class:`GibbsSampler`)."""
        t = sampler.iteration
        if self.is_saved(t):
            draws = {n: (sampler.y if n == "y" else sampler.state[n]) for n in self.names}
            mu_sum = self.mu_sum
            if not self.rates:
                pass
            elif mu_sum is None:
                mu_sum = sampler.mu.copy()
            else:
                spare = self._spare
                self._spare = None
                if spare is None or spare.shape != mu_sum.shape or not spare.flags.writeable:
                    spare = np.empty_like(mu_sum)
                mu_sum = np.add(mu_sum, sampler.mu, out=spare)
            entry = Entry((t, seconds, draws, sampler.log_joint(), mu_sum))
        else:
            entry = Entry((t, seconds, None, None, None))
        self.entries.append(entry)
        if entry.draws is not None:
            self._drop_older_sums()

    def _drop_older_sums(self) -> None:
        """Only the last saved entry needs its running sum: free the others' (one array of the
        data's size per saved sample otherwise). Each replacement is one list assignment."""
        for i in range(len(self.entries) - 2, -1, -1):
            e = self.entries[i]
            if e.mu_sum is not None:
                self.entries[i] = Entry((e.t, e.seconds, e.draws, e.log_joint, None))
                self._spare = e.mu_sum
                break

    def saved(self) -> list[Entry]:
        return [e for e in self.entries if e.draws is not None]

    def arrays(self) -> dict[str, np.ndarray]:
        saved = self.saved()
        out = {"saved_iterations": np.array([e.t for e in saved], dtype=np.int64),
               "log_joint": np.array([e.log_joint for e in saved], dtype=np.float64),
               "iter_seconds": np.array([e.seconds for e in self.entries], dtype=np.float64)}
        for n in self.names:
            out[f"samples__{n}"] = (np.stack([e.draws[n] for e in saved]) if saved
                                    else np.empty((0,)))
        if saved and saved[-1].mu_sum is not None:  # records that keep the running sum
            out["mu_sum"] = saved[-1].mu_sum
        return out

    def load(self, extra: dict, samples: dict) -> None:
        saved_at = {int(t): i for i, t in enumerate(extra["saved_iterations"])}
        mu_sum = extra.get("mu_sum") if self.rates else None
        last_saved = max(saved_at) if saved_at else None
        if self.rates and last_saved is not None and mu_sum is None:
            raise ValueError("the checkpoint holds no running sum of the rates (its run had "
                             "save_rates=False), so a run that saves them cannot continue "
                             "it: resume with save_rates=False, or start over")
        for t, seconds in enumerate(extra["iter_seconds"].tolist(), start=1):
            if t in saved_at:
                i = saved_at[t]
                draws = {n: samples[n][i] for n in self.names}
                entry = (t, seconds, draws, float(extra["log_joint"][i]),
                         mu_sum if t == last_saved else None)
            else:
                entry = (t, seconds, None, None, None)
            self.entries.append(Entry(entry))
