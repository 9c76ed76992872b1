"""One Markov chain: a model, a count source and (where one applies) a fused engine.

Each iteration is one sweep in the authors' order: privacy step (``y | y_tilde, mu``) ->
allocation -> factor updates -> ``mu``. Where a fused engine applies
(:func:`lpp.inference.engines.select_engine`, chosen by the capabilities the model and the
privacy step declare) the first two are done in one pass; the chain's target is the same.

Random streams: the chain's 63-bit base seed keys every draw by ``(seed, phase, iteration,
block)`` (:mod:`lpp.randomness`), so the same seed gives bit-identical chains with any number of
numba threads, and a chain restored from a checkpoint continues exactly as the original.
"""
from __future__ import annotations

import numpy as np

from lpp.randomness import Tag, derive_seed, replay_seed
from lpp.validation import count_array, is_sparse, masked_input, observed_mask
from lpp.inference.engines import CollapsedPhiTopicEngine, select_engine
from lpp.inference.log_density import ordered_sum, poisson_factor_row_sums
from lpp.inference.models import make_model
from lpp.inference.models.base import Observed, PoissonFactorization
from lpp.inference.privacy import privacy_for
from lpp.inference.count_sources import PrivateCounts, TrueCounts
from lpp.inference.sparse_counts import SparseCounts

#: where a chain's sweeps run: ``"cuda"`` needs ``lpp[gpu]`` and a GPU
DEVICES = ("cpu", "cuda")
#: expectation sweeps of ``init="em"`` (each costs about three dense products of the data's size)
EM_INIT_SWEEPS = 200


def observed_entries(model: PoissonFactorization, shape, mask, *, lazy: bool = False) -> Observed:
    """The entries that carry likelihood: not masked by the user (``mask`` True = missing) and
    not always missing for the model (e.g. self-loops); checked by the model. ``lazy``: when
    every entry is observed, no array of the data's size (:meth:`Observed.everywhere`)."""
    model.check_shape(shape)
    if lazy and mask is None and model.always_missing(shape) is None:
        return Observed.everywhere(shape)
    observed = observed_mask(mask, shape)
    never = model.always_missing(shape)
    if never is not None:
        observed &= ~never
    obs = Observed(observed)
    model.check_observed(obs)
    return obs


class _Snapshot:
    """Everything that defines the chain after ``iteration`` sweeps (replaced, never mutated).

    ``counts`` is the draw of ``y`` (an array, a fused engine's compact draw, or the
    :class:`~lpp.inference.sparse_counts.SparseCounts` of a non-private chain on sparse
    counts); the dense ``y`` and the rates ``mu`` are formed on first use only (a fused engine
    never needs them).
    """

    __slots__ = ("state", "aux", "counts", "iteration", "_rate", "_mu")

    def __init__(self, state, aux, counts, iteration, rate):
        self.state, self.aux, self.counts, self.iteration = state, aux, counts, iteration
        self._rate, self._mu = rate, None

    @property
    def y(self) -> np.ndarray:
        return self.counts if isinstance(self.counts, np.ndarray) else self.counts.dense()

    @property
    def mu(self) -> np.ndarray:
        if self._mu is None:
            self._mu = self._rate(self.state)
        return self._mu


