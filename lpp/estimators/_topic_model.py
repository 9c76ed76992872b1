"""The locally private topic model as a scikit-learn transformer: :class:`PrivateTopicModel`."""
from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from lpp.distributions import poisson_logpmf, privatized_poisson_logpmf
from lpp.inference import (
    FixedTopicModel,
    fit_nonprivate,
    fit_private,
    make_model,
    model_from_params,
)
from lpp.inference.chain import DEVICES
from lpp.mechanism import ExactAlpha
from lpp.validation import noise_level_array
from lpp.vi import (
    FixedTopicVI,
    GammaFactor,
    VIResult,
    chain_start,
    fit_variational,
    fit_variational_nonprivate,
)

from ._base import (
    SKLEARN,
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    NotFittedError,
    TransformerMixin,
    check_features,
    count_matrix,
    random_state_rng,
)

__all__ = ["INFERENCES", "INITS", "METHODS", "PrivateTopicModel"]

#: how the posterior is approximated: the Gibbs samplers or coordinate-ascent VI
INFERENCES = ("gibbs", "variational")
#: the privacy step each method is built on (the same names for both inferences), or the
#: non-private reference fitted to true counts
METHODS = ("collapsed", "bessel", "naive", "nonprivate")
#: starts of a Gibbs chain (the variational fits start from their own EM-like sweeps)
INITS = ("data", "dispersed", "em", "prior")
#: the most posterior draws of a document's topic intensities that :meth:`score` averages the
#: predictive density over (evenly spaced among the saved draws): the Monte Carlo error of a
#: mean log density is far below the differences between models long before this many
_SCORE_DRAWS = 100


