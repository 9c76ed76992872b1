"""The record of a run: one entry per completed iteration, and the result it becomes
(:class:`ChainResult`, :class:`FitResult`: :mod:`lpp.formats.result`, where a fit saves and
loads itself).

Each iteration's bookkeeping ends in a single ``list.append``, so a Ctrl-C can never leave the
record half-written; only the last saved entry keeps the running sum of the rates.
"""
from __future__ import annotations

import numpy as np

from lpp.formats.result import PER_CHAIN, ChainResult, FitResult

__all__ = ["PER_CHAIN", "ChainResult", "Entry", "FitResult", "Record"]


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
