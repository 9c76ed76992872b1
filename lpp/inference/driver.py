"""Fit Poisson factorization models to privatized (or true) counts by Gibbs sampling.

Two entry points keep the privacy boundary explicit:

* :func:`fit_private` takes **only** the privatized counts ``y_tilde`` and the mechanism's
  ``alpha``. Methods: ``"collapsed"`` (exact conditional of the true counts, default),
  ``"bessel"`` (the paper's augmentation) and ``"naive"`` (fit the model to ``max(y_tilde, 0)``
  as if it were true). Nothing it calls can see the true counts.
* :func:`fit_nonprivate` takes the true counts ``y`` (the non-private reference method).

Each iteration is one sweep in the authors' order: privacy step (``y | y_tilde, mu``) ->
allocation -> factor updates -> ``mu``. Iterations are numbered 1..``n_iter``; iteration ``t``
is saved when ``t > burn_in`` and ``(t - burn_in) % thin == 0``. The result holds the saved
latents, the running posterior mean ``mu_hat`` of the rates over saved iterations, the log joint
``log p(Z, y, y_tilde)`` of each saved sample (``log p(Z, y)`` for the non-private and naive
fits, whose data are ``y`` and ``max(y_tilde, 0)``), and the wall time of every iteration.

Sparse engine: for the ``collapsed`` method of :class:`TopicModel` with a scalar or per-row
``alpha`` the privacy step and the allocation are fused and skip the non-positive entries
(:mod:`lpp.inference.sparse_topics`, design §2c); the cost of a sweep then scales with the
number of positive privatized entries, and the dense rates ``mu`` are formed only when asked
for (saved samples). ``sparse=None`` (default) picks it whenever it applies, ``False`` forces the
dense sampler; both target the same posterior but use different random streams.

Reproducibility: the run's 63-bit base seed (recorded in the result) keys every random draw by
``(seed, iteration, block)``, so the same seed gives bit-identical samples with any number of
numba threads, and a run resumed from a checkpoint continues exactly as the uninterrupted run.
Checkpoints are ``.npz`` files written atomically (temporary file, then rename). Ctrl-C stops
the run after the current sweep's kernels return and gives back a usable partial result
(``interrupted=True``), written to the checkpoint when one is configured.
"""
from __future__ import annotations

import hashlib
import json
import logging
import numbers
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm  # the text bar: tqdm.auto warns in kernels without ipywidgets

from lpp._rng import base_seed
from lpp.inference._seeds import derive_seed
from lpp.inference._validate import as_count_array, non_negative_int, observed_mask, positive_int
from lpp.inference.models import (
    CommunityModel,
    CPTensorModel,
    Observed,
    PoissonFactorization,
    TopicModel,
)
from lpp.inference.models.base import LOG_DENSITY_BLOCK
from lpp.inference.privacy import PRIVACY_STEPS, NoiseLevels, PrivacyStep, noise_levels
from lpp.inference.sparse_topics import SparseTopicPrivacy, as_dense_counts

__all__ = ["FitResult", "GibbsSampler", "fit_nonprivate", "fit_private", "make_model"]

log = logging.getLogger(__name__)

PRIVATE_METHODS = ("collapsed", "bessel", "naive")
_CHECKPOINT_VERSION = 2
_TAG_INIT_PRIOR = 1
_TAG_INIT_STEP = 2
_TAG_PRIVACY = 3
_TAG_MODEL = 4

_MODELS = {"topics": TopicModel, "communities": CommunityModel, "cp": CPTensorModel}


def kernel_seed(seed) -> int:
    """The run's 63-bit base seed: an int seed is used as is, a Generator or None draws one.

    So ``seed=result.seed`` repeats any run, including one started with ``seed=None``.
    """
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if not 0 <= seed < 2**63:
            raise ValueError(f"an integer seed must be in [0, 2**63), got {seed}")
        return int(seed)
    return base_seed(seed)


