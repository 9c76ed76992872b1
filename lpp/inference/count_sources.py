"""Where the counts of each sweep come from: privatized data through a privacy step, or fixed
true counts.

A count source owns its data and, for privatized data, the noise levels and the privacy step;
it gives the chain the first guess of the counts, a draw of the counts given the current rates,
the noise's log density (the part of the log joint that the model does not know) and a
fingerprint of the data that checkpoints are tied to.
"""
from __future__ import annotations

import hashlib

import numpy as np

from lpp.inference.log_density import ordered_sum
from lpp.inference.models.base import Observed
from lpp.inference.privacy import NoiseLevels, PrivacyStep
from lpp.inference.sparse_counts import BLOCK_ENTRIES, SparseCounts


class PrivateCounts:
    """Privatized counts ``y_tilde``, their noise model (the geometric mechanism's
    :class:`NoiseLevels`, or a registered mechanism's: :mod:`lpp.inference.privacy.mechanisms`)
    and the privacy step that draws ``y``.

    ``noise`` may be None only for a step that does not model the noise (the naive method).
    """

    def __init__(self, y_tilde: np.ndarray, noise: NoiseLevels | None, step: PrivacyStep):
        self.y_tilde, self.noise, self.step = y_tilde, noise, step

    @property
    def data(self) -> np.ndarray:
        return self.y_tilde

    def initial_counts(self) -> np.ndarray:
        return self.step.initial_counts(self.y_tilde)

    def init_aux(self, seed: int) -> dict[str, np.ndarray]:
        return self.step.init_state(self.y_tilde, self.noise, seed)

    def sample(self, mu, observed: Observed, aux, seed: int, iteration: int):
        """``(y, aux)``: one draw of the privacy step given the rates ``mu``."""
        return self.step.sample(self.y_tilde, self.noise, mu, observed.is_observed, aux, seed, iteration)

    def log_noise(self, y: np.ndarray, observed: Observed) -> float:
        """Sum over observed entries of ``log P(y_tilde | y)`` (0 for a step that does not
        model the noise), row by row in a fixed order (the noise model's rows, e.g.
        ``log 2Geo(y_tilde - y; alpha)`` for the geometric mechanism:
        :mod:`lpp.inference.log_density`)."""
        if not self.step.models_noise:
            return 0.0
        return ordered_sum(self.noise.log_density_rows(self.y_tilde, y, observed))

    def fingerprint(self, observed: Observed) -> str:
        parts = [self.y_tilde]
        if self.noise is not None:
            parts += list(self.noise.fingerprint_parts())
        return _digest(parts, observed)


class TrueCounts:
    """True counts ``y`` (the non-private reference): the same counts in every sweep.

    It declares ``"known_counts"`` (the promise of a privacy step of that capability, see
    :class:`~lpp.inference.privacy.PrivacyStep`), so the fused engines treat it as one. ``y``
    is a dense int64 array or :class:`~lpp.inference.sparse_counts.SparseCounts` (which only
    the known-counts engine reads; its fingerprint is the dense matrix's).
    """

    capabilities = frozenset({"known_counts"})

    def __init__(self, y):
        self.y = y

    @property
    def sparse(self) -> bool:
        """Whether the counts are held in CSR form."""
        return isinstance(self.y, SparseCounts)

    @property
    def data(self) -> np.ndarray:
        return self.y

    def initial_counts(self) -> np.ndarray:
        return self.y

    def init_aux(self, seed: int) -> dict[str, np.ndarray]:
        return {}

    def sample(self, mu, observed: Observed, aux, seed: int, iteration: int):
        return self.y, aux

    def log_noise(self, y, observed: Observed) -> float:
        return 0.0

    def fingerprint(self, observed: Observed) -> str:
        if self.sparse:
            return _digest_blocks(self.y, observed)
        return _digest([self.y], observed)


def _digest(arrays, observed: Observed) -> str:
    h = hashlib.sha256()
    # the arrays' own buffers, not tobytes() copies: the data may be most of the memory
    for arr in arrays:
        h.update(np.ascontiguousarray(arr))
    h.update(np.ascontiguousarray(observed.is_observed))
    h.update(repr(observed.shape).encode())
    return h.hexdigest()


def _digest_blocks(counts: SparseCounts, observed: Observed) -> str:
    """:func:`_digest` of ``[counts.dense()]``, fed row block by row block: the same bytes in
    the same order, so the same digest, without the D x V array."""
    h = hashlib.sha256()
    for lo, hi in counts.row_blocks():
        h.update(counts.rows(lo, hi))
    if observed.is_observed.strides == (0,) * observed.is_observed.ndim:  # every entry
        ones = np.ones(BLOCK_ENTRIES, dtype=bool)
        left = observed.is_observed.size
        while left:
            h.update(ones[:min(left, ones.size)])
            left -= min(left, ones.size)
    else:
        h.update(np.ascontiguousarray(observed.is_observed))
    h.update(repr(observed.shape).encode())
    return h.hexdigest()
