"""Estimators in the scikit-learn mould over lpp's Gibbs samplers and CAVIs.

:class:`PrivatePoissonFactorization` (any built-in model) and :class:`PrivateTopicModel` (the
topic model) run :func:`lpp.inference.fit_private` / :func:`lpp.inference.fit_nonprivate` or
:func:`lpp.vi.fit_variational` / :func:`lpp.vi.fit_variational_nonprivate` behind
scikit-learn's conventions: the constructor only stores its parameters (every check happens in
``fit``); ``fit`` returns the estimator; what a fit learns lives in attributes whose names end
in an underscore; ``get_params`` / ``set_params`` read and write the constructor's parameters,
so scikit-learn's ``clone`` works; ``transform`` maps new documents to their topic
intensities. scikit-learn itself is never imported.

The data are the analyst's: privatized counts ``Y_tilde`` and the mechanism's ``alpha`` (the
private methods), or true counts with ``method="nonprivate"`` (the reference method). Import
from this module (``from lpp.estimators import PrivateTopicModel``); ``import lpp`` alone does
not load it.
"""
from __future__ import annotations

import inspect
from functools import cached_property

import numpy as np

from lpp.inference import (
    FixedTopicModel,
    fit_nonprivate,
    fit_private,
    make_model,
    model_from_params,
)
from lpp.vi import (
    FixedTopicVI,
    VIResult,
    chain_start,
    fit_variational,
    fit_variational_nonprivate,
)

__all__ = ["INFERENCES", "METHODS", "NotFittedError", "PrivatePoissonFactorization",
           "PrivateTopicModel"]