class GibbsSampler:
    """One Markov chain of a model and a count source; :meth:`sweep` advances it by one iteration.

    Build it with :meth:`private` or :meth:`nonprivate` (the same privacy boundary as the fit
    functions).

    Attributes
    ----------
    state : dict of ndarray
        The latents at the current point.
    aux : dict of ndarray
        What the chain carries between sweeps beside its latents: the privacy step's
        auxiliary state (e.g. ``lam_plus`` of the Bessel step), and a fused engine's (the
        tokens' topics of ``collapse_phi``).
    y : ndarray
        The counts used by the last sweep.
    mu : ndarray
        The current rates.
    iteration : int
        Sweeps done.
    engine : str
        ``"dense"`` (privacy step, then ``model.step``) or the fused engine's name.
    seed : int
        The 63-bit base seed of every random stream of the chain.
    """

    def __init__(self, model: PoissonFactorization, source, observed: Observed, method: str,
                 seed: int, init="data", fused=None):
        self.model, self.source, self.observed, self.method = model, source, observed, method
        self._fused = fused
        self.engine = "dense" if fused is None else fused.name
        #: the names of the arrays the engine carries in ``aux`` once it has swept
        self.carries = tuple(getattr(fused, "carries", ()))
        backend = getattr(fused, "backend", None)
        #: where the sweeps run: "cpu", or the GPU's name
        self.device = "cpu" if backend is None else backend.describe()
        # a GPU engine forms the rates on its device; otherwise the model does
        self._rate = getattr(fused, "rates", model.rate)
        self.seed = seed
        shape = observed.shape
        y0 = source.initial_counts()
        if isinstance(init, dict):
            state = model.check_state(init, shape)
        elif callable(init):
            # a start computed by a layer above this one (e.g. lpp.vi.dispersed_start)
            state = model.check_state(init(model, source, observed, seed), shape)
        elif init in ("prior", "data", "em"):
            state = model.sample_prior(shape, derive_seed(seed, Tag.INIT_PRIOR))
            if init == "data" and isinstance(y0, SparseCounts):
                # the same sweep on the counts' non-zero entries (the known-counts engine)
                state = fused.step(model, state, observed, derive_seed(seed, Tag.INIT_STEP), 0)
            elif init == "data":
                # one model sweep on the best guess of the counts the data offer
                state = model.step(state, y0, observed, derive_seed(seed, Tag.INIT_STEP), 0)
            elif init == "em":
                if type(model).expectation_step is PoissonFactorization.expectation_step:
                    raise ValueError(f"init='em' needs the model's expectation_step, which the "
                                     f"{model.name!r} model does not have; use init='data'")
                for _ in range(EM_INIT_SWEEPS):
                    state = model.expectation_step(state, y0, observed)
                state = model.check_state(state, shape)
        else:
            raise ValueError("init must be 'data', 'em', 'prior', a dict of latent arrays or a "
                             "callable start(model, source, observed, seed) such as "
                             f"lpp.vi.dispersed_start, got {init!r}")
        self._snap = _Snapshot(state, source.init_aux(seed), y0, 0, self._rate)

    # ----- construction ---------------------------------------------------------------------
    @classmethod
    def private(cls, y_tilde, alpha, model, *, method="collapsed", rng=None, mask=None,
                init="data", sparse=None, device="cpu") -> "GibbsSampler":
        """Chain for privatized counts (arguments as for :func:`lpp.inference.fit_private`).

        ``sparse``: None uses a fused engine where one applies, False never, True requires one
        (ValueError where none applies). ``device="cuda"`` requires a GPU engine
        (:mod:`lpp.inference.engines.cuda`).
        """
        model = make_model(model)
        y_tilde, mask = masked_input(y_tilde, mask, "y_tilde")
        y_tilde = count_array(y_tilde, "y_tilde", signed=True)
        step, noise = privacy_for(alpha, method, y_tilde.shape)
        observed = observed_entries(model, y_tilde.shape, mask)
        source = PrivateCounts(y_tilde, noise, step)
        fused = _fused_engine(model, step, noise, source, observed, sparse,
                              "method='collapsed' or 'naive', the built-in TopicModel and (for "
                              "'collapsed') an alpha that is constant within rows (scalar or "
                              "shape (D, 1))", device)
        return cls(model, source, observed, step.name, replay_seed(rng), init, fused)

    @classmethod
    def nonprivate(cls, y, model, *, rng=None, mask=None, init="data", sparse=None,
                   device="cpu") -> "GibbsSampler":
        """Chain for the true counts ``y``: the non-private reference. ``sparse`` and
        ``device`` as for :meth:`private`.

        A scipy.sparse ``y`` stays sparse (:class:`~lpp.inference.sparse_counts.SparseCounts`)
        where the known-counts engine runs the chain (a model with row/column factors on the
        CPU, ``sparse`` not False): nothing of the data's size is formed unless asked for
        (``save_counts``, the rates' mean, a ``mask``, which is D x V itself). Elsewhere (the
        dense sweep, ``device="cuda"``) it is densified once, here.
        """
        model = make_model(model)
        y, mask = masked_input(y, mask, "y")
        if is_sparse(y) and not isinstance(y, SparseCounts):
            y = SparseCounts.from_input(y, "y")
        if isinstance(y, SparseCounts):
            if not _stays_sparse(model, sparse, device):
                y = y.dense()
        else:
            y = count_array(y, "y", signed=False)
        observed = observed_entries(model, y.shape, mask, lazy=isinstance(y, SparseCounts))
        source = TrueCounts(y)
        fused = _fused_engine(model, source, None, source, observed, sparse,
                              "a model with row/column factors (the built-in TopicModel)", device)
        return cls(model, source, observed, "nonprivate", replay_seed(rng), init, fused)

    # ----- state ------------------------------------------------------------------------------
    # a GPU engine's point stays on the device until it is read
    state = property(lambda self: _host_state(self._snap.state))
    # an engine's point may carry arrays of its own (lpp.inference.engines.collapsed_phi)
    aux = property(lambda self: {**self._snap.aux, **getattr(self._snap.state, "aux", {})})
    y = property(lambda self: self._snap.y)
    mu = property(lambda self: self._snap.mu)
    iteration = property(lambda self: self._snap.iteration)

    def restore(self, state: dict, aux: dict, iteration: int) -> None:
        """Put the chain at a saved point (used when resuming a checkpoint)."""
        state = self.model.check_state(state, self.observed.shape)
        aux = {k: np.array(v, order="C", copy=True) for k, v in aux.items()}
        restore = getattr(self._fused, "restore", None)
        if restore is not None:  # the engine takes the arrays it carries out of aux
            state, aux = restore(self.model, state, aux)
        self._snap = _Snapshot(state, aux, self.source.initial_counts(), iteration, self._rate)

    def replace_data(self, data: np.ndarray) -> None:
        """Swap in new data of the same shape (privatized counts for a private chain, true
        counts otherwise), keeping the chain's point. The successive-conditional simulator of
        the Geweke test draws fresh data between sweeps."""
        source = self.source
        data = np.ascontiguousarray(data, dtype=np.int64)
        if data.shape != self.observed.shape:
            raise ValueError(f"new data of shape {data.shape} for a chain of shape "
                             f"{self.observed.shape}")
        if isinstance(source, PrivateCounts):
            self.source = PrivateCounts(data, source.noise, source.step)
        else:
            self.source = TrueCounts(data)
        if self._fused is not None:
            self._fused = self._fused.for_new_data(self.source, self.observed.is_observed)
            self._rate = getattr(self._fused, "rates", self.model.rate)

    def sweep(self) -> None:
        """One iteration: privacy step, allocation, factor updates, rates."""
        snap = self._snap
        t = snap.iteration
        privacy_seed = derive_seed(self.seed, Tag.PRIVACY)
        model_seed = derive_seed(self.seed, Tag.MODEL)
        if self._fused is not None:
            state, y = self._fused.sweep(self.model, snap.state, self.observed, privacy_seed,
                                         model_seed, t)
            aux = snap.aux
        else:
            y, aux = self.source.sample(snap.mu, self.observed, snap.aux, privacy_seed, t)
            state = self.model.step(snap.state, y, self.observed, model_seed, t)
        self._snap = _Snapshot(state, aux, y, t + 1, self._rate)  # the sweep's commit point

    def log_joint(self) -> float:
        """log p(Z, y, y_tilde) of the current point (``log p(Z, y)`` without a noise model)."""
        snap = self._snap
        fused = self._fused
        if isinstance(self.source, TrueCounts) and self.source.sparse:
            return self._sparse_log_joint(snap)
        if hasattr(fused, "log_joint") and fused.sums_log_joint(snap.counts):
            return fused.log_joint(self.model, snap.state, snap.counts)  # on the GPU
        return (self.model.log_joint(_host_state(snap.state), snap.y, self.observed, snap.mu)
                + self.source.log_noise(snap.y, self.observed))

    def _sparse_log_joint(self, snap: _Snapshot) -> float:
        """``log p(Z, y)`` of sparse known counts without their dense matrix or the dense
        rates (:func:`lpp.inference.log_density.poisson_factor_row_sums`: the same terms in
        the same order as :meth:`PoissonFactorization.log_joint` on the dense matrix, so the
        same float)."""
        counts, observed = self.source.y, self.observed
        state = _host_state(snap.state)
        theta, phi = self.model.row_column_factors(state)
        rows = poisson_factor_row_sums(counts.indptr, counts.indices, counts.data, theta, phi,
                                       None if observed.complete else observed)
        return self.model.log_prior(state) + ordered_sum(rows)

    def fingerprint(self) -> str:
        """A digest of the chain's data, mask and noise levels (checkpoints are tied to it)."""
        return self.source.fingerprint(self.observed)