class PrivateTopicModel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Locally private topic model: Poisson factorization of documents x words counts.

    Fits ``X ~ Pois(theta @ phi)`` (Gamma priors on the documents' topic intensities
    ``theta`` and the topics' word intensities ``phi``) to counts privatized by the geometric
    mechanism, ``X = Y + 2Geo(alpha)``, sampling the true counts ``Y`` as latent variables
    (Schein et al., ICML 2019); or, with ``method="nonprivate"``, to true counts.

    A scikit-learn transformer: ``fit(X, y=None)``, ``transform(X)`` gives the documents'
    topic proportions as :class:`sklearn.decomposition.LatentDirichletAllocation`'s does,
    ``score(X)`` is a held-out predictive log-likelihood (higher is better), so
    ``GridSearchCV`` and ``cross_val_score`` need no scorer, ``get_feature_names_out`` names
    the topics. ``X`` is any array-like or scipy.sparse matrix of whole numbers (e.g. the
    output of ``CountVectorizer``, or of :class:`GeometricMechanism` after it).

    Parameters
    ----------
    n_components : int, default=10
        Number of topics K.
    alpha : float, lpp.mechanism.ExactAlpha or None, default=None
        The geometric mechanism's noise level, ``alpha = exp(-epsilon / N)`` in (0, 1)
        (:func:`lpp.mechanism.alpha_from_epsilon` computes it): the same value the data were
        privatized with, e.g. the ``alpha`` of the :class:`GeometricMechanism` before this
        estimator in a pipeline. One number for every entry (for noise levels that differ
        between people, call :func:`lpp.inference.fit_private` with an array). Required by
        the private methods; must be None for ``method="nonprivate"``.
    method : {"collapsed", "bessel", "naive", "nonprivate"}, default="collapsed"
        The privacy step the inference is built on: ``"collapsed"`` (the noise integrated out
        exactly), ``"bessel"`` (the paper's augmentation), ``"naive"`` (``max(X, 0)`` treated
        as the true counts); ``"nonprivate"`` fits true counts (the reference method).
    inference : {"gibbs", "variational"}, default="gibbs"
        Gibbs sampling (:func:`lpp.inference.fit_private`) or coordinate-ascent VI
        (:func:`lpp.vi.fit_variational`).
    n_iter, burn_in, thin : int, default=1000, 0, 1
        Gibbs only: sweeps, the first ``burn_in`` discarded, then every ``thin``-th saved;
        the same for the chains of :meth:`transform` and :meth:`score`.
    init : {"data", "em", "prior", "dispersed"}, default="data"
        Gibbs only: the chain's start (see :func:`lpp.inference.fit_private`). The chains
        of :meth:`transform` and :meth:`score` hold the topics fixed, so there is no
        variational fit of them to disperse a start around: with ``"dispersed"`` they start
        from the data.
    n_chains : int, default=1
        Gibbs only: independent chains of the fit (see :func:`lpp.inference.fit_private`);
        with more than one, ``fit_`` holds them all, ``mu_hat_`` pools them, ``factors_`` and
        ``components_`` are chain 0's (each chain labels its topics its own way).
    max_iter : int or None, default=None
        Variational only: the iteration cap (None: the method's default).
    tol : float or None, default=None
        Variational only: the relative change of the objective that stops the fit (None: the
        default).
    a0, b0 : float, default=0.1, 1.0
        Shape and rate of the Gamma prior of every latent.
    normalize : bool, default=True
        What :meth:`transform` and :meth:`fit_transform` return: True, each document's topic
        proportions (rows sum to 1); False, the posterior mean of its topic intensities
        ``theta`` (the model's own scale: the expected number of the document's tokens from
        topic k is ``theta[d, k] * components_[k].sum()``).
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default=None
        Seed of every random stream; an int repeats a fit (and a transform) bit for bit. A
        Generator or a RandomState is drawn from, so each call gets new randomness.
    progress : bool or None, default=False
        Show a progress bar (None: on interactive terminals only).
    device : {"cpu", "cuda"}, default="cpu"
        Gibbs only: where :meth:`fit` runs its sweeps (:func:`lpp.inference.fit_private`'s
        ``device``). ``"cuda"`` runs them on a GPU with numba-cuda (``pip install
        'lpp[gpu]'``) for ``method="collapsed"``, ``"naive"`` and ``"nonprivate"``, without
        ``mask``: the same posterior, other random streams (a GPU fit equals a CPU fit in
        distribution, not bit for bit; the same ``random_state`` on the same GPU repeats it).
        :meth:`transform` and :meth:`score` run on the CPU whatever the setting.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features_in_)
        The topics: the posterior mean of ``phi``, each row a topic's word intensities.
    factors_ : dict of ndarray
        The posterior mean of every latent by name: ``"theta"`` (n_samples x K, the training
        documents) and ``"phi"`` (``components_``); ``E_q`` for a variational fit.
    fit_ : lpp.inference.FitResult or lpp.vi.VIResult
        The fit itself: the chain's saved draws (``fit_.samples``), log joint, timings;
        ``fit_.device`` and ``fit_.engine`` name where and by which engine a Gibbs fit ran.
    mu_hat_ : ndarray of shape (n_samples, n_features_in_)
        The posterior mean of the training documents' Poisson rates.
    n_iter_ : int
        Sweeps (Gibbs) or iterations (variational) the fit ran.
    seed_ : int
        The fit's base seed: ``random_state=seed_`` repeats it.
    n_features_in_ : int
        Number of columns (words) seen in ``fit``.
    feature_names_in_ : ndarray of str
        The words, when ``fit`` was given a DataFrame with string column names (with
        scikit-learn installed).
    inference_data_ : arviz.InferenceData
        Gibbs fits, with ArviZ installed (``lpp[diagnostics]``): the chain's log joint, total
        rate and a few entries' rates per saved draw (:func:`lpp.diagnostics.to_inference_data`),
        an entry labelled by its row's position and, after a DataFrame, its column's name.
        Computed on first access; absent without ArviZ and for variational fits.

    See Also
    --------
    GeometricMechanism : privatizes counts with the same ``alpha``.
    lpp.inference.fit_private : the Gibbs fit behind ``inference="gibbs"``, for the other
        models (communities, CP tensors) and per-person noise levels.

    Notes
    -----
    The documents' rows are privatized counts, which may be negative; true counts for
    ``method="nonprivate"``. Non-integer values are refused: the likelihood is one of counts.
    :meth:`transform` runs a new chain (or CAVI) over the given documents with the topics held
    at ``components_``; its Monte Carlo error depends on ``n_iter``, and a document's result
    on the batch it is transformed with (the random streams are laid out per batch).

    Examples
    --------
    >>> from lpp.estimators import GeometricMechanism, PrivateTopicModel
    >>> from lpp.mechanism import alpha_from_epsilon
    >>> from lpp.simulate import make_topics
    >>> corpus = make_topics(rng=0, n_docs=30, n_topics=3)
    >>> alpha = float(alpha_from_epsilon(1.0, 1))            # epsilon / N = 1
    >>> X = GeometricMechanism(alpha, random_state=1).fit_transform(corpus.y)
    >>> est = PrivateTopicModel(3, alpha=alpha, n_iter=50, random_state=0).fit(X[:24])
    >>> est.components_.shape
    (3, 15)
    >>> est.transform(X[24:]).sum(axis=1).round(6)          # topic proportions
    array([1., 1., 1., 1., 1., 1.])
    >>> bool(est.score(X[24:]) < 0)                          # mean log density per entry
    True
    """

    def __init__(self, n_components=10, *, alpha=None, method="collapsed", inference="gibbs",
                 n_iter=1000, burn_in=0, thin=1, init="data", n_chains=1, max_iter=None,
                 tol=None, a0=0.1, b0=1.0, normalize=True, random_state=None, progress=False,
                 device="cpu"):
        self.n_components = n_components
        self.alpha = alpha
        self.method = method
        self.inference = inference
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.init = init
        self.n_chains = n_chains
        self.max_iter = max_iter
        self.tol = tol
        self.a0 = a0
        self.b0 = b0
        self.normalize = normalize
        self.random_state = random_state
        self.progress = progress
        self.device = device

    # ----- fitting ------------------------------------------------------------------------------
    def fit(self, X, y=None, *, mask=None):
        """Fit the topics to a corpus of (privatized) counts.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Privatized counts of the documents (whole numbers, may be negative); true counts
            (non-negative) for ``method="nonprivate"``.
        y : None
            Ignored: there by scikit-learn's convention (a pipeline passes its target on).
        mask : array-like of bool of shape (n_samples, n_features), default=None
            True marks a missing entry (it carries no likelihood).

        Returns
        -------
        self : PrivateTopicModel
            The fitted estimator.

        Raises
        ------
        ValueError, TypeError
            For an unknown ``inference``, ``method``, ``init`` or ``device``, settings out of
            range, an ``alpha`` that is missing (private methods), given (``"nonprivate"``)
            or outside (0, 1), ``X`` that is not a 2-D matrix of whole numbers (each names
            the setting), or ``device="cuda"`` with what the GPU does not run (a variational
            fit, ``method="bessel"``, a ``mask``).
        ImportError, RuntimeError
            For ``device="cuda"`` without numba-cuda (``pip install 'lpp[gpu]'``) or without
            a usable GPU.

        Examples
        --------
        >>> from lpp.estimators import PrivateTopicModel
        >>> from lpp.simulate import make_private_factorization
        >>> data = make_private_factorization(20, 10, 2, rng=0)
        >>> est = PrivateTopicModel(2, alpha=data.alpha, n_iter=30, random_state=0)
        >>> est.fit(data.y_tilde).components_.shape, est.factors_["theta"].shape
        ((2, 10), (20, 2))
        """
        alpha = self._check_params()
        counts = count_matrix(X, signed=alpha is not None)
        check_features(self, X, reset=True)
        model = make_model("topics", self.n_components, self.a0, self.b0)
        if self.inference != "gibbs" and self.n_chains != 1:
            raise ValueError("n_chains > 1 runs several Gibbs chains; a variational fit is one "
                             "optimisation: set n_chains=1 or inference='gibbs'")
        if self.inference != "gibbs" and self.device != "cpu":
            raise ValueError(f"device={self.device!r} runs Gibbs sweeps; a variational fit runs "
                             "on the CPU: set device='cpu' or inference='gibbs'")
        fit = self._infer(counts, alpha, mask, model, n_chains=self.n_chains,
                          device=self.device)
        # topics are labelled independently in each chain: the factors are chain 0's, the
        # rates (label-invariant) are pooled over the chains
        first = fit.chains[0] if hasattr(fit, "chains") else fit
        factors = _posterior_means(first)
        self.__dict__.pop("inference_data_", None)  # the cached diagnostics of a previous fit
        self.fit_ = fit
        self.factors_ = factors
        self.components_ = np.ascontiguousarray(factors["phi"])
        self.mu_hat_ = fit.mu_hat
        self.n_iter_ = int(first.iterations_done)
        self.seed_ = fit.seed
        return self

    def transform(self, X, *, mask=None):
        """The documents' topic proportions (or intensities), the fitted topics held fixed.

        Gibbs: a chain of :class:`lpp.inference.FixedTopicModel` with the topics at
        ``components_`` samples the documents' ``theta`` only. Variational: the CAVI of
        :class:`lpp.vi.FixedTopicVI` updates ``q(theta)`` with ``q(phi)`` held at the fit's
        factor. The method, iteration settings, ``alpha`` and ``random_state`` are the
        estimator's current parameters; the prior is the fit's. It runs on the CPU, also
        after a fit with ``device="cuda"``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features_in_)
            Privatized counts of the documents (true counts for ``"nonprivate"``).
        mask : array-like of bool, default=None
            True marks a missing entry.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            With ``normalize=True`` (the default), each document's topic proportions: the
            expected share of its tokens drawn from each topic,
            ``theta[d, k] * components_[k].sum()`` normalised to sum to 1 over k (``theta``
            the posterior mean). With ``normalize=False``, the posterior mean of ``theta``.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        ValueError
            For documents over another vocabulary (``n_features_in_`` columns expected), a
            variational transform of a Gibbs fit, or bad data or settings (as :meth:`fit`).

        Examples
        --------
        >>> from lpp.estimators import PrivateTopicModel
        >>> from lpp.simulate import make_private_factorization
        >>> data = make_private_factorization(20, 10, 2, rng=0)
        >>> est = PrivateTopicModel(2, alpha=data.alpha, n_iter=30, random_state=0)
        >>> est.fit(data.y_tilde[:15]).transform(data.y_tilde[15:]).shape
        (5, 2)
        >>> est.set_params(normalize=False).transform(data.y_tilde[15:]).sum(axis=1).min() > 0
        np.True_
        """
        counts, alpha = self._check_new_documents(X)
        fit = self._fixed_topic_fit(counts, alpha, mask)
        return self._output(_posterior_means(fit)["theta"])

    def fit_transform(self, X, y=None, *, mask=None):
        """Fit, and return the training documents' topic proportions (or intensities).

        From the fit's own posterior (``factors_["theta"]``), not a second run with the topics
        held fixed: the same posterior that :meth:`transform` approximates, not the same
        numbers.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            As for :meth:`fit`.
        y : None
            Ignored.
        mask : array-like of bool, default=None
            As for :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            As :meth:`transform` returns.

        Examples
        --------
        >>> from lpp.estimators import PrivateTopicModel
        >>> from lpp.simulate import make_private_factorization
        >>> data = make_private_factorization(20, 10, 2, rng=0)
        >>> PrivateTopicModel(2, alpha=data.alpha, n_iter=30, random_state=0).fit_transform(
        ...     data.y_tilde).shape
        (20, 2)
        """
        return self._output(self.fit(X, y, mask=mask).factors_["theta"])

    def score(self, X, y=None):
        """Mean held-out predictive log-likelihood per entry of ``X`` (higher is better).

        Document completion, so that a document's entries are never scored by topic
        intensities inferred from themselves: the entries ``(d, v)`` with ``d + v`` even are
        held out (masked) while the documents' ``theta`` is inferred from the others with
        the topics held at ``components_`` (as :meth:`transform` does), and scored; then the
        other half the same way. Each entry's score is the log of its posterior predictive
        probability, averaged over up to 100 saved draws of ``theta`` (Gibbs; the variational
        mean for ``inference="variational"``): ``log P(X[d, v] | mu)`` with
        ``mu = theta[d] @ components_[:, v]``, the pmf of the privatized count
        ``Pois(mu) + 2Geo(alpha)`` for the private methods (the naive one included: it is
        scored on the data it was given), the Poisson pmf for ``"nonprivate"``. The mean over
        all entries (per entry, not per token: privatized counts have no tokens), so scores of
        corpora of different sizes compare.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features_in_)
            Held-out documents, privatized as the training ones (true counts for
            ``"nonprivate"``); at least 2 columns.
        y : None
            Ignored.

        Returns
        -------
        float
            The mean over the entries of ``X`` of the log predictive probability.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        ValueError
            For fewer than 2 columns, or as :meth:`transform`.

        Examples
        --------
        >>> from lpp.estimators import PrivateTopicModel
        >>> from lpp.simulate import make_private_factorization
        >>> data = make_private_factorization(20, 10, 2, rng=0)
        >>> est = PrivateTopicModel(2, alpha=data.alpha, n_iter=30, random_state=0)
        >>> score = est.fit(data.y_tilde[:15]).score(data.y_tilde[15:])
        >>> bool(-3.0 < score < 0.0)       # the log probability of an entry, on average
        True
        """
        counts, alpha = self._check_new_documents(X)
        n_docs, n_words = counts.shape
        if n_words < 2:
            raise ValueError("score holds out half of each document's entries and infers its "
                             "topics from the other half: X needs at least 2 columns")
        first_half = np.add.outer(np.arange(n_docs), np.arange(n_words)) % 2 == 0
        log_pmf = np.empty(counts.shape)
        for held in (first_half, ~first_half):
            # a column held out in every document tells nothing about theta (phi is fixed):
            # left out of the inference (with a single document, half of the columns)
            seen = ~held.all(axis=0)
            fit = self._fixed_topic_fit(counts[:, seen], alpha, held[:, seen], columns=seen)
            theta = fit.samples["theta"]
            draws = np.unique(np.linspace(0, len(theta) - 1, min(len(theta), _SCORE_DRAWS))
                              .round().astype(np.int64))
            x = counts[held]
            total = None
            for s in draws:
                rates = (theta[s] @ self.components_)[held]
                one = (poisson_logpmf(x, rates) if alpha is None
                       else privatized_poisson_logpmf(x, rates, alpha))
                total = one if total is None else np.logaddexp(total, one)
            log_pmf[held] = total - math.log(len(draws))
        return float(log_pmf.mean())

    @cached_property
    def inference_data_(self):
        """ArviZ InferenceData of a Gibbs fit's chains (see the class's Attributes)."""
        self._check_fitted()
        if isinstance(self.fit_, VIResult):
            raise AttributeError("a variational fit has no chain to diagnose")
        try:
            from lpp.diagnostics import to_inference_data

            names = None
            if hasattr(self, "feature_names_in_"):  # rows by position, columns by name
                n_rows = self.fit_.mu_hat.shape[0]
                names = [[str(d) for d in range(n_rows)], [str(v) for v in self.feature_names_in_]]
            return to_inference_data(self.fit_, names=names)
        except ImportError as exc:
            raise AttributeError("inference_data_ needs ArviZ: pip install lpp[diagnostics]") \
                from exc

    @property
    def _n_features_out(self):
        """The topics, one output column each (scikit-learn's ``get_feature_names_out``)."""
        return self.components_.shape[0]

    def __sklearn_is_fitted__(self) -> bool:
        return "fit_" in self.__dict__

    if SKLEARN:
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.sparse = True  # densified: CountVectorizer's output is welcome
            # true counts are non-negative; privatized ones are not
            tags.input_tags.positive_only = self.method == "nonprivate"
            return tags

    # ----- the engines ----------------------------------------------------------------------------
    def _infer(self, counts, alpha, mask, model, n_chains=1, device="cpu", init=None,
               **vi_options):
        """Run the engine the settings name on ``model`` (a model, or a VI adapter); a Gibbs
        chain's sweeps on ``device`` (the fit's setting; the fixed-topic chains of transform
        and score run on the CPU) from ``init`` (default: the ``init`` setting)."""
        if self.inference == "gibbs":
            settings = dict(n_iter=self.n_iter, burn_in=self.burn_in, thin=self.thin,
                            rng=random_state_rng(self.random_state), mask=mask,
                            init=chain_start(self.init if init is None else init),
                            progress=self.progress, n_chains=n_chains, device=device)
            if alpha is not None:
                return fit_private(counts, alpha, model, method=self.method, **settings)
            return fit_nonprivate(counts, model, **settings)
        settings = dict(max_iter=self.max_iter, tol=self.tol,
                        rng=random_state_rng(self.random_state), mask=mask,
                        progress=self.progress, **vi_options)
        if alpha is not None:
            return fit_variational(counts, alpha, model, method=self.method, **settings)
        return fit_variational_nonprivate(counts, model, **settings)

    def _fixed_topic_fit(self, counts, alpha, mask, columns=None):
        """Infer the documents' ``theta`` with the topics fixed (at ``components_``, or for a
        variational fit at its ``q(phi)``), restricted to ``columns`` (a boolean selection)
        when given."""
        fitted = model_from_params(self.fit_.model)
        if self.inference == "gibbs":
            phi = self.components_ if columns is None else self.components_[:, columns]
            # a dispersed start needs a variational fit of the topics, which are held here
            init = "data" if self.init == "dispersed" else self.init
            return self._infer(counts, alpha, mask, FixedTopicModel(phi, a0=fitted.a0,
                                                                    b0=fitted.b0), init=init)
        if not isinstance(self.fit_, VIResult):
            raise ValueError("the variational transform holds the fit's q(phi), which a Gibbs "
                             "fit does not have: fit with inference='variational' (or "
                             "transform with inference='gibbs')")
        q_phi = self.fit_.q["phi"]
        if columns is not None:
            q_phi = GammaFactor(q_phi.shape[:, columns], q_phi.rate[:, columns])
        # the topics are known, so the EM-like sweeps that find components are not needed
        return self._infer(counts, alpha, mask, FixedTopicVI(fitted, q_phi), em_sweeps=0)

    def _output(self, theta):
        """What transform returns: topic proportions or intensities (a new array)."""
        if not self.normalize:
            return np.array(theta, dtype=np.float64)
        weights = theta * self.components_.sum(axis=1)
        totals = weights.sum(axis=1, keepdims=True)
        uniform = np.full_like(weights, 1.0 / weights.shape[1])
        return np.divide(weights, totals, out=uniform, where=totals > 0)

    # ----- checks -----------------------------------------------------------------------------
    def _check_params(self):
        """The settings the engines do not check themselves (they check the numbers); returns
        the noise level as a float, or None for ``method="nonprivate"``."""
        for name, choices in (("inference", INFERENCES), ("method", METHODS), ("init", INITS),
                              ("device", DEVICES)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in choices:
                raise ValueError(f"{name} must be one of {choices}, got {value!r}")
        if not isinstance(self.normalize, (bool, np.bool_)):
            raise TypeError(f"normalize must be True or False, got {self.normalize!r}")
        if self.method == "nonprivate":
            if self.alpha is not None:
                raise ValueError("method='nonprivate' fits true counts: alpha must be None")
            return None
        if self.alpha is None:
            raise ValueError(
                f"method {self.method!r} needs alpha, the noise level the data were privatized "
                f"with: {type(self).__name__}(alpha=...), the same value as the "
                "GeometricMechanism's (alpha = exp(-epsilon / N), "
                "lpp.mechanism.alpha_from_epsilon). fit's second argument is y, which is "
                "ignored; method='nonprivate' fits true counts without alpha")
        alpha = float(self.alpha) if isinstance(self.alpha, ExactAlpha) else self.alpha
        level = noise_level_array(alpha)
        if level.ndim:
            raise ValueError(f"alpha must be one number, got an array of shape {level.shape} "
                             "(for noise levels that differ between people, call "
                             "lpp.inference.fit_private)")
        return float(level)

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 "'fit' with appropriate arguments before using this "
                                 "estimator.")

    def _check_new_documents(self, X):
        """The counts of documents to transform or score, and the noise level."""
        self._check_fitted()
        alpha = self._check_params()
        counts = count_matrix(X, signed=alpha is not None)
        check_features(self, X, reset=False)
        return counts, alpha


def _posterior_means(fit) -> dict:
    """The posterior mean of every latent: the saved draws' mean for a Gibbs fit, ``E_q`` for a
    variational one (its one saved "sample"); the last point when nothing was saved (a run
    interrupted before its first saved iteration)."""
    if fit.n_saved:
        return {name: draws.mean(axis=0) for name, draws in fit.samples.items() if name != "y"}
    return {name: np.array(value) for name, value in fit.state.items()}
