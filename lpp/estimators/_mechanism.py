"""The geometric mechanism as a scikit-learn transformer (:class:`GeometricMechanism`), and the
process's record of the rows it has noised (:func:`noised_rows`, :func:`forget_noised_rows`,
:class:`RenoisedRowsWarning`)."""
from __future__ import annotations

import hashlib
import math
import sys
import threading
import warnings
from dataclasses import dataclass

import numpy as np

from lpp.formats.ledger import SeveralCopiesWarning
from lpp.mechanism import GeometricMechanism as Mechanism
from lpp.mechanism import privatize
from lpp.randomness import check_rng

from ._base import (
    SKLEARN,
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    check_features,
    count_matrix,
    count_tags,
)

__all__ = ["GeometricMechanism", "NoisedRows", "RenoisedRowsWarning", "forget_noised_rows",
           "noised_rows"]

#: the noise's seed digests this tag with the seed material and the counts, so that no other
#: stream seeded with the same int draws the same numbers
_STREAM_TAG = b"lpp.estimators.GeometricMechanism noise"
_KINDS = "a numpy.random.Generator or RandomState, a non-negative int seed or None"
#: bytes drawn from a Generator or a RandomState as seed material: 128 bits, so two draws
#: never give the same key
_DRAWN_BYTES = 16
#: the record holds at most this many distinct rows, 28 bytes each (a 16-byte digest, a
#: 4-byte count, an 8-byte sum of epsilon / N): 56 MiB at most
_MAX_ROWS = 2**21
#: and at most this many releases' 16-byte digests (to tell an exact repeat from a new copy)
_MAX_RELEASES = 2**16


class RenoisedRowsWarning(SeveralCopiesWarning):
    """A transform gave new noise to rows that this process had noised before.

    Each new noisy copy of the same rows spends their privacy budget again (basic composition,
    as :func:`lpp.formats.ledger.composed_epsilon` adds up private folders); the message says
    how many rows were noised how many times and what the most-noised one has spent. A
    subclass of :class:`lpp.formats.ledger.SeveralCopiesWarning`, so a filter on that class
    covers it.
    """


@dataclass(frozen=True)
class NoisedRows:
    """What this process's :class:`GeometricMechanism` transforms have noised (:func:`noised_rows`).

    ``rows``: the distinct rows recorded; ``times``: ``{k: number of rows noised k times}``;
    ``epsilon_over_n``: the largest sum of ``epsilon / N`` over the noisings of one row, the
    composed cost of a unit change to the most-noised row (basic composition; 0 when nothing
    was noised); ``full``: True once the record reached its bound (2**21 rows), after which
    rows not recorded yet are not recorded (rows already recorded are still counted).
    """

    rows: int
    times: dict
    epsilon_over_n: float
    full: bool


class _Record:
    """Digests of the rows noised in this process (kept in memory only, never written), each
    with how many times and at what total ``epsilon / N``, and of the releases made."""

    def __init__(self):
        self._lock = threading.Lock()  # a threaded search transforms from several threads
        self._clear()

    def _clear(self):
        self.digests = np.empty(0, dtype="V16")  # sorted, for searchsorted
        self.times = np.empty(0, dtype=np.uint32)
        self.spent = np.empty(0, dtype=np.float64)
        self.releases = set()
        self.full = False
        self.warned = False

    def forget(self) -> NoisedRows:
        with self._lock:
            summary = self._summary()
            self._clear()
        return summary

    def summary(self) -> NoisedRows:
        with self._lock:
            return self._summary()

    def _summary(self) -> NoisedRows:
        times, rows = np.unique(self.times, return_counts=True)
        return NoisedRows(rows=int(self.digests.size),
                          times={int(k): int(n) for k, n in zip(times, rows)},
                          epsilon_over_n=float(self.spent.max()) if self.spent.size else 0.0,
                          full=self.full)

    def add(self, counts, released, level):
        """Record a release; the warning's message on the first new copy of a recorded row
        since the record started, else None."""
        release = _release_digest(released)
        rows = np.unique(_row_digests(counts))  # identical rows of one call: one noising each
        with self._lock:
            if release in self.releases:
                return None  # the same values again (same counts, same key): nothing new
            if len(self.releases) < _MAX_RELEASES:
                self.releases.add(release)
            at = np.searchsorted(self.digests, rows)
            inside = at < self.digests.size
            seen = np.zeros(rows.size, dtype=bool)
            seen[inside] = self.digests[at[inside]] == rows[inside]
            self.times[at[seen]] += 1
            self.spent[at[seen]] += level
            new = np.flatnonzero(~seen)
            room = _MAX_ROWS - self.digests.size
            if new.size > room:
                self.full = True
                new = new[:room]
            self.digests = np.insert(self.digests, at[new], rows[new])
            self.times = np.insert(self.times, at[new], np.uint32(1))
            self.spent = np.insert(self.spent, at[new], level)
            if self.warned or not seen.any():
                return None
            self.warned = True
            return _message(self._summary(), int(seen.sum()), rows.size, level)


