"""What the estimators share: scikit-learn's base classes when it is installed, light stand-ins
when it is not, and the checks of a count matrix.

With scikit-learn (1.6 or later) importable, :data:`BaseEstimator`, :data:`TransformerMixin`,
:data:`ClassNamePrefixFeaturesOutMixin` and :data:`OneToOneFeatureMixin` are scikit-learn's
own, so tags, ``set_output``, ``clone``, ``get_params`` and the HTML repr are native, and
:class:`NotFittedError` is ``sklearn.exceptions.NotFittedError``. Without it (or with an
older one) they are the small classes below, which keep the parameter protocol
(``get_params`` / ``set_params`` from the constructor's signature, names sorted as
scikit-learn sorts them), ``fit_transform`` and ``get_feature_names_out``: lpp works alone.
"""
from __future__ import annotations

import inspect
import numbers

import numpy as np

from lpp.inference.sparse_counts import SparseCounts
from lpp.randomness import check_rng
from lpp.validation import count_array, densify, is_sparse

try:  # scikit-learn is optional: lpp needs numpy, scipy and numba only
    from sklearn.base import (
        BaseEstimator,
        ClassNamePrefixFeaturesOutMixin,
        OneToOneFeatureMixin,
        TransformerMixin,
    )
    from sklearn.exceptions import NotFittedError as _SklearnNotFittedError
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # absent, or older than 1.6 (no validate_data): the stand-ins below
    SKLEARN = False
else:
    SKLEARN = True

__all__ = ["SKLEARN", "BaseEstimator", "ClassNamePrefixFeaturesOutMixin", "NotFittedError",
           "OneToOneFeatureMixin", "TransformerMixin", "check_features", "count_matrix",
           "count_tags", "random_state_rng"]


if SKLEARN:
    NotFittedError = _SklearnNotFittedError  # one class, whoever raises it
else:
    class NotFittedError(ValueError, AttributeError):
        """An estimator was used before ``fit``.

        A ValueError and an AttributeError at once, as scikit-learn's ``NotFittedError`` is, so
        code that catches either keeps working.
        """

    def _is_default(value, default) -> bool:
        # by type as well as value: 1.0 == True and 0 == False, yet each is another setting
        return value is default or (type(value) is type(default) and value == default)

    class BaseEstimator:
        """``get_params``, ``set_params`` and ``__repr__`` read from ``__init__``'s signature.

        scikit-learn's rules: every constructor argument is stored under its own name and
        nothing else happens in ``__init__``, so the signature lists the parameters and
        ``type(est)(**est.get_params())`` rebuilds an unfitted copy.
        """

        @classmethod
        def _get_param_names(cls) -> list[str]:
            names = []
            for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    # *args / **kwargs hide parameters from get_params: clones would lose them
                    raise TypeError(f"{cls.__name__}.__init__ must name every parameter "
                                    f"(no *args or **kwargs), found {p}")
                names.append(p.name)
            return sorted(names)

        def get_params(self, deep=True):
            """The estimator's parameters, by name (sorted, as scikit-learn's are).

            Parameters
            ----------
            deep : bool, default=True
                scikit-learn's flag for the parameters of nested estimators; no parameter of
                lpp's estimators is an estimator, so it changes nothing.

            Returns
            -------
            dict
                Every constructor parameter and its current value.
            """
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params):
            """Set parameters by name; a later ``fit`` uses them.

            Parameters
            ----------
            **params
                New values of constructor parameters.

            Returns
            -------
            self

            Raises
            ------
            ValueError
                For a name that is not a parameter (nothing is changed then).
            """
            names = self._get_param_names()
            unknown = sorted(set(params) - set(names))
            if unknown:
                raise ValueError(f"Invalid parameter(s) {unknown} for {type(self).__name__}; "
                                 f"valid parameters are {names}")
            for name, value in params.items():
                setattr(self, name, value)
            return self

        def __repr__(self) -> str:
            defaults = {p.name: p.default
                        for p in inspect.signature(type(self).__init__).parameters.values()}
            changed = [f"{name}={value!r}" for name, value in self.get_params().items()
                       if not _is_default(value, defaults[name])]
            return f"{type(self).__name__}({', '.join(changed)})"

    class TransformerMixin:
        """``fit_transform`` as ``fit(X, y, **fit_params).transform(X)``."""

        def fit_transform(self, X, y=None, **fit_params):
            """Fit to ``X``, then transform it.

            Parameters
            ----------
            X : array-like
                The data.
            y : None
                Ignored.
            **fit_params
                Passed to ``fit``.

            Returns
            -------
            ndarray
            """
            return self.fit(X, y, **fit_params).transform(X)

    class ClassNamePrefixFeaturesOutMixin:
        """Output feature names ``<class name in lower case><i>``, one per output column."""

        def get_feature_names_out(self, input_features=None):
            """Names of the output columns: the lower-cased class name and the column's number.

            Parameters
            ----------
            input_features : array-like of str or None, default=None
                Only checked: its length must be ``n_features_in_``.

            Returns
            -------
            ndarray of str objects
            """
            n_out = self._n_features_out  # NotFittedError (an AttributeError) before fit
            _check_input_features(self, input_features)
            prefix = type(self).__name__.lower()
            return np.asarray([f"{prefix}{i}" for i in range(n_out)], dtype=object)

    class OneToOneFeatureMixin:
        """Output feature names are the input's (``x0``, ``x1``, ... for unnamed columns)."""

        def get_feature_names_out(self, input_features=None):
            """Names of the output columns: those of the input columns.

            Parameters
            ----------
            input_features : array-like of str or None, default=None
                The input's column names (length ``n_features_in_``); None gives
                ``x0``, ``x1``, ...

            Returns
            -------
            ndarray of str objects
            """
            if not hasattr(self, "n_features_in_"):
                raise NotFittedError(f"this {type(self).__name__} has not seen the data yet: "
                                     "call fit first")
            names = _check_input_features(self, input_features)
            if names is None:
                names = [f"x{i}" for i in range(self.n_features_in_)]
            return np.asarray(names, dtype=object)

    def _check_input_features(est, input_features):
        if input_features is None:
            return None
        names = np.asarray(input_features, dtype=object)
        n = getattr(est, "n_features_in_", None)
        if n is not None and len(names) != n:
            raise ValueError(f"input_features should have length equal to number of features "
                             f"({n}), got {len(names)}")
        return names