def make_model(model, n_components=None, a0=None, b0=None) -> PoissonFactorization:
    """A model instance from an instance (returned as is) or a name with its settings.

    Names: ``"topics"`` (:class:`TopicModel`), ``"communities"`` (:class:`CommunityModel`),
    ``"cp"`` (:class:`CPTensorModel`); ``n_components`` is then required (K, C or the rank).
    """
    if isinstance(model, PoissonFactorization):
        if any(v is not None for v in (n_components, a0, b0)):
            raise TypeError("give n_components, a0 and b0 to the model object, not to fit")
        return model
    if isinstance(model, str):
        if model not in _MODELS:
            raise ValueError(f"unknown model {model!r}; choose one of {sorted(_MODELS)} "
                             "or pass a PoissonFactorization instance")
        if n_components is None:
            raise TypeError(f"model {model!r} needs n_components (the number of components)")
        kwargs = {k: v for k, v in (("a0", a0), ("b0", b0)) if v is not None}
        return _MODELS[model](n_components, **kwargs)
    raise TypeError("model must be a PoissonFactorization or a model name, "
                    f"got {type(model).__name__}")


# ---------------------------------------------------------------------------------------------
# where the counts of each sweep come from
# ---------------------------------------------------------------------------------------------

class _PrivateCounts:
    """Draws the true counts from the privacy step (the data are ``y_tilde`` and ``alpha``)."""

    def __init__(self, y_tilde: np.ndarray, noise: NoiseLevels, step: PrivacyStep):
        self.y_tilde, self.noise, self.step = y_tilde, noise, step
        self._log_noise = None

    def initial_counts(self) -> np.ndarray:
        return np.maximum(self.y_tilde, 0)

    def init_aux(self, seed: int) -> dict[str, np.ndarray]:
        return self.step.init_state(self.y_tilde, self.noise, seed)

    def sample(self, snap, observed, seed, iteration):
        return self.step.sample(self.y_tilde, self.noise, snap.mu, observed.mask, snap.aux, seed,
                                iteration)

    def log_noise(self, y: np.ndarray, observed: Observed) -> float:
        """sum over observed entries of log 2Geo(y_tilde - y; alpha) (in blocks of entries)."""
        if self._log_noise is None:
            values = self.noise.values
            self._log_noise = (np.log(values), np.log1p(-values) - np.log1p(values))
        log_alpha, log_norm = self._log_noise
        stride = self.noise.stride
        y_tilde, y, mask = self.y_tilde.reshape(-1), np.ravel(y), observed.mask.reshape(-1)
        total = 0.0
        for lo in range(0, y.size, LOG_DENSITY_BLOCK):
            hi = min(lo + LOG_DENSITY_BLOCK, y.size)
            which = np.arange(lo, hi) // stride
            terms = log_norm[which] + np.abs(y_tilde[lo:hi] - y[lo:hi]) * log_alpha[which]
            total += float(terms.sum() if observed.complete else terms[mask[lo:hi]].sum())
        return total


class _SparsePrivateCounts(_PrivateCounts):
    """The collapsed step of the topic model in sparse form: draws are made on allocation."""

    def __init__(self, y_tilde: np.ndarray, noise: NoiseLevels, observed: Observed):
        super().__init__(y_tilde, noise, PRIVACY_STEPS["collapsed"]())
        self.sparse_step = SparseTopicPrivacy(y_tilde, noise, observed.mask)

    def sample(self, snap, observed, seed, iteration):
        return self.sparse_step.sample(seed, iteration), {}


def sparse_applies(model: PoissonFactorization, method: str, noise: NoiseLevels | None) -> bool:
    """Whether the sparse topic sampler serves this model, method and noise layout.

    It needs the built-in topic model's rates and allocation (a subclass that overrides
    ``rate``, ``allocate`` or ``update_latents`` gets the dense sampler), the collapsed method
    and an ``alpha`` that is constant within rows.
    """
    cls = type(model)
    return (method == "collapsed" and isinstance(model, TopicModel)
            and all(getattr(cls, name) is getattr(TopicModel, name)
                    for name in ("rate", "allocate", "update_latents"))
            and noise is not None and noise.per_row() is not None)