#: how the posterior is approximated: the Gibbs samplers or coordinate-ascent VI
INFERENCES = ("gibbs", "variational")
#: the privacy step each method is built on (the same names for both inferences), or the
#: non-private reference fitted to true counts
METHODS = ("collapsed", "bessel", "naive", "nonprivate")
#: starts of a Gibbs chain (the variational fits start from their own EM-like sweeps)
INITS = ("data", "dispersed", "em", "prior")
#: per model, the latent that holds one factor per column of the data (the "features"), and
#: whether it is stored column-major (features x components) and must be transposed to give
#: ``components_`` its (n_components, n_features) shape
_COMPONENTS = {"topics": ("phi", False), "communities": ("theta", True), "cp": ("factor2", True)}


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``.

    A ValueError and an AttributeError at once, as scikit-learn's ``NotFittedError`` is, so
    code that catches either keeps working.
    """


class _Parameters:
    """``get_params``, ``set_params`` and ``__repr__`` read from the signature of ``__init__``.

    scikit-learn's ``BaseEstimator`` rules: every constructor argument is stored under its own
    name and nothing else happens in ``__init__``, so the signature lists the parameters and
    ``type(est)(**est.get_params())`` rebuilds an unfitted copy.
    """

    @classmethod
    def _param_names(cls) -> list[str]:
        names = []
        for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                # *args / **kwargs hide parameters from get_params, so clones would lose them
                raise TypeError(f"{cls.__name__}.__init__ must name every parameter "
                                f"(no *args or **kwargs), found {p}")
            names.append(p.name)
        return names

    def get_params(self, deep: bool = True) -> dict:
        """The estimator's parameters, by name.

        Parameters
        ----------
        deep : bool
            scikit-learn's flag for the parameters of nested estimators; no parameter of these
            estimators is an estimator, so it changes nothing.

        Returns
        -------
        dict
            Every constructor parameter and its current value.

        Examples
        --------
        >>> from lpp.estimators import PrivateTopicModel
        >>> PrivateTopicModel(5, n_iter=200).get_params()["n_iter"]
        200
        """
        return {name: getattr(self, name) for name in self._param_names()}

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

        Examples
        --------
        >>> from lpp.estimators import PrivateTopicModel
        >>> PrivateTopicModel(5).set_params(method="naive", n_iter=50)
        PrivateTopicModel(n_components=5, method='naive', n_iter=50)
        """
        names = self._param_names()
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise ValueError(f"invalid parameter(s) {unknown} for {type(self).__name__}; "
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


def _is_default(value, default) -> bool:
    # by type as well as value: 1.0 == True and 0 == False, yet each is a different setting
    return value is default or (type(value) is type(default) and value == default)


def _posterior_means(fit) -> dict:
    """The posterior mean of every latent: the saved draws' mean for a Gibbs fit, ``E_q`` for a
    variational one (its one saved "sample"); the last point when nothing was saved (a run
    interrupted before its first saved iteration)."""
    if fit.n_saved:
        return {name: draws.mean(axis=0) for name, draws in fit.samples.items() if name != "y"}
    return {name: np.array(value) for name, value in fit.state.items()}


class _PrivateFactorization(_Parameters):
    """What both estimators share: every parameter but ``model``, fitting and transforming.

    A subclass gives ``model``, as a parameter (:class:`PrivatePoissonFactorization`) or as a
    class attribute (:class:`PrivateTopicModel`); only parameters live on the instance.
    """

    def __init__(self, n_components=10, *, inference="gibbs", method="collapsed", n_iter=1000,
                 burn_in=0, thin=1, init="data", n_chains=1, max_iter=None, tol=None, a0=0.1,
                 b0=1.0, random_state=None, progress=False):
        self.n_components = n_components
        self.inference = inference
        self.method = method
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.init = init
        self.n_chains = n_chains
        self.max_iter = max_iter
        self.tol = tol
        self.a0 = a0
        self.b0 = b0
        self.random_state = random_state
        self.progress = progress

    # ----- fitting ------------------------------------------------------------------------------
    def fit(self, Y_tilde, alpha=None, *, mask=None):
        """Fit the model to privatized counts.

        Parameters
        ----------
        Y_tilde : array_like of int
            Privatized counts (whole numbers, may be negative), shaped as the model expects;
            the true counts for ``method="nonprivate"``.
        alpha : float or array_like or None
            The geometric mechanism's noise level in (0, 1), ``exp(-epsilon / N)``: a scalar,
            one per row (shape ``(D, 1)``) or one per entry. Required by the private methods;
            must be None for ``"nonprivate"``.
        mask : array_like of bool, optional
            The data's shape, True marking a missing entry (no likelihood).

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            For an unknown ``inference``, ``method``, ``init`` or ``model``, settings out of
            range, counts that are not whole numbers, or an ``alpha`` that is missing, out of
            (0, 1) or misshapen (each names the setting).

        Examples
        --------
        >>> from lpp.estimators import PrivateTopicModel
        >>> from lpp.simulate import make_private_factorization
        >>> data = make_private_factorization(20, 10, 2, rng=0)
        >>> est = PrivateTopicModel(2, n_iter=30, random_state=0).fit(data.y_tilde, data.alpha)
        >>> est.components_.shape, est.factors_["theta"].shape, est.n_features_in_
        ((2, 10), (20, 2), 10)
        """
        self._check_settings()
        model = make_model(self.model, self.n_components, self.a0, self.b0)
        if self.inference != "gibbs" and self.n_chains != 1:
            raise ValueError("n_chains > 1 runs several Gibbs chains; a variational fit is one "
                             "optimisation: set n_chains=1 or inference='gibbs'")
        fit = self._infer(Y_tilde, alpha, mask, model, n_chains=self.n_chains)
        # components are labelled independently in each chain: the factors are chain 0's,
        # the rates (label-invariant) are pooled over the chains
        factors = _posterior_means(fit.chains[0] if hasattr(fit, "chains") else fit)
        name, transposed = _COMPONENTS[model.name]
        self.__dict__.pop("inference_data_", None)  # the cached diagnostics of a previous fit
        self.fit_ = fit
        self.factors_ = factors
        self.components_ = np.ascontiguousarray(factors[name].T if transposed else factors[name])
        self.n_features_in_ = int(np.shape(Y_tilde)[-1])
        self.mu_hat_ = fit.mu_hat
        self.seed_ = fit.seed
        return self

    def transform(self, Y_tilde, alpha=None, *, mask=None):
        """Topic intensities of new documents, with the fitted topics held fixed.

        Gibbs: a chain of :class:`lpp.inference.FixedTopicModel` with the topics at
        ``components_`` (their posterior mean) samples the new documents' ``theta`` only.
        Variational: the CAVI of :class:`lpp.vi.FixedTopicVI` updates ``q(theta)`` with
        ``q(phi)`` held at the fit's factor. The method, iteration settings and
        ``random_state`` are the estimator's current parameters; the prior is the fit's.

        Parameters
        ----------
        Y_tilde : array_like of int, shape (n_docs, n_features_in_)
            Privatized counts of the new documents (true counts for ``"nonprivate"``).
        alpha : float or array_like or None
            Their noise level(s), as for :meth:`fit`.
        mask : array_like of bool, optional
            True marks a missing entry.

        Returns
        -------
        ndarray, shape (n_docs, n_components)
            The posterior mean of each document's topic intensities ``theta``.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        ValueError
            For a model other than the topic model, documents over another vocabulary
            (``n_features_in_`` columns expected), a variational transform of a Gibbs fit, or
            bad data or settings (as :meth:`fit`).

        Examples
        --------
        >>> from lpp.estimators import PrivateTopicModel
        >>> from lpp.simulate import make_private_factorization
        >>> data = make_private_factorization(20, 10, 2, rng=0)
        >>> est = PrivateTopicModel(2, n_iter=30, random_state=0)
        >>> est.fit(data.y_tilde[:15], data.alpha).transform(data.y_tilde[15:], data.alpha).shape
        (5, 2)
        """
        self._check_fitted()
        self._check_settings()
        self._check_topics("transform")
        shape = np.shape(Y_tilde)
        if len(shape) != 2 or shape[1] != self.n_features_in_:
            raise ValueError(f"the new documents have shape {shape}, but {type(self).__name__} "
                             f"was fitted to {self.n_features_in_} columns (words)")
        fitted = model_from_params(self.fit_.model)
        if self.inference == "gibbs":
            model = FixedTopicModel(self.components_, a0=fitted.a0, b0=fitted.b0)
            fit = self._infer(Y_tilde, alpha, mask, model)
        else:
            if not isinstance(self.fit_, VIResult):
                raise ValueError("the variational transform holds the fit's q(phi), which a "
                                 "Gibbs fit does not have: fit with inference='variational' "
                                 "(or transform with inference='gibbs')")
            # the topics are known, so the EM-like sweeps that find components are not needed
            fit = self._infer(Y_tilde, alpha, mask, FixedTopicVI(fitted, self.fit_.q["phi"]),
                              em_sweeps=0)
        return _posterior_means(fit)["theta"]

    def fit_transform(self, Y_tilde, alpha=None, *, mask=None):
        """Fit, and return the training documents' topic intensities from that fit.

        The posterior mean of ``theta`` from the fit itself (``factors_["theta"]``), not a
        second run with the topics held fixed.

        Parameters
        ----------
        Y_tilde, alpha, mask
            As for :meth:`fit`.

        Returns
        -------
        ndarray, shape (n_docs, n_components)

        Examples
        --------
        >>> from lpp.estimators import PrivateTopicModel
        >>> from lpp.simulate import make_private_factorization
        >>> data = make_private_factorization(20, 10, 2, rng=0)
        >>> PrivateTopicModel(2, n_iter=30, random_state=0).fit_transform(
        ...     data.y_tilde, data.alpha).shape
        (20, 2)
        """
        self._check_topics("fit_transform")
        return self.fit(Y_tilde, alpha, mask=mask).factors_["theta"].copy()

    @cached_property
    def inference_data_(self):
        """ArviZ InferenceData of a Gibbs fit's chain (see the class's Attributes)."""
        self._check_fitted()
        if isinstance(self.fit_, VIResult):
            raise AttributeError("a variational fit has no chain to diagnose")
        try:
            from lpp.diagnostics import to_inference_data

            return to_inference_data(self.fit_)
        except ImportError as exc:
            raise AttributeError("inference_data_ needs ArviZ: pip install lpp[diagnostics]") \
                from exc

    # ----- the engines ----------------------------------------------------------------------------
    def _infer(self, data, alpha, mask, model, n_chains=1, **vi_options):
        """Run the engine the settings name on ``model`` (a model, or a VI adapter); a Gibbs
        fit with ``n_chains`` chains."""
        private = self.method != "nonprivate"
        if private and alpha is None:
            raise TypeError(f"method {self.method!r} needs alpha, the mechanism's noise level "
                            "(method='nonprivate' fits true counts without it)")
        if not private and alpha is not None:
            raise ValueError("method='nonprivate' fits true counts: alpha must be None")
        if self.inference == "gibbs":
            settings = dict(n_iter=self.n_iter, burn_in=self.burn_in, thin=self.thin,
                            rng=self.random_state, mask=mask, init=chain_start(self.init),
                            progress=self.progress, n_chains=n_chains)
            if private:
                return fit_private(data, alpha, model, method=self.method, **settings)
            return fit_nonprivate(data, model, **settings)
        settings = dict(max_iter=self.max_iter, tol=self.tol, rng=self.random_state, mask=mask,
                        progress=self.progress, **vi_options)
        if private:
            return fit_variational(data, alpha, model, method=self.method, **settings)
        return fit_variational_nonprivate(data, model, **settings)

    # ----- checks -----------------------------------------------------------------------------
    def _check_settings(self) -> None:
        """The choices the engines do not check themselves (they check the numbers)."""
        for name, choices in (("inference", INFERENCES), ("method", METHODS), ("init", INITS)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in choices:
                raise ValueError(f"{name} must be one of {choices}, got {value!r}")

    def _check_fitted(self) -> None:
        if "fit_" not in self.__dict__:
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit "
                                 "first")

    def _check_topics(self, what: str) -> None:
        if self.model != "topics":
            raise ValueError(f"{what} infers the document factors of new documents, which only "
                             f"the topic model has (model={self.model!r})")


class PrivatePoissonFactorization(_PrivateFactorization):
    """Locally private Poisson factorization, fitted to privatized counts.

    Parameters
    ----------
    n_components : int
        Number of components: topics, communities or the CP rank.
    model : {"topics", "communities", "cp"}
        The model (:data:`lpp.inference.MODELS`): topic model of a D x V count matrix,
        mixed-membership communities of a square network, or CP factorization of a 3-way
        tensor.
    inference : {"gibbs", "variational"}
        Gibbs sampling (:func:`lpp.inference.fit_private`) or coordinate-ascent VI
        (:func:`lpp.vi.fit_variational`).
    method : {"collapsed", "bessel", "naive", "nonprivate"}
        The privacy step the inference is built on: ``"collapsed"`` (the noise integrated out
        exactly), ``"bessel"`` (the paper's augmentation), ``"naive"`` (``max(Y_tilde, 0)``
        treated as the true counts); ``"nonprivate"`` fits true counts (the reference method,
        no ``alpha``).
    n_iter, burn_in, thin : int
        Gibbs only: sweeps, the first ``burn_in`` discarded, then every ``thin``-th saved.
    init : {"data", "em", "prior", "dispersed"}
        Gibbs only: the chain's start (see :func:`lpp.inference.fit_private`).
    n_chains : int
        Gibbs only: independent chains (see :func:`lpp.inference.fit_private`); with more
        than one, ``fit_`` holds them all, ``mu_hat_`` pools them, ``factors_`` and
        ``components_`` are chain 0's (each chain labels its components its own way) and
        ``inference_data_`` has one ArviZ chain per chain (R-hat: ``fit_.diagnostics()``).
    max_iter : int or None
        Variational only: the iteration cap (None: the method's default).
    tol : float or None
        Variational only: the relative change of the objective that stops the fit (None: the
        default).
    a0, b0 : float
        Shape and rate of the Gamma prior of every latent.
    random_state : int, numpy.random.Generator or None
        Seed of every random stream; an int repeats a fit bit for bit.
    progress : bool or None
        Show a progress bar (None: on interactive terminals only).

    Attributes
    ----------
    fit_ : lpp.inference.FitResult or lpp.inference.ChainsResult
        The fit itself (a :class:`lpp.vi.VIResult` for ``inference="variational"``): the
        chain's saved draws (``fit_.samples``), log joint, timings and last point.
    factors_ : dict of ndarray
        The posterior mean of every latent by name (``E_q`` for a variational fit), e.g.
        ``"theta"`` (D x K) and ``"phi"`` (K x V) for the topic model.
    components_ : ndarray, shape (n_components, n_features_in_)
        The factor of the data's last axis, one row per component: the topics ``phi`` of the
        topic model, the nodes' memberships (transposed) of the community model, the last
        mode's factor (transposed) of the CP model.
    n_features_in_ : int
        Size of the data's last axis (V, the vocabulary, for the topic model).
    mu_hat_ : ndarray
        The posterior mean of the Poisson rates, data-shaped.
    seed_ : int
        The fit's base seed: ``random_state=seed_`` repeats it.
    inference_data_ : arviz.InferenceData
        Gibbs fits, with ArviZ installed (``lpp[diagnostics]``): the chain's log joint, total
        rate and a few entries' rates per saved draw (:func:`lpp.diagnostics.to_inference_data`),
        for trace plots and effective sample sizes. Computed on first access; absent without
        ArviZ. For R-hat, fit again with another ``random_state`` and pass both ``fit_`` to
        :func:`lpp.diagnostics.convergence_summary`.

    Examples
    --------
    >>> from lpp.estimators import PrivatePoissonFactorization
    >>> from lpp.simulate import make_network
    >>> from lpp.mechanism import privatize
    >>> net = make_network(rng=0, n_nodes=12, n_communities=2)
    >>> y_tilde = privatize(net.y, 0.5, rng=1)
    >>> est = PrivatePoissonFactorization(2, model="communities", n_iter=30, random_state=0)
    >>> est.fit(y_tilde, 0.5).components_.shape
    (2, 12)
    """

    def __init__(self, n_components=10, *, model="topics", inference="gibbs",
                 method="collapsed", n_iter=1000, burn_in=0, thin=1, init="data",
                 n_chains=1, max_iter=None, tol=None, a0=0.1, b0=1.0, random_state=None,
                 progress=False):
        super().__init__(n_components, inference=inference, method=method, n_iter=n_iter,
                         burn_in=burn_in, thin=thin, init=init, n_chains=n_chains,
                         max_iter=max_iter, tol=tol, a0=a0, b0=b0, random_state=random_state,
                         progress=progress)
        self.model = model


class PrivateTopicModel(_PrivateFactorization):
    """Locally private topic model (Poisson matrix factorization of documents x words).

    :class:`PrivatePoissonFactorization` with the model fixed to ``"topics"`` (not a parameter
    here): ``components_`` holds the topics (K x V word intensities), ``transform`` the topic
    intensities of new documents. The other parameters and the attributes are as there.

    Examples
    --------
    >>> import numpy as np
    >>> from lpp.estimators import PrivateTopicModel
    >>> from lpp.simulate import make_topics
    >>> from lpp.mechanism import privatize
    >>> corpus = make_topics(rng=0, n_docs=30, n_topics=3)
    >>> alpha = float(np.exp(-1.0))   # epsilon / N = 1
    >>> y_tilde = privatize(corpus.y, alpha, rng=1)
    >>> est = PrivateTopicModel(3, n_iter=50, random_state=0).fit(y_tilde[:24], alpha)
    >>> est.components_.shape
    (3, 15)
    >>> theta_new = est.transform(y_tilde[24:], alpha)
    >>> theta_new.shape
    (6, 3)
    >>> est
    PrivateTopicModel(n_components=3, n_iter=50, random_state=0)
    """

    #: the model this estimator fits; a class attribute, so that it is no parameter
    model = "topics"
