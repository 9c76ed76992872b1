"""scikit-learn's estimator checks that cannot apply to count data: :func:`expected_failed_checks`.

scikit-learn's checks feed random data (uniform draws, ``make_blobs``) with the tags'
adjustments only (``positive_only`` shifts it to non-negative values): non-integer floats,
which the estimators refuse by design (their likelihoods are those of counts). What those
checks test is tested on counts in ``tests/lpp/estimators``.
"""
from __future__ import annotations

__all__ = ["expected_failed_checks"]

#: the checks that fit (or transform) the random floats: refused as counts by every estimator
FLOAT_DATA = (
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimator_sparse_array",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_tag",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_1sample",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_pipeline_consistency",
    "check_readonly_memmap_input",
    "check_transformer_data_not_an_array",
    "check_transformer_general",
)
#: the reason of every check in :data:`FLOAT_DATA`
FLOATS = ("feeds random floats (uniform draws or make_blobs, non-negative under the "
          "positive_only tag); the estimator's data are counts, and non-integer values are "
          "refused by design (\"whole-number counts\")")
#: what stops the check, in the message of the error that ends it
REFUSAL = "whole-number counts"
#: why some of them would fail on counts too
_SPARSE = ("; sparse input itself is read (any scipy.sparse format, 32- or 64-bit indices; "
           "tested on counts)")
_SHAPES = ("; a fit to counts of one sample or one feature works (score then needs 2 "
           "columns and says n_features=1)")
_GIBBS_TRANSFORM = ("; and fit_transform gives the fit's own posterior mean of the documents' "
                    "theta, transform a new chain with the topics fixed: the same posterior, "
                    "not the same Monte Carlo estimate")
_GIBBS_BATCH = ("; and a Gibbs transform's Monte Carlo error depends on the batch of "
                "documents the chain runs over")
_NOISE_BATCH = ("; and the noise is random: a row's noise depends on the whole batch (it is "
                "keyed by the batch's counts)")


def expected_failed_checks(estimator) -> dict[str, str]:
    """The scikit-learn estimator checks that cannot apply to ``estimator``, each with why.

    For ``sklearn.utils.estimator_checks.check_estimator(estimator,
    expected_failed_checks=expected_failed_checks(estimator))`` and ``parametrize_with_checks``
    (its ``expected_failed_checks=`` takes this function): every check named here feeds
    random floats, which the estimators refuse as counts (non-integer values; privatized
    counts may be negative, true counts may not, as the ``positive_only`` tag says), and some
    would fail on counts too for a reason the text adds. Every other check passes.

    Parameters
    ----------
    estimator : GeometricMechanism or PrivateTopicModel
        The estimator as it will be checked (the list depends on its ``method`` and
        ``inference``).

    Returns
    -------
    dict of str to str
        ``{check name: reason}``.

    Raises
    ------
    TypeError
        For another estimator.
    ValueError
        For a ``PrivateTopicModel`` whose settings refuse every fit (a private ``method``
        without ``mechanism`` or ``alpha``): the checks would test nothing but that refusal.

    Examples
    --------
    >>> from lpp.estimators import PrivateTopicModel, expected_failed_checks
    >>> failing = expected_failed_checks(PrivateTopicModel(2, method="nonprivate"))
    >>> "whole-number counts" in failing["check_estimators_pickle"]
    True
    """
    from ._mechanism import GeometricMechanism
    from ._topic_model import PrivateTopicModel

    if not isinstance(estimator, (GeometricMechanism, PrivateTopicModel)):
        raise TypeError(f"expected_failed_checks lists the checks of lpp's estimators, got "
                        f"{type(estimator).__name__}")
    failing = dict.fromkeys(FLOAT_DATA, FLOATS)
    for name in ("check_estimator_sparse_array", "check_estimator_sparse_matrix",
                 "check_estimator_sparse_tag"):
        failing[name] = FLOATS + _SPARSE
    for name in ("check_fit2d_1sample", "check_fit2d_1feature"):
        failing[name] = FLOATS + _SHAPES
    if isinstance(estimator, GeometricMechanism):
        failing["check_transformers_unfitted_stateless"] = FLOATS
        for name in ("check_methods_sample_order_invariance", "check_methods_subset_invariance"):
            failing[name] = FLOATS + _NOISE_BATCH
        return failing
    if estimator.method != "nonprivate" and estimator.alpha is None \
            and estimator.mechanism is None:
        raise ValueError(f"PrivateTopicModel(method={estimator.method!r}) needs a mechanism "
                         "to fit anything, so every check would stop at that: set mechanism "
                         "(or alpha, or method='nonprivate') before checking it")
    failing["check_transformer_preserve_dtypes"] = FLOATS
    failing["check_transformer_n_iter"] = FLOATS
    if estimator.method != "nonprivate":
        # privatized counts may be negative: the tag is False, and the check then fits
        # negative random floats
        failing["check_positive_only_tag_during_fit"] = FLOATS + " (negative ones, which " \
            "privatized counts may be)"
    if estimator.inference == "gibbs":
        for name in ("check_transformer_general", "check_transformer_data_not_an_array"):
            failing[name] = FLOATS + _GIBBS_TRANSFORM
        for name in ("check_methods_sample_order_invariance", "check_methods_subset_invariance"):
            failing[name] = FLOATS + _GIBBS_BATCH
    return failing