class _FixedCounts:
    """Counts treated as the truth: ``y`` (non-private) or ``max(y_tilde, 0)`` (naive)."""

    def __init__(self, y: np.ndarray):
        self.y = y

    def initial_counts(self) -> np.ndarray:
        return self.y

    def init_aux(self, seed: int) -> dict[str, np.ndarray]:
        return {}

    def sample(self, snap, observed, seed, iteration):
        return self.y, snap.aux

    def log_noise(self, y, observed) -> float:
        return 0.0


# ---------------------------------------------------------------------------------------------
# the chain
# ---------------------------------------------------------------------------------------------

class _Snapshot:
    """Everything that defines the chain after ``iteration`` sweeps (replaced, never mutated).

    ``counts`` is the draw of ``y`` (an array, or a sparse draw); the dense ``y`` and the rates
    ``mu`` are formed on first use only (the sparse sampler never needs them).
    """

    __slots__ = ("state", "aux", "counts", "iteration", "_rate", "_mu")

    def __init__(self, state, aux, counts, iteration, rate):
        self.state, self.aux, self.counts, self.iteration = state, aux, counts, iteration
        self._rate, self._mu = rate, None

    @property
    def y(self) -> np.ndarray:
        return as_dense_counts(self.counts)

    @property
    def mu(self) -> np.ndarray:
        if self._mu is None:
            self._mu = self._rate(self.state)
        return self._mu


#: expectation sweeps of ``init="em"`` (each costs about three dense products of the data's size)
EM_INIT_SWEEPS = 200


class GibbsSampler:
    """One Markov chain of a model and a count source; :meth:`sweep` advances it by one iteration.

    Build it with :meth:`private` or :meth:`nonprivate` (the same privacy boundary as the fit
    functions). Attributes ``state`` (latents), ``aux`` (privacy-step state, e.g. ``lam_plus``),
    ``y`` (counts used by the last sweep), ``mu`` (current rates) and ``iteration``.
    """

    def __init__(self, model: PoissonFactorization, source, observed: Observed, method: str,
                 seed: int, init="data"):
        self.model, self.source, self.observed, self.method = model, source, observed, method
        self.engine = "sparse" if isinstance(source, _SparsePrivateCounts) else "dense"
        self.seed = seed
        shape = observed.shape
        y0 = source.initial_counts()
        if isinstance(init, dict):
            state = model.check_state(init, shape)
        elif init in ("prior", "data", "em"):
            state = model.sample_prior(shape, derive_seed(seed, _TAG_INIT_PRIOR))
            if init == "data":
                # one model sweep on the best guess of the counts the data offer
                state = model.step(state, y0, observed, derive_seed(seed, _TAG_INIT_STEP), 0)
            elif init == "em":
                if type(model).expectation_step is PoissonFactorization.expectation_step:
                    raise ValueError(f"init='em' needs the model's expectation_step, which the "
                                     f"{model.name!r} model does not have; use init='data'")
                for _ in range(EM_INIT_SWEEPS):
                    state = model.expectation_step(state, y0, observed)
                state = model.check_state(state, shape)
        else:
            raise ValueError("init must be 'data', 'em', 'prior' or a dict of latent arrays, "
                             f"got {init!r}")
        self._snap = _Snapshot(state, source.init_aux(seed), y0, 0, model.rate)

    # ----- construction ---------------------------------------------------------------------
    @classmethod
    def private(cls, y_tilde, alpha, model, *, method="collapsed", seed=None, mask=None,
                init="data", sparse=None):
        """Chain for privatized counts; ``seed`` is an int, a Generator or None.

        ``sparse``: None uses the sparse topic sampler where it applies, False never, True
        requires it (ValueError where it does not apply).
        """
        if sparse not in (None, True, False):
            raise TypeError(f"sparse must be None, True or False, got {sparse!r}")
        y_tilde = as_count_array(y_tilde, "y_tilde", signed=True)
        observed = _observed_for(model, y_tilde.shape, mask)
        if method not in PRIVATE_METHODS:
            raise ValueError(f"method must be one of {PRIVATE_METHODS}, got {method!r}")
        if method == "naive":
            if alpha is not None:
                noise_levels(alpha, y_tilde.shape)  # validated for a clear error, then unused
            source = _FixedCounts(np.maximum(y_tilde, 0))
        else:
            noise = noise_levels(alpha, y_tilde.shape)
            if sparse is not False and sparse_applies(model, method, noise):
                source = _SparsePrivateCounts(y_tilde, noise, observed)
            else:
                source = _PrivateCounts(y_tilde, noise, PRIVACY_STEPS[method]())
        if sparse and not isinstance(source, _SparsePrivateCounts):
            raise ValueError("sparse=True needs method='collapsed', the built-in TopicModel and "
                             "an alpha that is constant within rows (scalar or shape (D, 1))")
        return cls(model, source, observed, method, kernel_seed(seed), init)

    @classmethod
    def nonprivate(cls, y, model, *, seed=None, mask=None, init="data"):
        """Chain for the true counts ``y`` (the non-private reference)."""
        y = as_count_array(y, "y", signed=False)
        observed = _observed_for(model, y.shape, mask)
        return cls(model, _FixedCounts(y), observed, "nonprivate", kernel_seed(seed), init)

    # ----- state ------------------------------------------------------------------------------
    state = property(lambda self: self._snap.state)
    aux = property(lambda self: self._snap.aux)
    y = property(lambda self: self._snap.y)
    mu = property(lambda self: self._snap.mu)
    iteration = property(lambda self: self._snap.iteration)

    def restore(self, state: dict, aux: dict, iteration: int) -> None:
        """Put the chain at a saved point (used when resuming a checkpoint)."""
        state = self.model.check_state(state, self.observed.shape)
        aux = {k: np.array(v, order="C", copy=True) for k, v in aux.items()}
        self._snap = _Snapshot(state, aux, self.source.initial_counts(), iteration,
                               self.model.rate)

    def sweep(self) -> None:
        """One iteration: privacy step, allocation, factor updates, rates."""
        snap = self._snap
        t = snap.iteration
        y, aux = self.source.sample(snap, self.observed, derive_seed(self.seed, _TAG_PRIVACY), t)
        state = self.model.step(snap.state, y, self.observed, derive_seed(self.seed, _TAG_MODEL), t)
        self._snap = _Snapshot(state, aux, y, t + 1, self.model.rate)  # the sweep's commit point

    def log_joint(self) -> float:
        """log p(Z, y, y_tilde) of the current point (``log p(Z, y)`` without a privacy step)."""
        snap = self._snap
        return (self.model.log_joint(snap.state, snap.y, self.observed, snap.mu)
                + self.source.log_noise(snap.y, self.observed))


