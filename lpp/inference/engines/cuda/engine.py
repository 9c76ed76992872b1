"""The topic model's sweeps on a GPU: data and state in device memory between sweeps.

Two engines, chosen like the CPU's fused engines by what the model and the count source
declare:

* :class:`CudaSparseTopicEngine` — the collapsed privacy step fused with the allocation, the
  non-positive entries handled in aggregate (as :mod:`lpp.inference.engines.sparse_topics`):
  one thread per entry of E (positive or unobserved) draws ``y`` from its exact conditional and
  splits it over topics; one thread per (row, topic) draws the tokens of the row's
  non-positive entries and their columns.
* :class:`CudaKnownTopicEngine` — known counts (the naive step, the non-private chain): one
  thread per non-zero entry splits it over topics.

Both then draw ``phi`` and ``theta`` from their Gamma conditionals on the device (one thread
per cell), in the model's order. Only what a caller reads comes back: the latents of a saved
sample, the rates and the log joint (computed on the device; the dense rates only when asked
for). A sweep writes the new factors into a second pair of buffers and swaps them at its end,
so a sweep interrupted by Ctrl-C leaves the chain at its last complete point.

What one thread's work costs, whatever the size of the counts (up to the 1e15 a fit accepts):

* an entry's count is split over the K topics a uniform per token up to
  :data:`~lpp.inference.engines.cuda.functions.BULK_COUNT` (8192) tokens, and above by K
  conditional binomials (:func:`~lpp.inference.engines.cuda.functions.build_functions`'s
  ``split_bulk``), ``O(K log n)``: a count of 10**12 costs about what one of 10**4 does;
* a (row, topic) cell's tokens on the row's non-positive entries are drawn one by one, with
  rejection on E(d), while that takes fewer than ``max(BULK_WORK, BULK_PER_COLUMN V)``
  uniforms on average (:mod:`~lpp.inference.engines.cuda.kernels`); beyond, they are split
  over Neg(d) by one multinomial, ``O(V log n)``;
* the collapsed conditional of an entry (``two_piece``) sums its weights outward from the mode
  over the range where they are not negligible: about ``78 / |log alpha|`` terms where the
  noise's geometric factor is the narrower, ``18 sqrt(m)`` where the Poisson factor of mode
  ``m`` is (at most about 1.8e7 terms at ``m = 10**12``, 5.6e8 at ``10**15``). This is the
  one part of a sweep whose cost grows with the counts.

Ordinary data stay below the thresholds of the first two: their counts and tokens are drawn one
by one, a uniform each.

Random numbers: counter-based (:mod:`lpp.inference.engines.cuda.functions`), keyed by the same
phase seeds as the CPU engines (:class:`lpp.randomness.Tag`) and named by item and iteration.
The same seed on the same device gives the same chain bit for bit, for any launch
configuration; on another GPU model or on the CPU the floating-point rounding may differ (the
CUDA compiler fuses multiply-adds), so chains agree in distribution, not bit for bit.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numba import njit

from lpp.inference.engines.cuda.kernels import ERROR_LATENT, ERROR_RATE, SEGMENTS
from lpp.inference.engines.known_topics import KnownCountsLayout
from lpp.inference.engines.sparse_topics import build_layout
from lpp.inference.log_density import ordered_sum
from lpp.randomness import Tag, derive_seed

__all__ = ["CudaKnownTopicEngine", "CudaSparseTopicEngine", "DeviceCounts", "DeviceState"]

_MASK32 = 0xFFFFFFFF


def _key(seed: int):
    """The Philox key words of a 63-bit phase seed."""
    return np.uint64(seed & _MASK32), np.uint64(seed >> 32)


def _rows_of(indptr: np.ndarray) -> np.ndarray:
    """The row of every entry of a CSR layout (int32)."""
    return np.repeat(np.arange(indptr.size - 1, dtype=np.int32), np.diff(indptr))


@njit(cache=True)
def _layout_bitmap(indptr, cols, n_cols):
    """One bit per cell, set on the entries of E: ``bitmap[d, v >> 5] >> (v & 31) & 1``."""
    n_rows = indptr.size - 1
    bitmap = np.zeros((n_rows, (n_cols + 31) // 32), dtype=np.uint32)
    for d in range(n_rows):
        for idx in range(indptr[d], indptr[d + 1]):
            v = cols[idx]
            bitmap[d, v >> 5] |= np.uint32(1) << np.uint32(v & 31)
    return bitmap


class DeviceState(Mapping):
    """The latents ``{"theta", "phi"}`` of one point of a GPU chain, read from the device on
    first access (then kept on the host).

    The device buffers it refers to are reused by the sweep after next: read it before then,
    or :meth:`to_host` it (the chain reads what it saves right after each sweep).
    """

    def __init__(self, engine, generation: int, theta, phi_t):
        self._engine, self._generation = engine, generation
        self.theta_device, self.phi_t_device = theta, phi_t
        self._host = None

    @property
    def is_current(self) -> bool:
        """Whether the device buffers still hold this point."""
        return self._engine.generation <= self._generation + 1

    def to_host(self) -> dict:
        """``{"theta", "phi"}`` as host arrays (copied once)."""
        if self._host is None:
            if not self.is_current:
                raise RuntimeError("this point of the GPU chain was overwritten on the device "
                                   "two sweeps later; read it (to_host) before sweeping on")
            backend = self._engine.backend
            theta = backend.to_host(self.theta_device)
            phi = np.ascontiguousarray(backend.to_host(self.phi_t_device).T)
            self._host = {"theta": theta, "phi": phi}
        return self._host

    def __getitem__(self, name):
        return self.to_host()[name]

    def __iter__(self):
        return iter(("theta", "phi"))

    def __len__(self) -> int:
        return 2


class DeviceCounts:
    """The draw of ``y`` made by one sweep of :class:`CudaSparseTopicEngine`, held compactly on
    the device; :meth:`dense` forms the matrix there (redrawing the tokens' columns from their
    own streams) and copies it back. Valid until the next sweep starts."""

    def __init__(self, engine, generation: int, iteration: int, token_key):
        self._engine, self._generation = engine, generation
        self.iteration, self._token_key = iteration, token_key
        self._device = None
        self._host = None

    @property
    def shape(self):
        return self._engine.shape

    def device_dense(self):
        """The dense draw as a device array (formed once)."""
        eng = self._engine
        if eng.draw_generation != self._generation:
            raise RuntimeError("this draw of y was overwritten on the device by a later "
                               "sweep; read it before sweeping on")
        if self._device is None:
            self._device = eng.dense_counts(self.iteration, self._token_key)
        return self._device

    def dense(self) -> np.ndarray:
        """``y`` as an int64 host matrix (made once; do not modify it)."""
        if self._host is None:
            self._host = self._engine.backend.to_host(self.device_dense())
        return self._host


class _DeviceTopicEngine:
    """What both GPU topic engines share: the factors on the device, their Gamma updates, the
    rates and the log joint."""

    name = "cuda"

    def for_new_data(self, source, observed: np.ndarray):
        """An engine of this kind, on the same device, for another data set of the same shape
        (:meth:`lpp.inference.GibbsSampler.replace_data`)."""
        return self.for_source(source, observed, self.backend)

    def __init__(self, shape, observed: np.ndarray, backend, models_noise: bool):
        if not np.all(observed):
            raise ValueError("device='cuda' fits fully observed data: a mask (held-out "
                             "entries) runs on the CPU (device='cpu')")
        self.backend = backend
        self.shape = tuple(shape)
        self.models_noise = models_noise
        self.generation = 0  # complete sweeps made on the device
        self.draw_generation = -1
        self._n_topics = None
        self._current = None  # the DeviceState of the device's latest point

    # ----- buffers -------------------------------------------------------------------------------
    def _allocate(self, n_topics: int) -> None:
        if self._n_topics == n_topics:
            return
        b = self.backend
        n_rows, n_cols = self.shape
        self._check_memory(n_topics)
        self.kernels = b.kernels(n_topics)
        self._theta = [b.zeros((n_rows, n_topics), np.float64) for _ in range(2)]
        self._phi_t = [b.zeros((n_cols, n_topics), np.float64) for _ in range(2)]
        self.doc_topic = b.zeros((n_rows, n_topics), np.int64)
        self.word_topic = b.zeros((n_cols, n_topics), np.int64)
        self.errors = b.zeros(1, np.int64)
        self._partial = b.zeros((n_topics, SEGMENTS), np.float64)
        self._offsets = b.zeros((n_topics, SEGMENTS), np.float64)
        self._theta_sums = b.zeros(n_topics, np.float64)
        self._phi_sums = b.zeros(n_topics, np.float64)
        self._row_values = b.zeros(n_rows, np.float64)
        self._rates = None
        self._allocate_draw(n_topics)
        self._n_topics = n_topics
        self._current = None

    def _allocate_draw(self, n_topics: int) -> None:
        """The buffers of the engine's own draw (none for known counts)."""

    def device_bytes(self, n_topics: int) -> int:
        """Device memory the engine holds for ``n_topics`` topics, without the dense rates and
        counts formed on request (each ``8 D V`` bytes)."""
        n_rows, n_cols = self.shape
        return 8 * (2 * (n_rows + n_cols) * n_topics * 2 + 3 * n_rows) + self._data_bytes(
            n_topics)

    def _data_bytes(self, n_topics: int) -> int:
        raise NotImplementedError

    def _check_memory(self, n_topics: int) -> None:
        free = self.backend.free_bytes()
        n_rows, n_cols = self.shape
        need = self.device_bytes(n_topics) + 16 * n_rows * n_cols  # + dense rates and counts
        if free is not None and need > free:
            raise MemoryError(
                f"the GPU engine needs about {need / 2**30:.2f} GiB of device memory for data "
                f"of shape {self.shape} with {n_topics} topics (data, state and the dense rates "
                f"and counts of a saved sweep); {free / 2**30:.2f} GiB are free on "
                f"{self.backend.describe()}. Fit on the CPU (device='cpu'), or on row blocks "
                "of the data with a cluster")

    def _load(self, state) -> DeviceState:
        """The device point of ``state``: this engine's own current point, or uploaded."""
        if isinstance(state, DeviceState) and state._engine is self and state.is_current:
            return state
        theta = np.ascontiguousarray(state["theta"], dtype=np.float64)
        phi = np.asarray(state["phi"], dtype=np.float64)
        self._allocate(theta.shape[1])
        b = self.backend
        slot = self.generation % 2
        self._theta[slot] = b.to_device(theta)
        self._phi_t[slot] = b.to_device(np.ascontiguousarray(phi.T))
        self._current = DeviceState(self, self.generation, self._theta[slot], self._phi_t[slot])
        return self._current

    # ----- pieces of a sweep ---------------------------------------------------------------------
    def _launch(self, name: str, n: int, *args) -> None:
        self.backend.launch(self.kernels, name, n, *args)

    def _column_sums(self, mat, out) -> None:
        """``out[k] = sum_r mat[r, k]`` over fixed segments, in order."""
        k = self._n_topics
        self._launch("segment_sums", k * SEGMENTS, mat, self._partial)
        self._launch("segment_offsets", k, self._partial, self._offsets, out)

    def _prefix(self, mat, cum, totals) -> None:
        """``cum[k, r] = sum_{j <= r} mat[j, k]`` and the totals, over the same segments."""
        self._column_sums(mat, totals)
        self._launch("segment_prefix", self._n_topics * SEGMENTS, mat, self._offsets, cum)

    def _update_factors(self, model, point: DeviceState, model_seed: int, iteration: int):
        """``phi``, then ``theta`` from their Gamma conditionals given the allocation
        (:meth:`lpp.inference.TopicModel.update_latents`), into the spare buffers."""
        latents = derive_seed(model_seed, Tag.LATENTS)
        n_rows, n_cols = self.shape
        k = self._n_topics
        slot = (self.generation + 1) % 2
        theta_new, phi_new = self._theta[slot], self._phi_t[slot]
        self._column_sums(point.theta_device, self._theta_sums)
        self._launch("gamma_cell", n_cols * k, self.word_topic, float(model.a0),
                     float(model.b0), self._theta_sums, *_key(derive_seed(latents, Tag.LATENT_1)),
                     iteration, phi_new, self.errors)
        self._column_sums(phi_new, self._phi_sums)
        self._launch("gamma_cell", n_rows * k, self.doc_topic, float(model.a0),
                     float(model.b0), self._phi_sums, *_key(derive_seed(latents, Tag.LATENT_2)),
                     iteration, theta_new, self.errors)
        return theta_new, phi_new

    def _check_errors(self) -> None:
        code = int(self.backend.to_host(self.errors)[0])
        if code == ERROR_RATE:
            raise ValueError("the chain diverged on the GPU: a Poisson rate was not finite or "
                             "above 2**53 (check the data and the prior)")
        if code == ERROR_LATENT:
            raise ValueError("the chain diverged on the GPU: a Gamma draw of the latents was "
                             "not a positive finite number")

    def _commit(self, theta_new, phi_new) -> DeviceState:
        self.generation += 1
        self._current = DeviceState(self, self.generation, theta_new, phi_new)
        return self._current

    def sweep(self, model, state, observed, privacy_seed: int, model_seed: int,
              iteration: int):
        """``(new state, draw of y)`` after one sweep on the device."""
        point = self._load(state)
        self.backend.fill_zero(self.doc_topic)
        self.backend.fill_zero(self.word_topic)
        y = self._allocation(point, privacy_seed, model_seed, iteration)
        theta_new, phi_new = self._update_factors(model, point, model_seed, iteration)
        self._check_errors()
        return self._commit(theta_new, phi_new), y

    # ----- what a caller reads ------------------------------------------------------------------
    def rates(self, state) -> np.ndarray:
        """The dense rates ``theta @ phi`` of ``state`` (formed on the device, in topic order)."""
        point = self._load(state)
        if self._rates is None:
            self._rates = self.backend.zeros(self.shape, np.float64)
        n_rows, n_cols = self.shape
        self._launch("rate_cell", n_rows * n_cols, point.theta_device, point.phi_t_device,
                     self._rates)
        return self.backend.to_host(self._rates)

    def log_joint(self, model, state, counts) -> float:
        """``log p(theta, phi, y, y_tilde)`` (without the noise term for known counts): the
        per-row sums on the device, added on the host in row order."""
        point = self._load(state)
        host = point.to_host()
        sum_mu = float(host["theta"].sum(axis=0) @ host["phi"].sum(axis=1))
        rows = self._row_loglik(point, counts)
        return model.log_prior(host) + rows - sum_mu + self._log_noise(counts)

    def sums_log_joint(self, counts) -> bool:
        """Whether :meth:`log_joint` takes ``counts`` (the draw of a sweep on this device)."""
        raise NotImplementedError

    def _row_loglik(self, point, counts) -> float:
        raise NotImplementedError

    def _log_noise(self, counts) -> float:
        return 0.0