def count_tags(tags, *, positive_only: bool):
    """scikit-learn's input tags of an estimator of count matrices, set on ``tags`` (its
    ``Tags``) and returned.

    Dense 2-D arrays and scipy.sparse matrices and arrays of any format are read (the sparse
    ones densified); NaN is refused (a missing entry is given in ``mask=`` instead);
    ``positive_only`` says whether negative values are refused (true counts) or taken
    (privatized counts). The values must be whole numbers, which no tag can say: the checks
    that feed other values are :func:`lpp.estimators.expected_failed_checks`.
    """
    tags.input_tags.two_d_array = True
    tags.input_tags.sparse = True
    tags.input_tags.allow_nan = False
    tags.input_tags.positive_only = positive_only
    return tags


def check_features(est, X, *, reset: bool) -> None:
    """Record (``reset=True``, in ``fit``) or check the number of columns, and with
    scikit-learn the column names of a DataFrame, as scikit-learn's ``validate_data`` does.

    ``X`` is the caller's input as given (a DataFrame keeps its names); its values are checked
    by :func:`count_matrix`. A stateless estimator's ``transform`` calls this only once fitted.
    """
    if SKLEARN:
        _validate_data(est, X, reset=reset, skip_check_array=True)
        return
    n_features = np.shape(X)[1]
    if reset:
        est.n_features_in_ = int(n_features)
    elif n_features != est.n_features_in_:
        raise ValueError(f"X has {n_features} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")


def count_matrix(X, *, signed: bool, name: str = "X", keep_sparse: bool = False):
    """``X`` as a C-contiguous int64 matrix of counts, or a clear error.

    Accepts an array-like, a pandas DataFrame or a scipy.sparse matrix or array holding whole
    numbers, in an integer or a float dtype. ``signed=False``: true counts (non-negative);
    ``signed=True``: privatized counts (negative values allowed). A scipy.sparse ``X`` is
    densified, unless ``keep_sparse`` and ``signed=False``: then it comes back as
    :class:`lpp.inference.sparse_counts.SparseCounts` (its stored values checked as the dense
    ones are, with the same messages), which the non-private Gibbs chain runs on as it is.
    The messages are scikit-learn's where its estimator checks look for them ("Complex data
    not supported", "Reshape your data", "0 feature(s)", "NaN").
    """
    if isinstance(X, np.ma.MaskedArray):
        raise TypeError(f"{name} is a numpy.ma masked array: pass its data and give the mask "
                        "as mask= (True marks a missing entry)")
    sparse = keep_sparse and not signed and is_sparse(X)
    if sparse:  # its checks read the stored values (the others are zeros); CSR has them all
        X = X.tocsr()
    arr = np.asarray(X.data) if sparse else np.asarray(densify(X))
    if arr.dtype == object:  # e.g. a DataFrame of mixed columns: numbers only, never cast
        for value in arr.flat:
            if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)
                    or isinstance(value, np.timedelta64)):
                raise TypeError(f"{name} must hold counts, got {value!r} (a "
                                f"{type(value).__name__}) in an object array: cast booleans, "
                                "parse text and fill missing values first")
        arr = arr.astype(np.float64)
    if np.iscomplexobj(arr):
        raise ValueError(f"Complex data not supported: {name} must hold counts")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must hold counts: integers, or floats holding whole numbers "
                        f"(cast booleans explicitly), got dtype {arr.dtype}")
    shape = tuple(X.shape) if sparse else arr.shape
    if len(shape) != 2:
        raise ValueError(f"Expected a 2-D array of counts (rows x columns, e.g. documents x "
                         f"words), got a {len(shape)}-D array of shape {shape}. Reshape your "
                         "data with X.reshape(-1, 1) if it has a single feature or "
                         "X.reshape(1, -1) if it has a single sample.")
    for axis, what in ((0, "sample"), (1, "feature")):
        if shape[axis] == 0:
            raise ValueError(f"Found array with 0 {what}(s) (shape={shape}) while a minimum "
                             "of 1 is required.")
    floating = np.issubdtype(arr.dtype, np.floating)
    if floating and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity; counts must be finite: fill a "
                         "missing entry with any count and mark it in mask= (True = missing)")
    if not signed and np.any(arr < 0):
        raise ValueError(f"Negative values in data passed to {name}: true counts are "
                         "non-negative")
    if floating and np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold whole-number counts, got non-integer values")
    if sparse:
        return SparseCounts.from_input(X, name)
    return count_array(arr, name, signed=signed)


def random_state_rng(random_state):
    """An estimator's ``random_state`` as the ``rng`` of lpp's functions.

    None, an int seed and a ``numpy.random.Generator`` pass as they are
    (:func:`lpp.randomness.check_rng`, naming ``random_state``). A legacy
    ``numpy.random.RandomState`` (what scikit-learn's ``check_random_state`` hands out) gives
    a seed drawn from it, so it advances as scikit-learn's estimators advance it: every call
    gets new randomness, reproducibly.
    """
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    return check_rng(random_state, "random_state", "a numpy.random.Generator or RandomState, a "
                     "non-negative int seed or None")