def _observed_for(model: PoissonFactorization, shape, mask) -> Observed:
    model.check_shape(shape)
    observed = observed_mask(mask, shape)
    never = model.always_missing(shape)
    if never is not None:
        observed &= ~never
    obs = Observed(observed)
    model.check_observed(obs)
    return obs


# ---------------------------------------------------------------------------------------------
# results and checkpoints
# ---------------------------------------------------------------------------------------------

@dataclass
class FitResult:
    """Output of :func:`fit_private` / :func:`fit_nonprivate`.

    ``samples[name]`` stacks the saved draws of each latent along axis 0 (and of the counts
    ``"y"`` when ``save_counts=True``); ``saved_iterations`` are their 1-based iteration numbers;
    ``mu_hat`` is the mean of ``mu`` over the saved iterations (None before the first);
    ``log_joint`` is per saved sample; ``iter_seconds`` is per completed iteration (the first
    includes numba's compilation). ``state``/``aux`` are the chain's last point; ``engine`` is
    ``"sparse"`` or ``"dense"`` (see the module docstring).
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

    @property
    def n_saved(self) -> int:
        return int(self.saved_iterations.size)

    @property
    def complete(self) -> bool:
        return self.iterations_done >= self.n_iter


class _Entry(tuple):
    """A completed iteration: ``(t, seconds, draws, log_joint, mu_sum)``, draws None if unsaved."""

    __slots__ = ()
    t = property(lambda self: self[0])
    seconds = property(lambda self: self[1])
    draws = property(lambda self: self[2])
    log_joint = property(lambda self: self[3])
    mu_sum = property(lambda self: self[4])


class _Record:
    """The run's history, one :class:`_Entry` per completed iteration.

    Each iteration's bookkeeping ends in a single ``list.append``, so a Ctrl-C can never leave
    it half-written; the only gap it can leave is a sweep whose entry was not appended yet,
    which :meth:`book` then completes from the chain (the same values, without the timing).
    """

    def __init__(self, names, burn_in: int, thin: int):
        self.names, self.burn_in, self.thin = tuple(names), burn_in, thin
        self.entries: list[_Entry] = []

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

    def book(self, sampler: "GibbsSampler", seconds: float) -> None:
        t = sampler.iteration
        if self.is_saved(t):
            draws = {n: (sampler.y if n == "y" else sampler.state[n]) for n in self.names}
            mu_sum = self.mu_sum
            mu_sum = sampler.mu.copy() if mu_sum is None else mu_sum + sampler.mu
            entry = _Entry((t, seconds, draws, sampler.log_joint(), mu_sum))
        else:
            entry = _Entry((t, seconds, None, None, None))
        self.entries.append(entry)
        if entry.draws is not None:
            self._drop_older_sums()

    def _drop_older_sums(self) -> None:
        """Only the last saved entry needs its running sum: free the others' (one array of the
        data's size per saved sample otherwise). Each replacement is one list assignment."""
        for i in range(len(self.entries) - 2, -1, -1):
            e = self.entries[i]
            if e.mu_sum is not None:
                self.entries[i] = _Entry((e.t, e.seconds, e.draws, e.log_joint, None))
                break

    def saved(self) -> list[_Entry]:
        return [e for e in self.entries if e.draws is not None]

    def arrays(self) -> dict[str, np.ndarray]:
        saved = self.saved()
        out = {"saved_iterations": np.array([e.t for e in saved], dtype=np.int64),
               "log_joint": np.array([e.log_joint for e in saved], dtype=np.float64),
               "iter_seconds": np.array([e.seconds for e in self.entries], dtype=np.float64)}
        for n in self.names:
            out[f"samples__{n}"] = (np.stack([e.draws[n] for e in saved]) if saved
                                    else np.empty((0,)))
        if saved:
            out["mu_sum"] = saved[-1].mu_sum
        return out

    def load(self, extra: dict, samples: dict) -> None:
        saved_at = {int(t): i for i, t in enumerate(extra["saved_iterations"])}
        mu_sum = extra.get("mu_sum")
        last_saved = max(saved_at) if saved_at else None
        for t, seconds in enumerate(extra["iter_seconds"].tolist(), start=1):
            if t in saved_at:
                i = saved_at[t]
                draws = {n: samples[n][i] for n in self.names}
                entry = (t, seconds, draws, float(extra["log_joint"][i]),
                         mu_sum if t == last_saved else None)
            else:
                entry = (t, seconds, None, None, None)
            self.entries.append(_Entry(entry))


