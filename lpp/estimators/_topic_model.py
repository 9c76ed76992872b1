"""The locally private topic model as a scikit-learn transformer: :class:`PrivateTopicModel`."""
from __future__ import annotations

import numbers
from dataclasses import replace
from functools import cached_property

import numpy as np

from lpp.inference import (
    FixedTopicModel,
    RunOptions,
    fit_nonprivate,
    fit_private,
    make_model,
    model_from_params,
)
from lpp.inference.chain import DEVICES
from lpp.mechanism import GeometricMechanism as Mechanism
from lpp.mechanism import alpha_of
from lpp.validation import check_schedule, densify, noise_level_array, positive_int
from lpp.vi import (
    FixedTopicVI,
    GammaFactor,
    VIOptions,
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
    count_tags,
    random_state_rng,
)
from ._predictive import log_predictive

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
#: what :meth:`PrivateTopicModel.score` says when X has one column (scikit-learn's estimator
#: checks recognise "n_features=1" as naming the problem)
_ONE_COLUMN = ("score holds out half of each document's entries and infers its topics from "
               "the other half: X needs at least 2 columns, got n_features={}")


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
    mechanism : lpp.mechanism.GeometricMechanism or None, default=None
        The mechanism the data were privatized with: the :class:`GeometricMechanism` before
        this estimator in a pipeline (the same object: the privacy level is then given once),
        or an :class:`lpp.mechanism.GeometricMechanism` of the data owners' ``epsilon`` and
        ``N``. One level for every entry (for levels that differ between people, call
        :func:`lpp.inference.fit_private`). The private methods need it or ``alpha``; must be
        None for ``method="nonprivate"``.
    alpha : float, lpp.mechanism.ExactAlpha or None, default=None
        The noise level ``alpha = exp(-epsilon / N)`` in (0, 1) itself, instead of
        ``mechanism`` (give one of the two).
    method : {"collapsed", "bessel", "naive", "nonprivate"}, default="collapsed"
        The privacy step the inference is built on: ``"collapsed"`` (the noise integrated out
        exactly), ``"bessel"`` (the paper's augmentation), ``"naive"`` (``max(X, 0)`` treated
        as the true counts); ``"nonprivate"`` fits true counts (the reference method).
    inference : {"gibbs", "variational"}, default="gibbs"
        Gibbs sampling (:func:`lpp.inference.fit_private`) or coordinate-ascent VI
        (:func:`lpp.vi.fit_variational`).
    n_iter : int, default=1000
        Gibbs only: sweeps of the chain; the same for the chains of :meth:`transform` and
        :meth:`score`.
    burn_in : int or None, default=None
        Gibbs only: the first sweeps, left out of the posterior means (the chain's way from
        its start to the posterior). None: half of the sweeps, ``n_iter // 2``.
    thin : int, default=1
        Gibbs only: after the burn-in, every ``thin``-th sweep is a saved draw (1: every
        sweep, which gives the means with the least Monte Carlo error).
    keep_samples : bool or int, default=False
        What :meth:`fit` keeps of the saved draws besides their means. False: none (the
        posterior means are summed as the chain runs; ``fit_`` keeps the chain's log joint,
        timings and last point, nothing of the data's size). True: ``fit_`` is the fit as
        :func:`lpp.inference.fit_private` returns it, every saved draw in ``fit_.samples``
        ((D + V) x K floats each) and the posterior mean of the rates in ``fit_.mu_hat``
        (D x V). An int n: n draws evenly spaced among the saved ones, with their iterations
        and log joint, in ``fit_``. The estimates (``components_``, ``factors_``,
        :meth:`transform`, :meth:`score`) are the same whatever is kept;
        :attr:`inference_data_` needs kept draws. A variational fit has no draws: True (or
        any n) keeps its ``fit_.mu_hat`` and per-entry ``fit_.extra``.
    init : {"data", "em", "prior", "dispersed"}, default="data"
        Gibbs only: the chain's start (see :func:`lpp.inference.fit_private`). The chains
        of :meth:`transform` and :meth:`score` hold the topics fixed, so there is no
        variational fit of them to disperse a start around: with ``"dispersed"`` they start
        from the data.
    n_chains : int, default=1
        Gibbs only: independent chains of the fit (see :func:`lpp.inference.fit_private`);
        with more than one, ``fit_`` holds them all, ``mu_hat_`` pools them, ``factors_`` and
        ``components_`` are chain 0's (each chain labels its topics its own way), and
        ``chain_factors_`` has every chain's.
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
    progress : bool or None, default=None
        Show a progress bar (tqdm, ``lpp[progress]``): None shows it on interactive
        terminals only, as :func:`lpp.inference.fit_private` does; False never, True always.
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
    chain_factors_ : list of dict of ndarray
        ``factors_`` of each chain (one item, ``factors_`` itself, for one chain).
    fit_ : lpp.inference.FitResult or lpp.vi.VIResult
        The fit's record: per chain its log joint per saved draw, timings, seed and last
        point; ``fit_.device`` and ``fit_.engine`` name where and by which engine a Gibbs
        fit ran. Arrays of the data's size (the rates' mean ``fit_.mu_hat``, the Bessel
        step's per-entry state) and the draws themselves are kept only as ``keep_samples``
        says; a variational fit keeps its factors ``fit_.q`` and, with ``keep_samples``,
        ``fit_.mu_hat`` and ``fit_.extra``.
    mu_hat_ : ndarray of shape (n_samples, n_features_in_)
        The training documents' Poisson rates from the posterior means,
        ``factors_["theta"] @ components_`` (with several chains, each chain's averaged):
        computed on each access, not stored. For a variational fit it is ``E_q[mu]``; for a
        Gibbs fit, the product of the means rather than the mean of the product (which
        ``fit_.mu_hat`` holds after a fit with ``keep_samples=True``).
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
        Gibbs fits that kept draws (``keep_samples``), with ArviZ installed
        (``lpp[diagnostics]``): the chain's log joint, total rate and a few entries' rates
        per kept draw (:func:`lpp.diagnostics.to_inference_data`), an entry labelled by its
        row's position and, after a DataFrame, its column's name. Computed on first access;
        absent without ArviZ, without kept draws and for variational fits.

    See Also
    --------
    GeometricMechanism : privatizes counts; give it as ``mechanism``.
    lpp.inference.fit_private : the Gibbs fit behind ``inference="gibbs"``, for the other
        models (communities, CP tensors) and per-person noise levels.

    Notes
    -----
    The documents' rows are privatized counts, which may be negative; true counts for
    ``method="nonprivate"``. Non-integer values are refused: the likelihood is one of counts.
    A fitted estimator holds what its estimates need: the posterior means (K x V and D x K
    floats) and the run's record, not the draws nor anything of the data's size unless
    ``keep_samples`` asks for the draws; scikit-learn's estimator checks that cannot apply to
    count data are listed by :func:`lpp.estimators.expected_failed_checks`.

    Sparse true counts (a scipy.sparse ``X`` of any format with ``method="nonprivate"``) stay
    sparse through a Gibbs :meth:`fit` and :meth:`transform`: the chain visits the non-zero
    entries only and forms nothing of the data's size, and the fit equals the one of the same
    counts given dense, bit for bit. :meth:`score`, a variational fit and ``device="cuda"``
    densify them once; a ``mask`` is D x V itself, and ``keep_samples=True`` keeps the rates'
    mean (D x V). Privatized counts are dense by
    nature (8 bytes per entry as int64): a sparse ``X`` of a private method is densified once,
    and a collapsed Gibbs fit adds about 25 bytes per entry at its peak (measured by
    ``python -m bench.estimators``; docs/estimators.md).

    :meth:`transform` runs a new chain (or CAVI) over the given documents with the topics held
    at ``components_``; its Monte Carlo error depends on ``n_iter``, and a document's result
    on the batch it is transformed with (the random streams are laid out per batch).

    Examples
    --------
    >>> from lpp.estimators import GeometricMechanism, PrivateTopicModel
    >>> from lpp.simulate import make_topics
    >>> corpus = make_topics(rng=0, n_docs=30, n_topics=3)
    >>> mechanism = GeometricMechanism(epsilon=1.0, N=1, random_state=1)
    >>> X = mechanism.fit_transform(corpus.y)
    >>> est = PrivateTopicModel(3, mechanism=mechanism, n_iter=50, random_state=0).fit(X[:24])
    >>> est.components_.shape
    (3, 15)
    >>> est.transform(X[24:]).sum(axis=1).round(6)          # topic proportions
    array([1., 1., 1., 1., 1., 1.])
    >>> bool(est.score(X[24:]) < 0)                          # mean log density per entry
    True
    """

    def __init__(self, n_components=10, *, mechanism=None, alpha=None, method="collapsed",
                 inference="gibbs", n_iter=1000, burn_in=None, thin=1, keep_samples=False,
                 init="data", n_chains=1, max_iter=None, tol=None, a0=0.1, b0=1.0,
                 normalize=True, random_state=None, progress=None, device="cpu"):
        self.n_components = n_components
        self.mechanism = mechanism
        self.alpha = alpha
        self.method = method
        self.inference = inference
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.keep_samples = keep_samples
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
        keep = self._check_keep_samples()
        counts = count_matrix(X, signed=alpha is not None, keep_sparse=True)
        check_features(self, X, reset=True)
        model = make_model("topics", self.n_components, self.a0, self.b0)
        if self.inference != "gibbs" and self.n_chains != 1:
            raise ValueError("n_chains > 1 runs several Gibbs chains; a variational fit is one "
                             "optimisation: set n_chains=1 or inference='gibbs'")
        if self.inference != "gibbs" and self.device != "cpu":
            raise ValueError(f"device={self.device!r} runs Gibbs sweeps; a variational fit runs "
                             "on the CPU: set device='cpu' or inference='gibbs'")
        fit, means = self._infer(counts, alpha, mask, model, n_chains=self.n_chains,
                                 device=self.device, keep=keep)
        # topics are labelled independently in each chain: the factors are chain 0's, the
        # rates (label-invariant) are pooled over the chains
        chain_factors = _chain_means(fit, means)
        self.__dict__.pop("inference_data_", None)  # the cached diagnostics of a previous fit
        self.fit_ = _kept(fit, means, keep)
        self.chain_factors_ = chain_factors
        self.factors_ = chain_factors[0]
        self.components_ = np.ascontiguousarray(self.factors_["phi"])
        first = fit.chains[0] if hasattr(fit, "chains") else fit
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
        >>> train, new = data.y_tilde[:15], data.y_tilde[15:]
        >>> est = PrivateTopicModel(2, alpha=data.alpha, n_iter=30, random_state=0).fit(train)
        >>> est.transform(new).shape
        (5, 2)
        >>> est.set_params(normalize=False).transform(new).sum(axis=1).min() > 0
        np.True_
        """
        counts, alpha = self._check_new_documents(X, keep_sparse=True)
        fit, means = self._fixed_topic_fit(counts, alpha, mask)
        return self._output(_chain_means(fit, means)[0]["theta"])

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

        Document completion, so that no entry is scored by topic intensities inferred from
        itself: the columns are split by parity. The documents' ``theta`` is inferred from
        their odd columns alone (a chain as :meth:`transform` runs, on those columns, with the
        topics held at ``components_[:, odd]``), and each even entry is scored; then the
        odd entries from a chain on the even columns. Each entry's score is the log of its
        posterior predictive probability, averaged over up to 100 saved draws of ``theta``
        evenly spaced in the chain (Gibbs; the variational mean for
        ``inference="variational"``)::

            log (1/S) sum_s P(X[d, v] | mu_s),    mu_s = theta_s[d] @ components_[:, v]

        where ``P`` is the pmf of the privatized count ``Pois(mu) + 2Geo(alpha)`` (the true
        count summed out exactly: :func:`lpp.distributions.privatized_poisson_logpmf`) for
        the private methods (the naive one included: it is scored on the data it was given),
        the Poisson pmf for ``"nonprivate"``. The mean over all entries (per entry, not per
        token: privatized counts have no tokens), so scores of corpora of different sizes
        compare; times ``X.size`` it is the held-out log-likelihood of ``X`` in nats, the
        scale on which candidates differ (docs/estimators.md, *Choosing the number of
        topics*). Each of the two chains runs ``n_iter`` sweeps over half of the columns (its
        cost beside a transform's: docs/estimators.md). An int ``random_state`` repeats the
        score bit for bit (the two chains share its seed).

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
        >>> score = PrivateTopicModel(2, alpha=data.alpha, n_iter=30, random_state=0).fit(
        ...     data.y_tilde[:15]).score(data.y_tilde[15:])
        >>> bool(-3.0 < score < 0.0)       # the log probability of an entry, on average
        True
        """
        return float(self._held_out_log_pmf(X).mean())

    def _held_out_log_pmf(self, X):
        """Each entry's held-out log predictive probability (D x V), as :meth:`score`
        describes: the columns split by parity, each half scored from a chain on the other."""
        counts, alpha = self._check_new_documents(X)
        n_words = counts.shape[1]
        if n_words < 2:
            raise ValueError(_ONE_COLUMN.format(n_words))
        even = np.arange(n_words) % 2 == 0
        log_pmf = np.empty(counts.shape)
        for held in (even, ~even):
            # the other half's columns alone: the documents' theta seen through them, with no
            # entry of the run masked (a masked entry would cost a sweep as much as a seen one)
            seen = ~held
            fit, means = self._fixed_topic_fit(counts[:, seen], alpha, None, columns=seen,
                                               keep=_SCORE_DRAWS)
            log_pmf[:, held] = log_predictive(counts[:, held], _theta_draws(fit, means),
                                              self.components_[:, held], alpha)
        return log_pmf

    @cached_property
    def inference_data_(self):
        """ArviZ InferenceData of a Gibbs fit's chains (see the class's Attributes)."""
        self._check_fitted()
        if isinstance(self.fit_, VIResult):
            raise AttributeError("a variational fit has no chain to diagnose")
        if not self.fit_.chains[0].samples:
            raise AttributeError("inference_data_ needs the fit's draws: fit with "
                                 "keep_samples=True, or the number of draws to keep")
        # the export picks its entries by the rates' mean: where the fit did not keep it,
        # the product of the posterior means stands in (formed here, not stored)
        chains = [chain if chain.mu_hat is not None
                  else replace(chain, mu_hat=factors["theta"] @ factors["phi"])
                  for chain, factors in zip(self.fit_.chains, self.chain_factors_)]
        try:
            from lpp.diagnostics import to_inference_data

            names = None
            if hasattr(self, "feature_names_in_"):  # rows by position, columns by name
                n_rows = self.factors_["theta"].shape[0]
                names = [[str(d) for d in range(n_rows)], [str(v) for v in self.feature_names_in_]]
            return to_inference_data(chains, names=names)
        except ImportError as exc:
            raise AttributeError("inference_data_ needs ArviZ: pip install lpp[diagnostics]") \
                from exc

    @property
    def mu_hat_(self):
        """The training documents' rates from the posterior means (see the class's
        Attributes): ``theta @ phi`` of each chain's means, averaged over the chains; a new
        D x V array on each access."""
        self._check_fitted()
        factors = self.chain_factors_
        rates = factors[0]["theta"] @ factors[0]["phi"]
        for other in factors[1:]:
            rates += other["theta"] @ other["phi"]
        if len(factors) > 1:
            rates /= len(factors)
        return rates

    @property
    def _n_features_out(self):
        """The topics, one output column each (scikit-learn's ``get_feature_names_out``)."""
        return self.components_.shape[0]

    def __sklearn_is_fitted__(self) -> bool:
        return "fit_" in self.__dict__

    if SKLEARN:
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            count_tags(tags, positive_only=self.method == "nonprivate")
            return tags

    # ----- the engines ----------------------------------------------------------------------------
    def _infer(self, counts, alpha, mask, model, n_chains=1, device="cpu", init=None,
               keep=0, **vi_options):
        """Run the engine the settings name on ``model`` (a model, or a VI adapter); a Gibbs
        chain's sweeps on ``device`` (the fit's setting; the fixed-topic chains of transform
        and score run on the CPU) from ``init`` (default: the ``init`` setting).

        Returns ``(fit, means)``: a Gibbs fit with the :class:`_RunningMeans` of its chains,
        which kept ``keep`` draws (True: the fit itself keeps every draw); a variational fit
        with None."""
        # a mask is the missing entries of a masked array (a sparse input has none)
        data = counts if mask is None else np.ma.masked_array(densify(counts), mask)
        rng = random_state_rng(self.random_state)
        if self.inference == "gibbs":
            n_iter, burn_in, thin = self._schedule()
            means = _RunningMeans(n_iter, burn_in, thin, 0 if keep is True else keep)
            run = RunOptions(n_iter=n_iter, burn_in=burn_in, thin=thin,
                             init=chain_start(self.init if init is None else init),
                             progress=self.progress, save_latents=keep is True,
                             save_rates=keep is True, callback=means)
            settings = dict(run=run, rng=rng, chains=n_chains, device=device)
            if alpha is not None:
                return fit_private(data, alpha, model, method=self.method, **settings), means
            return fit_nonprivate(data, model, **settings), means
        run = VIOptions(max_iter=self.max_iter, tol=self.tol, progress=self.progress,
                        **vi_options)
        if alpha is not None:
            return fit_variational(data, alpha, model, method=self.method, run=run,
                                   rng=rng), None
        return fit_variational_nonprivate(data, model, run=run, rng=rng), None

    def _fixed_topic_fit(self, counts, alpha, mask, columns=None, keep=0):
        """Infer the documents' ``theta`` with the topics fixed (at ``components_``, or for a
        variational fit at its ``q(phi)``), restricted to ``columns`` (a boolean selection)
        when given; ``(fit, means)`` as :meth:`_infer` returns them, ``keep`` draws kept."""
        fitted = model_from_params(self.fit_.model)
        if self.inference == "gibbs":
            phi = self.components_ if columns is None else self.components_[:, columns]
            # a dispersed start needs a variational fit of the topics, which are held here
            init = "data" if self.init == "dispersed" else self.init
            return self._infer(counts, alpha, mask, FixedTopicModel(phi, a0=fitted.a0,
                                                                    b0=fitted.b0), init=init,
                               keep=keep)
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
    def _schedule(self):
        """``(n_iter, burn_in, thin)`` of the Gibbs chains, checked; ``burn_in=None`` is half
        of the sweeps."""
        burn_in = self.burn_in
        if burn_in is None:
            burn_in = positive_int(self.n_iter, "n_iter") // 2
        n_iter, burn_in, thin, _ = check_schedule(self.n_iter, burn_in, self.thin, 1)
        return n_iter, burn_in, thin

    def _check_keep_samples(self):
        """``keep_samples`` as True (every draw) or an int (that many, 0 for none)."""
        keep = self.keep_samples
        if isinstance(keep, (bool, np.bool_)):
            return bool(keep)
        if not isinstance(keep, numbers.Integral):
            raise TypeError(f"keep_samples must be True, False or a number of draws, got "
                            f"{keep!r}")
        if keep < 0:
            raise ValueError(f"keep_samples must be a number of draws >= 0, got {keep}")
        return int(keep)

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
        # checked here under the estimator's name (the fits take it as chains=)
        positive_int(self.n_chains, "n_chains")
        if self.method == "nonprivate":
            if self.alpha is not None or self.mechanism is not None:
                raise ValueError("method='nonprivate' fits true counts: mechanism and alpha "
                                 "must be None")
            return None
        if self.mechanism is not None:
            if self.alpha is not None:
                raise ValueError("give mechanism or alpha, not both: the mechanism holds the "
                                 "level alpha = exp(-epsilon / N)")
            if not isinstance(self.mechanism, Mechanism):
                raise TypeError("mechanism must be a GeometricMechanism (lpp.estimators' or "
                                f"lpp.mechanism's), got {type(self.mechanism).__name__}")
            level = noise_level_array(alpha_of(self.mechanism), "the mechanism's level")
        elif self.alpha is None:
            raise ValueError(
                f"method {self.method!r} needs the privacy level the data were privatized "
                f"with: {type(self).__name__}(mechanism=...), the GeometricMechanism that "
                "privatized them (or alpha=exp(-epsilon / N)). fit's second argument is y, "
                "which is ignored; method='nonprivate' fits true counts without a mechanism")
        else:
            level = noise_level_array(alpha_of(self.alpha))
        if level.ndim:
            raise ValueError(f"the privacy level must be one number, got an array of shape "
                             f"{level.shape} (for noise levels that differ between people, "
                             "call lpp.inference.fit_private)")
        return float(level)

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 "'fit' with appropriate arguments before using this "
                                 "estimator.")

    def _check_new_documents(self, X, keep_sparse=False):
        """The counts of documents to transform or score (sparse true counts kept sparse with
        ``keep_sparse``: :func:`count_matrix`), and the noise level."""
        self._check_fitted()
        alpha = self._check_params()
        counts = count_matrix(X, signed=alpha is not None, keep_sparse=keep_sparse)
        check_features(self, X, reset=False)
        return counts, alpha


def _evenly_spaced(n: int, k: int) -> np.ndarray:
    """The positions of ``min(n, k)`` items evenly spaced among ``n`` (first and last
    included)."""
    return np.unique(np.linspace(0, n - 1, min(n, k)).round().astype(np.int64))


class _ChainSums:
    """One chain's running sums of its saved draws, and the draws it keeps."""

    def __init__(self):
        self.last = 0  # the last sweep seen
        self.n = 0
        self.sums = {}
        self.kept_iterations = []
        self.kept = {}

    def add(self, t: int, state: dict, keep: bool) -> None:
        for name, value in state.items():
            if name in self.sums:
                np.add(self.sums[name], value, out=self.sums[name])
            else:
                self.sums[name] = np.array(value, dtype=np.float64)
            if keep:
                # the chain replaces its state at each sweep, never changes it: no copy
                self.kept.setdefault(name, []).append(value)
        self.n += 1
        if keep:
            self.kept_iterations.append(t)

    def means(self) -> dict:
        return {name: total / self.n for name, total in self.sums.items()}

    def draws(self) -> dict:
        return {name: np.stack(values) for name, values in self.kept.items()}


class _RunningMeans:
    """The per-sweep callback of a Gibbs fit: the posterior means of each chain's latents,
    summed as the chain runs, so that no draw has to be stored for them; and ``keep`` draws
    evenly spaced among the saved ones (0: none).

    The chains of a fit run one after the other, each numbering its sweeps from 1, so a sweep
    numbered at most the last one seen starts the next chain.
    """

    def __init__(self, n_iter: int, burn_in: int, thin: int, keep: int):
        self.burn_in, self.thin = burn_in, thin
        saved = np.arange(burn_in + thin, n_iter + 1, thin)
        self.keep_at = (frozenset(saved[_evenly_spaced(saved.size, keep)].tolist()) if keep
                        else frozenset())
        self.chains = []

    def __call__(self, chain) -> None:
        t = chain.iteration
        if not self.chains or t <= self.chains[-1].last:
            self.chains.append(_ChainSums())
        sums = self.chains[-1]
        sums.last = t
        if t > self.burn_in and (t - self.burn_in) % self.thin == 0:
            sums.add(t, chain.state, t in self.keep_at)

    def chain(self, c: int) -> _ChainSums:
        """Chain ``c``'s sums (empty for a chain stopped before its first sweep)."""
        return self.chains[c] if c < len(self.chains) else _ChainSums()


def _chains(fit) -> list:
    return list(fit.chains) if hasattr(fit, "chains") else [fit]


def _chain_means(fit, means) -> list:
    """The posterior mean of every latent, per chain: the running means of a Gibbs fit's
    saved draws (the chain's last point where none was saved: a run interrupted before its
    first saved sweep), ``E_q`` for a variational fit."""
    if means is None:  # the one saved "sample" of a variational fit is E_q
        if fit.n_saved:
            return [{name: draws.mean(axis=0) for name, draws in fit.samples.items()}]
        return [{name: np.array(value) for name, value in fit.state.items()}]
    out = []
    for c, chain in enumerate(_chains(fit)):
        sums = means.chain(c)
        out.append(sums.means() if sums.n else
                   {name: np.array(value, dtype=np.float64) for name, value in chain.state.items()})
    return out


def _theta_draws(fit, means) -> np.ndarray:
    """The draws of ``theta`` that :meth:`PrivateTopicModel.score` averages over: the kept
    draws of a Gibbs fit's chain (its last point where none was saved), the mean of a
    variational one."""
    if means is not None and means.chain(0).kept:
        return means.chain(0).draws()["theta"]
    if means is None and fit.n_saved:
        return fit.samples["theta"]
    return np.asarray(_chains(fit)[0].state["theta"])[None]


def _kept(fit, means, keep):
    """What the estimator keeps of ``fit`` as ``fit_`` (``keep``: True, or a number of draws).

    True keeps it whole. Otherwise nothing of the data's size stays: the rates' mean, the
    privacy step's per-entry state (the Bessel step's) and a variational fit's per-entry
    extras go; a Gibbs chain keeps its log joint, timings and last point, and for ``keep`` n
    the kept draws as its samples, with their iterations and log joint (the record of a fit
    thinned to them); the mask (``exclude``) stays only beside kept draws, which the
    diagnostics that read it need.
    """
    if keep is True:
        return fit
    if isinstance(fit, VIResult):
        return fit if keep else replace(fit, mu_hat=None, extra={})
    chains = []
    for c, chain in enumerate(fit.chains):
        changes = {"mu_hat": None, "aux": {}}
        sums = means.chain(c)
        if keep and sums.kept:
            at = np.searchsorted(chain.saved_iterations, sums.kept_iterations)
            changes.update(samples=sums.draws(), saved_iterations=chain.saved_iterations[at],
                           log_joint=chain.log_joint[at])
        chains.append(replace(chain, **changes))
    return replace(fit, chains=chains, exclude=fit.exclude if keep else None)