def _message(summary, again, distinct, level):
    repeated = ", ".join(f"{n} row{'s' if n != 1 else ''} {k} times"
                         for k, n in sorted(summary.times.items(), reverse=True) if k > 1)
    return (
        f"GeometricMechanism gave new noise to {again} of the {distinct} distinct rows of "
        f"these counts that it had noised before in this process ({repeated}): every new "
        "noisy copy of the same rows spends their privacy budget again. By basic composition "
        f"the most-noised row has spent epsilon/N = {summary.epsilon_over_n:g} per unit of "
        f"change, not this call's {level:g}. Privatize once, and run cross-validation, model "
        "search and repeated predictions on the released counts. Warned once per process: "
        "lpp.estimators.noised_rows() gives the running total, "
        "lpp.estimators.forget_noised_rows() starts the record again.")


_RECORD = _Record()


def noised_rows() -> NoisedRows:
    """What :class:`GeometricMechanism` has noised in this process, row by row.

    Rows are told apart by their values (a digest of each row's counts), so identical rows of
    different people count as one row: the record errs on the side of warning.

    Returns
    -------
    NoisedRows
        The distinct rows recorded, how many were noised how many times, and the composed
        ``epsilon / N`` of the most-noised row.

    See Also
    --------
    forget_noised_rows : empties the record (and re-arms the warning).
    RenoisedRowsWarning : the warning on the first new noisy copy of recorded rows.

    Examples
    --------
    >>> import numpy as np
    >>> from lpp.estimators import GeometricMechanism, forget_noised_rows, noised_rows
    >>> _ = forget_noised_rows()
    >>> _ = GeometricMechanism(np.exp(-1.0), random_state=0).transform([[1, 2], [3, 4]])
    >>> noised_rows().rows, noised_rows().times
    (2, {1: 2})
    """
    return _RECORD.summary()


def forget_noised_rows() -> NoisedRows:
    """Empty this process's record of noised rows, and re-arm :class:`RenoisedRowsWarning`.

    The record lives in memory only, in this process (never on disk; each worker process of
    a parallel search keeps its own): per distinct row, the first 16 bytes of the sha256 of
    its length and its int64 counts, how many times it was noised and the sum of those
    noisings' ``epsilon / N``; and the 16-byte digests of the releases, so that the same
    values released again (the same counts under the same int seed) are not counted twice.
    It holds at most 2**21 rows (28 bytes each: 56 MiB) and 2**16 releases (a few MiB); past
    that, new rows and releases go unrecorded (a release not recorded counts again if it is
    repeated exactly). Forget it between independent studies in one process (say, a
    simulation's replicates, whose rows may coincide by chance) or in a test's setup.

    Returns
    -------
    NoisedRows
        What the record held before it was emptied.

    See Also
    --------
    noised_rows : what the record holds now.

    Examples
    --------
    >>> from lpp.estimators import forget_noised_rows, noised_rows
    >>> _ = forget_noised_rows()
    >>> noised_rows().rows
    0
    """
    return _RECORD.forget()