def _fingerprint(source, observed: Observed) -> str:
    h = hashlib.sha256()
    if isinstance(source, _PrivateCounts):
        for arr in (source.y_tilde, source.noise.values, np.array([source.noise.stride])):
            h.update(np.ascontiguousarray(arr).tobytes())
    else:
        h.update(np.ascontiguousarray(source.y).tobytes())
    h.update(observed.mask.tobytes())
    h.update(repr(observed.shape).encode())
    return h.hexdigest()


def _write_checkpoint(path: Path, meta: dict, sampler: GibbsSampler, rec: _Record) -> None:
    arrays = {"meta": np.array(json.dumps(meta))}
    for k, v in sampler.state.items():
        arrays[f"state__{k}"] = v
    for k, v in sampler.aux.items():
        arrays[f"aux__{k}"] = v
    arrays.update(rec.arrays())
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _read_checkpoint(path: Path):
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        groups = {"state": {}, "aux": {}, "samples": {}}
        for key in z.files:
            if "__" in key:
                group, name = key.split("__", 1)
                groups[group][name] = z[key]
        extra = {k: z[k] for k in ("saved_iterations", "log_joint", "iter_seconds", "mu_sum")
                 if k in z.files}
    return meta, groups, extra


# ---------------------------------------------------------------------------------------------
# the fit loop
# ---------------------------------------------------------------------------------------------

