"""Input checks for the whole package and for data_prep: one rule and one message per idea.

Every public function of ``lpp`` and ``data_prep`` validates through these, so bad input gets
the same clear ``TypeError``/``ValueError`` everywhere and a rule changes in one place.
Conventions: booleans are never numbers or counts (cast them explicitly); counts are integer
arrays or float arrays holding whole numbers; integer settings are Python or NumPy integers,
never bools or floats.
"""
from __future__ import annotations

import dataclasses
import numbers
import re
import warnings

import numpy as np

_INT64_SAFE = 2.0**62
#: the largest total of |counts| a fit takes: the samplers sum counts in int64, use them as
#: float64 (exact to 2**53, which leaves room for the noise a chain adds) and give the Bessel
#: step parameters up to 1e15
MAX_TOTAL_COUNT = 10**15
#: the range of a Gamma prior's shape a0 and rate b0 that a fit takes: far outside it the prior
#: alone drives the rates out of what the samplers draw (a0 = 1e300 made every rate infinite)
PRIOR_RANGE = (1e-6, 1e6)


# ----- scalars -------------------------------------------------------------------------------

def check_int(value, name: str, *, minimum: int = 0, allow_none: bool = False) -> int | None:
    """``value`` as a Python int ``>= minimum`` (or None when ``allow_none``).

    Raises
    ------
    TypeError
        For anything but an integer (bools included).
    ValueError
        Below ``minimum``.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer{' or None' if allow_none else ''}, "
                        f"got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def positive_int(value, name: str) -> int:
    """``value`` as a Python int >= 1 (see :func:`check_int`)."""
    return check_int(value, name, minimum=1)


def non_negative_int(value, name: str) -> int:
    """``value`` as a Python int >= 0 (see :func:`check_int`)."""
    return check_int(value, name, minimum=0)


def positive_float(value, name: str) -> float:
    """``value`` as a finite Python float > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def prior_parameter(value, name: str) -> float:
    """``value`` as a float within :data:`PRIOR_RANGE` (a Gamma prior's shape or rate)."""
    value = positive_float(value, name)
    low, high = PRIOR_RANGE
    if not low <= value <= high:
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}], the range the samplers "
                         f"handle, got {value:g}")
    return value