def _row_digests(counts) -> np.ndarray:
    """Per row, the first 16 bytes of the sha256 of its length and its int64 counts."""
    length = int(counts.shape[1]).to_bytes(8, "little")
    rows = np.ascontiguousarray(counts, dtype="<i8")
    return np.frombuffer(b"".join(hashlib.sha256(length + row.tobytes()).digest()[:16]
                                  for row in rows), dtype="V16")


def _release_digest(released) -> bytes:
    digest = hashlib.sha256(np.asarray(released.shape, dtype="<i8").tobytes())
    digest.update(np.ascontiguousarray(released, dtype="<i8").tobytes())
    return digest.digest()[:16]


def _counts_digest(counts) -> bytes:
    """sha256 of the counts as int64: dtype, shape, values in C order (so sparse, float and
    integer inputs of the same counts have the same digest)."""
    digest = hashlib.sha256(b"int64")
    digest.update(np.asarray(counts.shape, dtype="<i8").tobytes())
    digest.update(np.ascontiguousarray(counts, dtype="<i8").tobytes())
    return digest.digest()


def _noise_rng(random_state, counts):
    """The noise's ``rng`` for :func:`lpp.mechanism.privatize`.

    None stays None (fresh system randomness, the OS CSPRNG on the exact path). Otherwise a
    Generator seeded by the digest of the seed material (the int seed, or bytes drawn from the
    Generator / RandomState, which advances it) and of the counts: a copy of the same state
    (``clone``) then still gives other counts other noise.
    """
    if isinstance(random_state, np.random.RandomState):
        material = b"drawn" + random_state.bytes(_DRAWN_BYTES)
    else:
        rng = check_rng(random_state, "random_state", _KINDS)
        if rng is None:
            return None
        if isinstance(rng, np.random.Generator):
            material = b"drawn" + rng.bytes(_DRAWN_BYTES)
        else:
            seed = int(rng)
            if seed < 0:
                raise ValueError(f"a seed must be a non-negative integer, got {seed}")
            material = b"seed" + seed.to_bytes(seed.bit_length() // 8 + 1, "little")
    key = hashlib.sha256()
    for part in (_STREAM_TAG, material, _counts_digest(counts)):  # length-prefixed: unambiguous
        key.update(len(part).to_bytes(8, "little"))
        key.update(part)
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(key.digest(), "little")))


def _outside_stacklevel() -> int:
    """The ``stacklevel`` of the caller of the outermost frame of lpp's estimators or of
    scikit-learn (whose pipelines and searches call ``transform`` through joblib), so that
    the warning points at the user's line rather than at a library's."""
    frame, level, outermost = sys._getframe(1), 1, 1  # level 1: transform
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith(("lpp.estimators.", "sklearn.")):
            outermost = level
        frame, level = frame.f_back, level + 1
    return outermost + 1