def _run(sampler: GibbsSampler, *, n_iter, burn_in, thin, save_latents, save_counts, progress,
         checkpoint, checkpoint_every, resume) -> FitResult:
    n_iter = positive_int(n_iter, "n_iter")
    burn_in = non_negative_int(burn_in, "burn_in")
    thin = positive_int(thin, "thin")
    if burn_in >= n_iter:
        raise ValueError(f"burn_in ({burn_in}) must be smaller than n_iter ({n_iter})")
    checkpoint_every = positive_int(checkpoint_every, "checkpoint_every")
    names = list(sampler.state) if save_latents else []
    if save_counts:
        names.append("y")
    rec = _Record(names, burn_in, thin)
    meta = {"version": _CHECKPOINT_VERSION, "method": sampler.method, "engine": sampler.engine,
            "model": sampler.model.params(), "seed": sampler.seed, "burn_in": burn_in,
            "thin": thin, "save": names,
            "data": _fingerprint(sampler.source, sampler.observed)}
    path = Path(checkpoint) if checkpoint is not None else None
    if resume and path is None:
        raise ValueError("resume=True needs the checkpoint path")

    if resume and path.exists():
        saved_meta, groups, extra = _read_checkpoint(path)
        for key in ("version", "method", "engine", "model", "burn_in", "thin", "save", "data"):
            if saved_meta.get(key) != meta[key]:
                raise ValueError(f"checkpoint {path} was written with a different {key!r} "
                                 f"({saved_meta.get(key)!r} != {meta[key]!r}); cannot resume")
        sampler.seed = meta["seed"] = int(saved_meta["seed"])
        sampler.restore(groups["state"], groups["aux"], int(saved_meta["iteration"]))
        rec.load(extra, groups["samples"])

    def write(interrupted: bool) -> None:
        _write_checkpoint(path, {**meta, "iteration": sampler.iteration, "n_iter": n_iter,
                                 "interrupted": interrupted}, sampler, rec)

    interrupted = False
    bar = tqdm(total=n_iter, initial=sampler.iteration,
               desc=f"{sampler.model.name}/{sampler.method}",
               disable=(not progress) if progress is not None else None, leave=False)
    try:
        while sampler.iteration < n_iter:
            t0 = time.perf_counter()
            sampler.sweep()
            rec.book(sampler, time.perf_counter() - t0)
            bar.update(1)
            t = sampler.iteration
            if path is not None and t % checkpoint_every == 0 and t < n_iter:
                write(False)
    except KeyboardInterrupt:
        interrupted = True
        if rec.last_t < sampler.iteration:  # the sweep committed but its entry was not appended
            rec.book(sampler, float("nan"))
        log.warning("interrupted after %d of %d iterations; returning the partial result",
                    sampler.iteration, n_iter)
    finally:
        bar.close()
    if path is not None:
        write(interrupted)

    arrays = rec.arrays()
    n_saved = arrays["saved_iterations"].size
    return FitResult(
        method=sampler.method, model=sampler.model.params(), seed=sampler.seed, n_iter=n_iter,
        burn_in=burn_in, thin=thin, iterations_done=sampler.iteration, interrupted=interrupted,
        saved_iterations=arrays["saved_iterations"],
        samples={n: arrays[f"samples__{n}"] for n in names},
        mu_hat=arrays["mu_sum"] / n_saved if n_saved else None,
        log_joint=arrays["log_joint"], iter_seconds=arrays["iter_seconds"],
        state=sampler.state, aux=sampler.aux, engine=sampler.engine)


