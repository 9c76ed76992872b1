"""Poisson factorization models that plug into the private Gibbs sampler.

A model never sees privatized data and never imports the privacy side
(:mod:`lpp.inference.privacy`): it gets counts and returns latents. Each built-in model is a
folder named after it, its class (``model.py``) beside its compiled kernels (``kernels.py``):
:mod:`~lpp.inference.models.topics`, :mod:`~lpp.inference.models.communities`,
:mod:`~lpp.inference.models.cp`. :mod:`~lpp.inference.models.base` is the interface they
implement, :mod:`lpp.inference.kernels` the kernels they share, and this module the registry:
:data:`MODELS` holds the built-in models by name (docs/library.md, *Adding a model*).
"""
from lpp.inference.models.base import Observed, PoissonFactorization
from lpp.inference.models.communities import CommunityModel
from lpp.inference.models.cp import CPTensorModel
from lpp.inference.models.topics import FixedTopicModel, TopicModel

#: the built-in models by name (``make_model(name, n_components=...)``)
MODELS = {"topics": TopicModel, "communities": CommunityModel, "cp": CPTensorModel}


def make_model(model, n_components=None, a0=None, b0=None, **options) -> PoissonFactorization:
    """A model instance from an instance (returned as is) or a name with its settings.

    Names: ``"topics"`` (:class:`TopicModel`), ``"communities"`` (:class:`CommunityModel`),
    ``"cp"`` (:class:`CPTensorModel`); ``n_components`` is then required (K, C or the rank).
    ``options`` go to the model's class (e.g. ``collapse_theta`` or ``collapse_phi`` of
    :class:`TopicModel`).
    """
    if isinstance(model, PoissonFactorization):
        if options or any(v is not None for v in (n_components, a0, b0)):
            raise TypeError("give n_components, a0 and b0 to the model object, not to fit")
        return model
    if isinstance(model, str):
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r}; choose one of {sorted(MODELS)} "
                             "or pass a PoissonFactorization instance")
        if n_components is None:
            raise TypeError(f"model {model!r} needs n_components (the number of components)")
        kwargs = {k: v for k, v in (("a0", a0), ("b0", b0)) if v is not None}
        return MODELS[model](n_components, **kwargs, **options)
    raise TypeError("model must be a PoissonFactorization or a model name, "
                    f"got {type(model).__name__}")


def model_from_params(params: dict) -> PoissonFactorization:
    """The model that ``params`` describes: the inverse of ``model.params()``.

    A fit records ``model.params()`` (``{"model": name, "n_components": ..., "a0": ..., "b0":
    ...}``); this rebuilds the model from that record, e.g. to recompute rates from saved
    latents. Only the built-in models (:data:`MODELS`) can be rebuilt by name.
    """
    if not isinstance(params, dict) or "model" not in params:
        raise TypeError(f"params must be a dict with a 'model' name (model.params()), got {params!r}")
    settings = dict(params)
    name = settings.pop("model")
    known = {"n_components", "a0", "b0"} | ({"collapse_theta", "collapse_phi"} if name == "topics"
                                            else set())
    unknown = set(settings) - known
    if unknown:
        raise ValueError(f"params of model {name!r} hold unknown settings {sorted(unknown)}")
    return make_model(name, **settings)


__all__ = ["MODELS", "CPTensorModel", "CommunityModel", "FixedTopicModel", "Observed",
           "PoissonFactorization", "TopicModel", "make_model", "model_from_params"]
