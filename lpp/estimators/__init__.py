"""scikit-learn transformers for locally private topic modelling.

Two estimators, one for each side of the geometric mechanism:

* :class:`GeometricMechanism` — the data owners' side: ``transform`` adds ``2Geo(alpha)``
  noise to true counts (:func:`lpp.mechanism.privatize`), keyed by the counts so that two
  inputs never share noise; stateless. The process records the rows it noises
  (:func:`noised_rows`, emptied by :func:`forget_noised_rows`) and warns
  (:class:`RenoisedRowsWarning`) the first time rows noised before get new noise.
* :class:`PrivateTopicModel` — the analyst's side: the topic model (Poisson factorization of
  documents x words) fitted to the privatized counts by the Gibbs samplers
  (:func:`lpp.inference.fit_private`) or the CAVIs (:func:`lpp.vi.fit_variational`), with the
  true counts as latent variables; ``transform`` gives new documents' topic proportions,
  ``score`` a held-out predictive log-likelihood.

:func:`expected_failed_checks` names the scikit-learn estimator checks that cannot apply to
count data (they feed random floats), with why, for ``check_estimator``'s
``expected_failed_checks=``.

With ``mechanism = GeometricMechanism(epsilon=1.0, N=1)``, ``make_pipeline(CountVectorizer(),
mechanism, PrivateTopicModel(k, mechanism=mechanism))`` is the whole study of one corpus, the
privacy level given once; drop the mechanism from the pipeline when the counts arrive
privatized (and build one from the data owners' ``epsilon`` and ``N`` for the model). The
level is never passed to ``fit``, whose second argument is scikit-learn's ``y`` (ignored), so
a pipeline can end in a classifier.

With scikit-learn (1.6 or later) installed the estimators derive from its ``BaseEstimator``,
``TransformerMixin`` and feature-name mixins, so tags, ``clone``, ``set_output``,
``check_is_fitted``, pipelines and grid searches work natively; without it they keep the
parameter protocol (``get_params`` / ``set_params``), ``fit_transform`` and
``get_feature_names_out`` on lpp's own light base classes: lpp needs numpy, scipy and numba
only. Import from this package (``from lpp.estimators import PrivateTopicModel``); ``import
lpp`` alone does not load it.

The topic model is the only model here, and :class:`PrivateTopicModel` the one estimator that
fits it. The community model of a network and the CP factorization of a tensor have no
estimator: their data are not a samples x features matrix (a network's rows and columns are
the same nodes; a tensor has three axes), so scikit-learn's splitting of rows, pipelines and
transform of new samples do not apply to them, and an estimator would only respell
:func:`lpp.inference.fit_private` / :func:`lpp.vi.fit_variational`, which fit them (with
``model="communities"`` or ``"cp"``).
"""
from ._base import NotFittedError
from ._checks import expected_failed_checks
from ._mechanism import (GeometricMechanism, NoisedRows, RenoisedRowsWarning, forget_noised_rows,
                         noised_rows)
from ._topic_model import INFERENCES, INITS, METHODS, PrivateTopicModel

__all__ = ["INFERENCES", "INITS", "METHODS", "GeometricMechanism", "NoisedRows",
           "NotFittedError", "PrivateTopicModel", "RenoisedRowsWarning",
           "expected_failed_checks", "forget_noised_rows", "noised_rows"]