def _host_state(state):
    """``state`` as a dict of host arrays (a GPU engine's point is copied back once)."""
    return state if isinstance(state, dict) else state.to_host()


def _stays_sparse(model, sparse, device: str) -> bool:
    """Whether a non-private chain on sparse counts runs on them as they are: the known-counts
    engine on the CPU."""
    return (device == "cpu" and sparse is not False
            and select_engine(model, TrueCounts, None) is not None)


def _fused_engine(model, step, noise, source, observed: Observed, sparse, needs: str,
                  device: str = "cpu"):
    """The fused engine of the chain (None for the plain sweep): ``sparse`` None takes one
    where one applies, False never, True requires one (ValueError naming ``needs``); on
    ``device="cuda"`` the GPU engine, which must apply."""
    if sparse not in (None, True, False):
        raise TypeError(f"sparse must be None, True or False, got {sparse!r}")
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    if device == "cuda":
        return _cuda_engine(model, step, noise, source, observed, sparse)
    engine = select_engine(model, step, noise) if sparse is not False else None
    if sparse and engine is None:
        raise ValueError(f"sparse=True needs {needs}")
    if engine is None and getattr(model, "collapse_theta", False):
        raise ValueError("collapse_theta=True runs in the fused topic engines only (sparse=None "
                         f"or True with {needs}), not in the dense sweep")
    if getattr(model, "collapse_phi", False) and not (
            engine is not None and engine.name == CollapsedPhiTopicEngine.name):
        raise ValueError("collapse_phi=True runs on known counts only (fit_nonprivate, or "
                         "method='naive') in its CPU engine (sparse=None or True), not in the "
                         "dense sweep nor with a privacy step that draws the counts")
    return engine.for_source(source, observed.is_observed) if engine is not None else None


def _cuda_engine(model, step, noise, source, observed: Observed, sparse):
    """The GPU engine of the chain; ValueError naming what keeps it from applying."""
    if sparse is False:
        raise ValueError("device='cuda' runs the GPU's fused topic engines; sparse=False asks "
                         "for the dense CPU sweep")
    # the GPU's door: numba-cuda is imported only when a chain asks for device='cuda'
    from lpp.inference.engines.cuda import backend, select_cuda_engine  # noqa: PLC0415

    engine = select_cuda_engine(model, step, noise)
    if engine is None:
        raise ValueError(
            "device='cuda' runs the built-in TopicModel (collapse_theta=False, "
            "collapse_phi=False) with "
            "method='collapsed' (alpha constant within rows: a scalar or shape (D, 1)), "
            f"'naive' or the non-private chain; got the {model.name!r} model with "
            f"{getattr(step, 'name', 'the true counts')!r}")
    return engine.for_source(source, observed.is_observed, backend())