class GeometricMechanism(OneToOneFeatureMixin, TransformerMixin, BaseEstimator, Mechanism):
    """Privatize counts: add two-sided geometric noise ``2Geo(alpha)`` to every entry.

    :func:`lpp.mechanism.privatize` as a transformer, for the data owners' side and for
    simulations: with ``mechanism = GeometricMechanism(epsilon=1.0)``,
    ``make_pipeline(CountVectorizer(), mechanism, PrivateTopicModel(k, mechanism=mechanism))``
    is the whole study of one corpus, the privacy level given once. It learns nothing:
    ``fit`` only checks the counts and records their number of columns; ``transform`` draws
    the noise. It is a :class:`lpp.mechanism.GeometricMechanism`, so the fits
    (:func:`lpp.inference.fit_private`, :class:`PrivateTopicModel`'s ``mechanism``) take it
    as the level their likelihood of the noised counts needs.

    Each new noisy copy of the same people's counts spends their privacy budget again:
    privatize once, and run cross-validation, model search and repeated predictions on the
    released counts, not on a pipeline that holds the mechanism (which noises every fold and
    every candidate anew). The first transform in a process that gives new noise to rows
    noised before warns (:class:`RenoisedRowsWarning`, see Notes).

    Parameters
    ----------
    alpha : float or lpp.mechanism.ExactAlpha, default=None
        The noise level ``alpha = exp(-epsilon / N)`` in (0, 1), for those who have it
        rather than ``epsilon`` (give one of the two). One number for every entry.
    epsilon : float, default=None
        The privacy budget ``epsilon`` > 0 of (N, epsilon)-limited-precision local privacy.
    N : float, default=1
        The precision: counts that differ by at most ``N`` are protected at ``epsilon``.
    exact : bool, default=False
        False: numpy's floating-point geometric draws (fast; for simulation and research).
        True: the integer-only discrete Laplace sampler of Canonne, Kamath & Steinke (2020)
        (``epsilon`` and ``N`` read as exact rationals, or ``alpha`` an ``ExactAlpha`` from
        :func:`lpp.mechanism.exact_alpha`), about a hundred times slower; with
        ``random_state=None`` its bits come from the operating system's CSPRNG, which is what
        a formal privacy claim needs.
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default=None
        The noise's randomness. None (the default): fresh system randomness on every call.
        Otherwise the noise is keyed by the counts as well as by the random state (Notes), so
        different counts always get different noise. An int: the same counts get the same
        noise on every call (reproducible; whoever holds the seed can regenerate the noise,
        so for simulations only). A Generator or a RandomState: drawn from, so every call
        gets new noise, reproducibly; a copy of it (``clone`` copies it into every fold of a
        search) gives the same counts the same noise, and other counts other noise.

    Attributes
    ----------
    n_features_in_ : int
        Number of columns seen in ``fit``.
    feature_names_in_ : ndarray of str
        The column names, when ``fit`` was given a DataFrame with string column names (with
        scikit-learn installed).

    See Also
    --------
    lpp.mechanism.privatize : the function this transformer calls.
    PrivateTopicModel : fits the topic model to its output, given this mechanism.
    lpp.mechanism.GeometricMechanism : the mechanism as a plain object (no scikit-learn).
    noised_rows : what the mechanism has noised in this process.
    forget_noised_rows : empties that record.

    Notes
    -----
    The input holds true counts: non-negative whole numbers, in an integer or a float dtype,
    or a scipy.sparse matrix (CountVectorizer's output). The output is always a dense int64
    array of the same shape (the noise makes every entry non-zero with probability
    ``2 alpha / (1 + alpha)``), or a DataFrame of the input's column names under
    ``set_output(transform="pandas")``.

    **How the noise is keyed.** Unless ``random_state`` is None, the noise's generator is
    seeded by a sha256 digest of the seed material (the int itself; or 16 bytes drawn from
    the Generator or the RandomState, which advances it) together with a sha256 digest of
    the counts (as int64: shape and values, so a sparse, a float and an integer copy of the
    same counts are the same input). One seed, or one copied state, thus never gives two
    inputs the same noise: with shared noise, ``T(A) - T(B)`` would release ``A - B``
    exactly. A row's noise depends on the whole input it arrives in, not on the row alone.

    **What repeats and what warns.** The same counts under the same int seed (or the same
    state) give the same output, which releases nothing new. Any other output for rows that
    were noised before is a new noisy copy of them: their costs add up (basic composition).
    The process keeps, in memory only, a digest of every row noised, with the number of
    noisings and their summed ``epsilon / N`` (:func:`forget_noised_rows` says what is kept,
    and its bound); the first transform that gives new noise to a recorded row warns with
    :class:`RenoisedRowsWarning`, once, saying how many rows were noised how many times and
    the ``epsilon / N`` the most-noised row has spent. A pipeline holding the mechanism in
    ``cross_val_score`` or ``GridSearchCV`` is such a case: each fold noises rows that other
    folds noised. Later new copies do not warn again until :func:`forget_noised_rows`;
    :func:`noised_rows` gives the running total. Rows are known by their values only:
    identical rows within one call count once, and rows of different people that happen to
    be identical count as one row.

    Examples
    --------
    >>> import numpy as np
    >>> from lpp.estimators import GeometricMechanism
    >>> counts = np.array([[0, 3, 1], [2, 0, 0]])
    >>> noised = GeometricMechanism(epsilon=1.0, random_state=0).fit_transform(counts)
    >>> noised.shape, noised.dtype
    ((2, 3), dtype('int64'))
    """

    def __init__(self, alpha=None, *, epsilon=None, N=1, exact=False, random_state=None):
        # scikit-learn's convention: parameters stored as given, checked when used
        self.alpha = alpha
        self.epsilon = epsilon
        self.N = N
        self.exact = exact
        self.random_state = random_state

    def fit(self, X, y=None):
        """Check the counts and record their number of columns; nothing is learnt.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            True counts (non-negative whole numbers).
        y : None
            Ignored.

        Returns
        -------
        self : GeometricMechanism

        Raises
        ------
        ValueError, TypeError
            For counts that are negative, not whole numbers or not a 2-D matrix, or a
            privacy level that is missing, given twice (``alpha`` and ``epsilon``) or out of
            range.

        Examples
        --------
        >>> from lpp.estimators import GeometricMechanism
        >>> GeometricMechanism(epsilon=1.0).fit([[1, 2], [0, 4]]).n_features_in_
        2
        """
        self._check_params()
        count_matrix(X, signed=False)
        check_features(self, X, reset=True)
        return self

    def transform(self, X):
        """Privatize the counts: ``X + tau``, every ``tau`` an independent ``2Geo(alpha)`` draw.

        Works unfitted (the mechanism is stateless); once fitted, ``X`` must have the
        columns seen in ``fit``. The noise is keyed by ``random_state`` and by ``X`` (class
        Notes): the same ``X`` under the same int seed gives the same output, any other ``X``
        other noise.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            True counts (non-negative whole numbers).

        Returns
        -------
        ndarray of int64 of shape (n_samples, n_features)
            The privatized counts (dense, whatever the input).

        Raises
        ------
        ValueError, TypeError
            As :meth:`fit`, and for another number of columns than ``fit`` saw.

        Warns
        -----
        RenoisedRowsWarning
            The first time in the process (or since :func:`forget_noised_rows`) that rows
            noised before get new noise.

        Examples
        --------
        >>> from lpp.estimators import GeometricMechanism
        >>> mechanism = GeometricMechanism(epsilon=1, N=2, exact=True, random_state=0)
        >>> mechanism.transform([[1, 0, 5]]).shape
        (1, 3)
        """
        alpha = self._check_params()
        counts = count_matrix(X, signed=False)
        if hasattr(self, "n_features_in_"):
            check_features(self, X, reset=False)
        released = privatize(counts, alpha, rng=_noise_rng(self.random_state, counts),
                             exact=bool(self.exact))
        message = _RECORD.add(counts, released, float(self.epsilon_over_n))
        if message is not None:
            warnings.warn(message, RenoisedRowsWarning, stacklevel=_outside_stacklevel())
        return released

    if SKLEARN:
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.requires_fit = False  # stateless: transform needs no fit
            count_tags(tags, positive_only=True)  # true counts
            tags.transformer_tags.preserves_dtype = []  # always int64 out
            return tags

    def _check_params(self):
        """The level as the sampler takes it (a float, or the ExactAlpha for ``exact``)."""
        level = self.level
        if np.ndim(level):
            raise ValueError(f"the privacy level must be one number, got an array of shape "
                             f"{np.shape(level)}")
        return level