class CudaSparseTopicEngine(_DeviceTopicEngine):
    """The collapsed privacy step fused with the topic model's allocation, on the GPU (see the
    module docstring). Applies where :class:`~lpp.inference.engines.SparseTopicEngine` does and
    the model declares ``"gamma_factors"``."""

    name = "cuda-sparse"

    @staticmethod
    def applies(model, step, noise) -> bool:
        return ("gamma_factors" in model.capabilities
                and "exact_conditional" in step.capabilities
                and noise is not None and noise.per_row() is not None)

    @classmethod
    def for_source(cls, source, observed: np.ndarray, backend) -> "CudaSparseTopicEngine":
        return cls(source.y_tilde, source.noise, observed, backend)

    def __init__(self, y_tilde: np.ndarray, noise, observed: np.ndarray, backend):
        super().__init__(y_tilde.shape, observed, backend, models_noise=True)
        lay = build_layout(y_tilde, observed, noise)
        self.nnz = lay.nnz
        alpha = lay.alpha_rows
        # the noise term's fixed parts, per row: sum over Neg(d) of y_tilde, log((1-a)/(1+a))
        negative = np.minimum(y_tilde, 0).sum(axis=1, dtype=np.int64).astype(np.float64)
        self._noise_rows = (y_tilde.shape[1] * (np.log1p(-alpha) - np.log1p(alpha)),
                            np.log(alpha))
        b = backend
        self._indptr = b.to_device(lay.indptr)
        self._cols = b.to_device(lay.cols)
        self._values = b.to_device(lay.values)
        self._rows = b.to_device(_rows_of(lay.indptr))
        self._bitmap = b.to_device(_layout_bitmap(lay.indptr, lay.cols, y_tilde.shape[1]))
        self._alpha_rows = b.to_device(alpha)
        self._neg_tilde = b.to_device(negative)

    def _data_bytes(self, n_topics: int) -> int:
        n_rows, n_cols = self.shape
        # layout (cols, values, rows: 4 bytes each; pos_y 8; a bit per cell) and the draw's
        # buffers (the guide table: 4 bytes per topic and column)
        return (20 * self.nnz + 4 * n_rows * ((n_cols + 31) // 32)
                + 8 * (4 * n_rows * n_topics + n_topics * n_cols + 3 * n_rows)
                + 4 * n_topics * n_cols)

    def _allocate_draw(self, n_topics: int) -> None:
        b = self.backend
        n_rows, n_cols = self.shape
        self.pos_y = b.zeros(self.nnz, np.int64)
        self._excluded = b.zeros((n_rows, n_topics), np.float64)
        self.neg_counts = b.zeros((n_rows, n_topics), np.int64)
        self._residuals = b.zeros((n_rows, n_topics), np.float64)
        self._draw_phi_t = None
        self._cum_phi = b.zeros((n_topics, n_cols), np.float64)
        self._guide = b.zeros((n_topics, n_cols), np.int32)
        self._old_phi_sums = b.zeros(n_topics, np.float64)
        self._dense = None

    def _allocation(self, point: DeviceState, privacy_seed: int, model_seed: int,
                    iteration: int) -> DeviceCounts:
        n_rows, _ = self.shape
        k = self._n_topics
        theta, phi_t = point.theta_device, point.phi_t_device
        self.draw_generation = -1  # the draw's buffers are being overwritten
        self._prefix(phi_t, self._cum_phi, self._old_phi_sums)
        self._launch("excluded_mass", n_rows * k, self._indptr, self._cols, phi_t,
                     self._excluded)
        self._launch("collapsed_entry", self.nnz, self._rows, self._cols, self._values,
                     self._alpha_rows, theta, phi_t, *_key(derive_seed(privacy_seed, Tag.PASS1)),
                     iteration, self.pos_y, self.doc_topic, self.word_topic, self.errors)
        self._launch("negative_totals", n_rows * k, self._indptr, self._cols, self._alpha_rows,
                     theta, phi_t, self._old_phi_sums, self._excluded,
                     *_key(derive_seed(privacy_seed, Tag.NEGATIVE_TOTALS)), iteration,
                     self.neg_counts, self._residuals, self.doc_topic, self.errors)
        token_key = _key(derive_seed(privacy_seed, Tag.PASS2))
        self._launch("guide_cells", k * self.shape[1], self._cum_phi, self._guide)
        self._launch("negative_tokens", n_rows * k, self._bitmap, self._cum_phi, self._guide,
                     phi_t, self.neg_counts, self._residuals, *token_key, iteration,
                     self.word_topic, False)
        # the point swept from keeps its buffer until the next sweep writes its factors there
        self._draw_phi_t = phi_t
        self.draw_generation = self.generation + 1
        return DeviceCounts(self, self.draw_generation, iteration, token_key)

    def dense_counts(self, iteration: int, token_key):
        """The last draw of ``y`` as a dense device matrix: the entries of E scattered, the
        tokens' columns redrawn from the streams that placed them."""
        n_rows, _ = self.shape
        if self._dense is None:
            self._dense = self.backend.zeros(self.shape, np.int64)
        else:
            self.backend.fill_zero(self._dense)
        self._launch("scatter_entry", self.nnz, self._rows, self._cols, self.pos_y, self._dense)
        self._launch("negative_tokens", n_rows * self._n_topics, self._bitmap, self._cum_phi,
                     self._guide, self._draw_phi_t, self.neg_counts, self._residuals,
                     *token_key, iteration, self._dense, True)
        return self._dense

    def sums_log_joint(self, counts) -> bool:
        return isinstance(counts, DeviceCounts)  # not the start's counts, before a sweep

    def _row_loglik(self, point, counts) -> float:
        n_rows, _ = self.shape
        self._launch("dense_row_loglik", n_rows, counts.device_dense(), point.theta_device,
                     point.phi_t_device, self._row_values)
        return ordered_sum(self.backend.to_host(self._row_values))

    def _log_noise(self, counts) -> float:
        n_rows, _ = self.shape
        counts.device_dense()  # the draw must still be on the device
        self._launch("row_noise_distance", n_rows, self._indptr, self._values, self.pos_y,
                     self.neg_counts, self._neg_tilde, self._row_values)
        log_norm, log_alpha = self._noise_rows
        return ordered_sum(log_norm + log_alpha * self.backend.to_host(self._row_values))


class CudaKnownTopicEngine(_DeviceTopicEngine):
    """Known counts (the naive step, the non-private chain) allocated over topics on the GPU.
    Applies where :class:`~lpp.inference.engines.KnownCountsTopicEngine` does and the model
    declares ``"gamma_factors"``."""

    name = "cuda-known"

    @staticmethod
    def applies(model, step, noise) -> bool:
        return "gamma_factors" in model.capabilities and "known_counts" in step.capabilities

    @classmethod
    def for_source(cls, source, observed: np.ndarray, backend) -> "CudaKnownTopicEngine":
        return cls(source.initial_counts(), observed, backend)

    def __init__(self, counts: np.ndarray, observed: np.ndarray, backend):
        super().__init__(counts.shape, observed, backend, models_noise=False)
        self.counts = counts
        lay = KnownCountsLayout(counts, observed)
        self.nnz = lay.nnz
        b = backend
        self._indptr = b.to_device(lay.indptr)
        self._cols = b.to_device(lay.cols)
        self._values = b.to_device(lay.values)
        self._rows = b.to_device(_rows_of(lay.indptr))

    def _data_bytes(self, n_topics: int) -> int:
        return 16 * self.nnz + 8 * self.shape[0]

    def _allocation(self, point: DeviceState, privacy_seed: int, model_seed: int,
                    iteration: int) -> np.ndarray:
        self._launch("known_entry", self.nnz, self._rows, self._cols, self._values,
                     point.theta_device, point.phi_t_device,
                     *_key(derive_seed(model_seed, Tag.ALLOCATE)), iteration, self.doc_topic,
                     self.word_topic)
        return self.counts

    def sums_log_joint(self, counts) -> bool:
        return True  # the known counts, laid out on the device

    def _row_loglik(self, point, counts) -> float:
        self._launch("sparse_row_loglik", self.shape[0], self._indptr, self._cols, self._values,
                     point.theta_device, point.phi_t_device, self._row_values)
        return ordered_sum(self.backend.to_host(self._row_values))
