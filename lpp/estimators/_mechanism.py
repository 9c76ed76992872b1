"""The geometric mechanism as a scikit-learn transformer: :class:`GeometricMechanism`."""
from __future__ import annotations

import numpy as np

from lpp.mechanism import ExactAlpha, privatize
from lpp.validation import noise_level_array

from ._base import (
    SKLEARN,
    BaseEstimator,
    OneToOneFeatureMixin,
    TransformerMixin,
    check_features,
    count_matrix,
    random_state_rng,
)

__all__ = ["GeometricMechanism"]


class GeometricMechanism(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Privatize counts: add two-sided geometric noise ``2Geo(alpha)`` to every entry.

    :func:`lpp.mechanism.privatize` as a transformer, for the data owners' side and for
    simulations: ``make_pipeline(CountVectorizer(), GeometricMechanism(alpha),
    PrivateTopicModel(k, alpha=alpha))`` is the whole study of one corpus. It learns nothing:
    ``fit`` only checks the counts and records their number of columns; ``transform`` draws
    fresh noise. Give :class:`PrivateTopicModel` the same ``alpha``: it is what the model's
    likelihood of the noised counts needs.

    Each call noises the counts anew, and each noisy copy of the same people's counts spends
    their privacy budget again: privatize once, and run cross-validation, model search and
    repeated predictions on the released counts, not on a pipeline that holds the mechanism.

    Parameters
    ----------
    alpha : float or lpp.mechanism.ExactAlpha
        The noise level ``alpha = exp(-epsilon / N)`` in (0, 1), for (N, epsilon)-limited
        precision local privacy (:func:`lpp.mechanism.alpha_from_epsilon` computes it;
        :func:`lpp.mechanism.exact_alpha` gives the exact one that ``exact=True`` needs).
        One number for every entry.
    exact : bool, default=False
        False: numpy's floating-point geometric draws (fast; for simulation and research).
        True: the integer-only discrete Laplace sampler of Canonne, Kamath & Steinke (2020)
        (``alpha`` must then be an ``ExactAlpha``), about a hundred times slower; with
        ``random_state=None`` its bits come from the operating system's CSPRNG, which is what
        a formal privacy claim needs.
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default=None
        The noise's randomness. None (the default): fresh system randomness on every call.
        An int: the same noise on every call (reproducible; whoever holds the seed can
        regenerate the noise, so for simulations only). A Generator or a RandomState: drawn
        from, so every call gets new noise, reproducibly.

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
    PrivateTopicModel : fits the topic model to its output, given the same ``alpha``.

    Notes
    -----
    The input holds true counts: non-negative whole numbers, in an integer or a float dtype,
    or a scipy.sparse matrix (CountVectorizer's output). The output is always a dense int64
    array of the same shape (the noise makes every entry non-zero with probability
    ``2 alpha / (1 + alpha)``), or a DataFrame of the input's column names under
    ``set_output(transform="pandas")``.

    Examples
    --------
    >>> import numpy as np
    >>> from lpp.estimators import GeometricMechanism
    >>> counts = np.array([[0, 3, 1], [2, 0, 0]])
    >>> noised = GeometricMechanism(0.5, random_state=0).fit_transform(counts)
    >>> noised.shape, noised.dtype
    ((2, 3), dtype('int64'))
    """

    def __init__(self, alpha, *, exact=False, random_state=None):
        self.alpha = alpha
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
            For counts that are negative, not whole numbers or not a 2-D matrix, or an
            ``alpha`` outside (0, 1).

        Examples
        --------
        >>> from lpp.estimators import GeometricMechanism
        >>> GeometricMechanism(0.5).fit([[1, 2], [0, 4]]).n_features_in_
        2
        """
        self._check_params()
        count_matrix(X, signed=False)
        check_features(self, X, reset=True)
        return self

    def transform(self, X):
        """Privatize the counts: ``X + tau``, every ``tau`` an independent ``2Geo(alpha)`` draw.

        Works unfitted (the mechanism is stateless); once fitted, ``X`` must have the
        columns seen in ``fit``.

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

        Examples
        --------
        >>> from lpp.estimators import GeometricMechanism
        >>> from lpp.mechanism import exact_alpha
        >>> mechanism = GeometricMechanism(exact_alpha(1, 2), exact=True, random_state=0)
        >>> mechanism.transform([[1, 0, 5]]).shape
        (1, 3)
        """
        alpha = self._check_params()
        counts = count_matrix(X, signed=False)
        if hasattr(self, "n_features_in_"):
            check_features(self, X, reset=False)
        return privatize(counts, alpha, rng=random_state_rng(self.random_state),
                         exact=bool(self.exact))

    if SKLEARN:
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.requires_fit = False  # stateless: transform needs no fit
            tags.input_tags.sparse = True
            tags.input_tags.positive_only = True  # true counts
            tags.transformer_tags.preserves_dtype = []  # always int64 out
            return tags

    def _check_params(self):
        """``alpha`` as the mechanism takes it (a float, or the ExactAlpha for ``exact``)."""
        if not isinstance(self.exact, (bool, np.bool_)):
            raise TypeError(f"exact must be True or False, got {self.exact!r}")
        if isinstance(self.alpha, ExactAlpha):
            return self.alpha
        if self.exact:
            raise TypeError("exact=True needs alpha as an ExactAlpha: "
                            "alpha=lpp.mechanism.exact_alpha(epsilon, N)")
        if self.alpha is None:
            raise ValueError("alpha is required: the noise level exp(-epsilon / N) in (0, 1)")
        level = noise_level_array(self.alpha)
        if level.ndim:
            raise ValueError(f"alpha must be one number, got an array of shape {level.shape}")
        return float(level)