def non_negative_float(value, name: str) -> float:
    """``value`` as a finite Python float >= 0 (e.g. a convergence tolerance)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def is_sha256_hex(value) -> bool:
    """Whether ``value`` is a sha256 digest as the project writes it: a str of 64 lowercase
    hex characters."""
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None


# ----- arrays --------------------------------------------------------------------------------

def numeric_array(x, name: str) -> np.ndarray:
    """``x`` as a non-empty array of integers or real floats (no bools, no complex)."""
    arr = np.asarray(x)
    if arr.dtype == bool:
        raise TypeError(f"{name} must be numeric, got a boolean array (cast it explicitly)")
    if not (arr.dtype.kind in "iu" or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be a real number or array of them, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    return arr


def _check_whole(arr: np.ndarray, name: str) -> None:
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite; found NaN or infinity")
        if np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold integers, got non-integer values")
        if np.any(np.abs(arr) > _INT64_SAFE):
            raise ValueError(f"{name} is too large for int64")
    elif arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} is too large for int64")


def integer_array(x, name: str) -> np.ndarray:
    """int64 array of the integer values in ``x`` (integer dtype, or floats holding whole
    numbers)."""
    arr = numeric_array(x, name)
    _check_whole(arr, name)
    return arr.astype(np.int64)


def real_array(x, name: str, *, low=None, low_open=False, high=None, high_open=False,
               allow_inf=False) -> np.ndarray:
    """float64 array of ``x`` with its bounds checked (closed unless ``*_open``)."""
    arr = numeric_array(x, name).astype(np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    if low is not None and (np.any(arr <= low) if low_open else np.any(arr < low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got "
                         f"min {arr.min()!r}")
    if high is not None and (np.any(arr >= high) if high_open else np.any(arr > high)):
        raise ValueError(f"{name} must be {'<' if high_open else '<='} {high}, got "
                         f"max {arr.max()!r}")
    return arr


#: the smallest noise level taken (epsilon/N about 230): below it the noise is non-zero with
#: probability under 1e-100, no privacy at all, and the collapsed factors' 1/alpha overflows
#: at large counts (a fit gave NaN)
MIN_NOISE_LEVEL = 1e-100


def noise_level_array(alpha, name: str = "alpha") -> np.ndarray:
    """``alpha``, the geometric mechanism's parameter, as float64, every value in
    [:data:`MIN_NOISE_LEVEL`, 1); any shape (the caller checks it against the data)."""
    arr = np.asarray(alpha)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating)
                                 or arr.dtype.kind in "iu"):
        raise TypeError(f"{name} must be a real number or array, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all() or np.any(arr <= 0.0) or np.any(arr >= 1.0):
        raise ValueError(f"{name} must lie strictly between 0 and 1, in (0, 1) "
                         "(alpha = exp(-epsilon / N) with epsilon, N > 0)")
    if np.any(arr < MIN_NOISE_LEVEL):
        raise ValueError(f"{name} below {MIN_NOISE_LEVEL:g} (epsilon/N above about 230) adds "
                         "noise with probability under 1e-100, which protects nothing: fit "
                         "such counts as true counts (fit_nonprivate)")
    return arr


def densify(values):
    """A scipy.sparse matrix as a dense array (anything else unchanged); checked by duck type,
    so scipy is not imported here."""
    if hasattr(values, "toarray") and hasattr(values, "nnz"):
        return values.toarray()
    return values


def count_array(values, name: str, *, signed: bool) -> np.ndarray:
    """``values`` (an array, or a scipy.sparse matrix: densified) as a C-contiguous int64 array
    of counts whose total the samplers hold (:data:`MAX_TOTAL_COUNT`).

    ``signed=False``: true counts, every value ``>= 0``; ``signed=True``: privatized counts,
    negative values allowed. A ``numpy.ma`` masked array is refused: the fits take it through
    :func:`masked_input`, which turns its mask into theirs.
    """
    if isinstance(values, np.ma.MaskedArray):
        raise TypeError(f"{name} is a numpy.ma masked array; pass the plain data and give the "
                        "mask as mask= (True marks a missing entry)")
    arr = np.asarray(densify(values))
    if arr.dtype == bool or not (arr.dtype.kind in "iu"
                                 or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be an array of integer counts (real numbers, not bools), "
                        f"got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty array of counts, got shape {arr.shape}")
    _check_whole(arr, name)
    if not signed and np.any(arr < 0):
        raise ValueError(f"{name} holds negative values; true counts must be non-negative")
    total = float(np.abs(arr, dtype=np.float64).sum())  # in float: int64 could wrap
    if total > MAX_TOTAL_COUNT:
        raise ValueError(f"the counts of {name} add up to more than the {MAX_TOTAL_COUNT:.0e} "
                         f"the samplers take (about {total:.3g} in absolute value; every row "
                         "and column sum is within that total): scale the counts down")
    return np.ascontiguousarray(arr, dtype=np.int64)


def is_sparse(values) -> bool:
    """Whether ``values`` is a scipy.sparse matrix or array (by duck type, as
    :func:`densify`)."""
    return hasattr(values, "toarray") and hasattr(values, "nnz")


def sparse_count_parts(values, name: str):
    """``(shape, indptr, indices, data)`` of a scipy.sparse matrix or array of true counts
    (any format), in canonical CSR form: int64 ``indptr``, int32 ``indices`` sorted within
    each row, int64 ``data`` with duplicates summed and zeros (explicit ones included) left
    out. The input is never modified.

    The stored values are checked as :func:`count_array` checks dense counts, with the same
    messages: an integer or float dtype (no bools), finite whole numbers, none negative, a
    total within :data:`MAX_TOTAL_COUNT`.
    """
    if len(values.shape) != 2:
        raise ValueError(f"{name} must be a 2-D matrix of counts, got shape {values.shape}")
    csr = values.tocsr()
    stored = np.asarray(csr.data)
    if stored.dtype == bool or not (stored.dtype.kind in "iu"
                                    or np.issubdtype(stored.dtype, np.floating)):
        raise TypeError(f"{name} must be an array of integer counts (real numbers, not bools), "
                        f"got dtype {stored.dtype}")
    if 0 in values.shape:
        raise ValueError(f"{name} must be a non-empty array of counts, got shape "
                         f"{tuple(values.shape)}")
    _check_whole(stored, name)
    if np.any(stored < 0):
        raise ValueError(f"{name} holds negative values; true counts must be non-negative")
    total = float(np.abs(stored, dtype=np.float64).sum())
    if total > MAX_TOTAL_COUNT:
        raise ValueError(f"the counts of {name} add up to more than the {MAX_TOTAL_COUNT:.0e} "
                         f"the samplers take (about {total:.3g} in absolute value; every row "
                         "and column sum is within that total): scale the counts down")
    if not csr.has_canonical_format:  # duplicates or unsorted columns: on a copy, not on X's
        csr = csr.copy() if csr is values else csr
        csr.sum_duplicates()
    data = np.asarray(csr.data).astype(np.int64)
    keep = data != 0
    indices = np.asarray(csr.indices)
    indptr = np.asarray(csr.indptr).astype(np.int64)
    if not keep.all():
        row_kept = np.concatenate(([0], np.cumsum(keep)))
        indptr = row_kept[indptr]
        data, indices = data[keep], indices[keep]
    return (tuple(int(s) for s in values.shape), indptr,
            np.ascontiguousarray(indices, dtype=np.int32), np.ascontiguousarray(data))


def check_counts(values: np.ndarray, name: str) -> None:
    """Raise unless ``values`` (any numeric dtype, possibly empty: e.g. the stored entries of
    a sparse matrix) are finite, non-negative whole numbers. Nothing is converted."""
    if values.dtype == bool or not (values.dtype.kind in "iu"
                                    or np.issubdtype(values.dtype, np.floating)):
        raise TypeError(f"{name} must be an array of integer counts (real numbers, not bools), "
                        f"got dtype {values.dtype}")
    if values.size == 0:
        return
    _check_whole(values, name)
    if np.any(values < 0):
        raise ValueError(f"{name} holds negative values; counts must be non-negative")


def check_finite(values: np.ndarray, name: str) -> None:
    """Raise unless ``values`` are real numbers (no bools) and all finite."""
    if values.dtype == bool or not (values.dtype.kind in "iu"
                                    or np.issubdtype(values.dtype, np.floating)):
        raise TypeError(f"{name} must hold real numbers, got dtype {values.dtype}")
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must be finite; found NaN or infinity")


def size_shape(size) -> tuple:
    """A sampler's ``size`` (an int or a sequence of ints, numpy's convention) as a shape;
    a TypeError naming ``size`` for anything else (``size=1.5`` or ``True`` would be cast)."""
    entries = (size,) if np.ndim(size) == 0 else tuple(size)
    for entry in entries:
        if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, numbers.Integral):
            raise TypeError(f"size must be an int or a sequence of ints, got {size!r}")
        if entry < 0:
            raise ValueError(f"size must not be negative, got {size!r}")
    return tuple(int(entry) for entry in entries)


def broadcast_params(arrays, names, size=None):
    """Broadcast ``arrays`` together (and to ``size`` if given); flat contiguous copies + shape."""
    if size is not None:
        size = size_shape(size)
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        if size is not None:
            if np.broadcast_shapes(shape, size) != size:
                raise ValueError
            shape = size
    except ValueError:
        shapes = ", ".join(f"{n}{a.shape}" for n, a in zip(names, arrays))
        extra = f" and size {size}" if size is not None else ""
        raise ValueError(f"shapes do not broadcast together: {shapes}{extra}") from None
    flat = tuple(np.ascontiguousarray(np.broadcast_to(a, shape)).ravel() for a in arrays)
    return flat, shape


def finish(flat, shape):
    """Reshape a flat result; 0-d results come back as numpy scalars."""
    return flat.reshape(shape)[()]


def masked_input(values, mask, name: str):
    """``(data, mask)`` of a fit's input: a ``numpy.ma`` masked array's own mask (True =
    missing, the convention of ``mask``) joins ``mask``. Its masked entries keep their values
    where those are counts of the input's kind (whole, finite, and for true counts ``y`` not
    negative), so that the masked array and the same data and mask given apart are one chain,
    with one data fingerprint (a checkpoint or a saved fit continues under either); any other
    masked entry (NaN, say), which is never read, is filled with 0. Other input comes back
    unchanged."""
    if not isinstance(values, np.ma.MaskedArray):
        return values, mask
    missing = np.ma.getmaskarray(values)
    if mask is not None:
        missing = missing | ~observed_mask(mask, missing.shape)
    data = np.ma.getdata(values)
    if data.dtype.kind not in "iubf":
        return values.filled(0), missing  # not numbers: the counts' check names the type
    with np.errstate(invalid="ignore"):
        unfit = ~(np.abs(data) <= MAX_TOTAL_COUNT)  # NaN included
        if data.dtype.kind == "f":
            unfit |= data != np.round(data)
        if name == "y":
            unfit |= data < 0
    unfit &= missing
    if unfit.any():
        data = data.copy()
        data[unfit] = 0
    return data, missing


def observed_mask(mask, shape: tuple[int, ...]) -> np.ndarray:
    """The user's ``mask`` (True = missing, as in ``numpy.ma``) as a C-contiguous bool array of
    the *observed* entries."""
    if mask is None:
        return np.ones(shape, dtype=bool)
    arr = np.asarray(densify(mask))
    if arr.dtype != bool:
        if arr.dtype.kind not in "iu" or not np.isin(arr, (0, 1)).all():
            raise TypeError("mask must be a boolean array (True marks a missing entry)")
        arr = arr.astype(bool)
    if arr.shape != tuple(shape):
        raise ValueError(f"mask has shape {arr.shape} but the data have shape {tuple(shape)}")
    return np.ascontiguousarray(~arr)


def check_schedule(n_iter, burn_in, thin, checkpoint_every) -> tuple[int, int, int, int]:
    """Validated ``(n_iter, burn_in, thin, checkpoint_every)`` of a run (burn_in < n_iter)."""
    n_iter = positive_int(n_iter, "n_iter")
    burn_in = non_negative_int(burn_in, "burn_in")
    thin = positive_int(thin, "thin")
    if burn_in >= n_iter:
        raise ValueError(f"burn_in ({burn_in}) must be smaller than n_iter ({n_iter})")
    if thin > n_iter - burn_in:
        raise ValueError(f"thin ({thin}) is longer than the {n_iter - burn_in} iterations after "
                         "burn-in, so no draw would be saved (and mu_hat would be None): lower "
                         "thin or burn_in, or raise n_iter")
    return n_iter, burn_in, thin, positive_int(checkpoint_every, "checkpoint_every")


# ----- the keywords of earlier releases ------------------------------------------------------

def split_options(options: type, settings: dict):
    """``(options(...) of the fields among settings, the other settings)`` for the dataclass
    ``options`` (a fit's ``RunOptions`` or ``VIOptions``): what code that forwards keyword
    settings to a fit hands it as ``run=``, and the rest."""
    names = {f.name for f in dataclasses.fields(options)}
    return (options(**{k: v for k, v in settings.items() if k in names}),
            {k: v for k, v in settings.items() if k not in names})


def moved_keywords(function: str, deprecated: dict, options: type, run, *, public: str,
                   others=()):
    """``(run, rest)`` of a fit that took its settings as keywords in earlier releases and
    takes them whole now, as ``run=options(...)``: ``run`` built from the ``deprecated``
    keywords that are fields of the dataclass ``options`` (or as given, None included), and
    the other deprecated keywords, each among ``others``, for the fit to map itself. The
    fit warns with :func:`warn_moved` once its own checks pass.

    Raises
    ------
    TypeError
        For ``run`` that is not an ``options`` (named ``public``), a keyword that is neither a
        field nor among ``others``, or fields given beside ``run``.
    """
    if run is not None and not isinstance(run, options):
        raise TypeError(f"run must be a {public}, got {type(run).__name__}")
    names = {f.name for f in dataclasses.fields(options)}
    unknown = sorted(set(deprecated) - names - set(others))
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    settings = {k: v for k, v in deprecated.items() if k in names}
    if settings and run is not None:
        raise TypeError(f"give {sorted(settings)} in run={options.__name__}(...), not beside it")
    return (options(**settings) if settings else run,
            {k: v for k, v in deprecated.items() if k not in names})


def warn_moved(function: str, deprecated: dict, advice: str, *, stacklevel: int) -> None:
    """The FutureWarning of a call of ``function`` with the keywords of earlier releases
    (``deprecated``): it names them and says where each goes (``advice``). ``stacklevel`` as
    for :func:`warnings.warn`, counted from the caller of this function."""
    warnings.warn(f"{function}({', '.join(f'{k}=' for k in deprecated)}) is deprecated and "
                  f"will be removed: {advice}", FutureWarning, stacklevel=stacklevel + 1)