_FIT_DOC_COMMON = """
    model : a :class:`PoissonFactorization` (``TopicModel(K)``, ``CommunityModel(C)``,
        ``CPTensorModel(R)`` or your own) or a model name with ``n_components`` (and optionally
        ``a0``, ``b0``: Gamma prior shape and rate, defaults 0.1 and 1).
    n_iter, burn_in, thin : total sweeps; iteration t (1-based) is saved when t > burn_in and
        (t - burn_in) % thin == 0.
    seed : int in [0, 2**63) (used as the kernels' base seed), numpy Generator or None (a base
        seed is drawn from it); ``result.seed`` records it, and ``seed=result.seed`` repeats the run.
    mask : optional bool array of the data's shape, **True = missing** (held out: no likelihood).
        The community model always masks its diagonal. An index whose entries are all masked
        is an error.
    init : ``"data"`` (prior draw, then one model sweep on the counts' best guess), ``"em"``
        (prior draw, then ``EM_INIT_SWEEPS`` expectation sweeps on that best guess — a start near
        a posterior mode, so a shorter burn-in; topic and community models), ``"prior"``, or a
        dict of latent arrays. The best guess is ``max(y_tilde, 0)`` for privatized counts.
    save_latents, save_counts : keep the saved draws of the latents / of the counts y.
    progress : tqdm bar; None shows it on interactive terminals only.
    checkpoint : path of an ``.npz`` checkpoint written every ``checkpoint_every`` iterations,
        at the end and on Ctrl-C; ``resume=True`` continues from it when it exists (it must come
        from the same data, method, model, burn_in and thin; ``n_iter`` may grow; the run keeps
        the checkpoint's seed). The file holds the chain state and every saved draw so far.
"""


def fit_private(y_tilde, alpha, model, *, method: str = "collapsed", n_components=None,
                a0=None, b0=None, n_iter: int = 1000, burn_in: int = 0, thin: int = 1, seed=None,
                mask=None, init="data", save_latents: bool = True, save_counts: bool = False,
                progress=None, checkpoint=None, checkpoint_every: int = 100,
                resume: bool = False, sparse=None) -> FitResult:
    """Locally private posterior inference from privatized counts only.

    y_tilde : privatized counts ``y + 2Geo(alpha)`` (integers, may be negative).
    alpha : the geometric mechanism's parameter in (0, 1) — scalar, per row (shape ``(D, 1)``)
        or per entry; ``alpha = exp(-epsilon / N)``. Optional for ``method="naive"``.
    method : ``"collapsed"`` (default), ``"bessel"`` or ``"naive"``.
    sparse : None (default) uses the sparse topic sampler where it applies (collapsed method,
        built-in TopicModel, alpha constant within rows), False forces the dense sampler, True
        requires the sparse one. Both target the same posterior; the random streams differ.
    """
    model = make_model(model, n_components, a0, b0)
    sampler = GibbsSampler.private(y_tilde, alpha, model, method=method, seed=seed, mask=mask,
                                   init=init, sparse=sparse)
    return _run(sampler, n_iter=n_iter, burn_in=burn_in, thin=thin, save_latents=save_latents,
                save_counts=save_counts, progress=progress, checkpoint=checkpoint,
                checkpoint_every=checkpoint_every, resume=resume)


def fit_nonprivate(y, model, *, n_components=None, a0=None, b0=None, n_iter: int = 1000,
                   burn_in: int = 0, thin: int = 1, seed=None, mask=None, init="data",
                   save_latents: bool = True, save_counts: bool = False, progress=None,
                   checkpoint=None, checkpoint_every: int = 100, resume: bool = False) -> FitResult:
    """Non-private Poisson factorization of the true counts ``y`` (the reference method).

    y : true counts (non-negative integers).
    """
    model = make_model(model, n_components, a0, b0)
    sampler = GibbsSampler.nonprivate(y, model, seed=seed, mask=mask, init=init)
    return _run(sampler, n_iter=n_iter, burn_in=burn_in, thin=thin, save_latents=save_latents,
                save_counts=save_counts, progress=progress, checkpoint=checkpoint,
                checkpoint_every=checkpoint_every, resume=resume)


fit_private.__doc__ += _FIT_DOC_COMMON
fit_nonprivate.__doc__ += _FIT_DOC_COMMON
