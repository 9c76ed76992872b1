"""lpp: locally private Bayesian inference for count models (Schein et al., ICML 2019).

People privatize their own counts with the geometric mechanism before sharing them; a
Bayesian model is then fitted to the noised counts alone, treating the true counts as latent
variables.

One way per job, as a ladder — take the first rung that fits:

1. :mod:`lpp.estimators` — :class:`~lpp.estimators.PrivateTopicModel` (``fit`` /
   ``transform`` / ``score``, a scikit-learn transformer when scikit-learn is installed) and
   :class:`~lpp.estimators.GeometricMechanism` (the data owners' side, and simulations);
2. the fit functions — :func:`lpp.inference.fit_private` (privatized counts) and
   :func:`lpp.inference.fit_nonprivate` (true counts) for any model (topics, communities, CP
   tensors, your own) and privacy step, chains and checkpoints included;
   :func:`lpp.vi.fit_variational` for the variational approximation;
3. :class:`lpp.inference.GibbsSampler` — one chain, sweep by sweep, for those who step it
   themselves.

The packages, bottom layer first (``docs/design.md``, *Layers*, draws the picture the imports
follow): :mod:`lpp.randomness`, :mod:`lpp.validation`, :mod:`lpp.progress` (foundation);
:mod:`lpp.distributions`, :mod:`lpp.mechanism`, :mod:`lpp.simulate`; :mod:`lpp.formats`
(counts, privatized data and fits on disk); :mod:`lpp.metrics`; :mod:`lpp.inference` (models,
privacy steps, engines, chains); :mod:`lpp.vi`, :mod:`lpp.diagnostics` (ArviZ,
``lpp[diagnostics]``), :mod:`lpp.evaluation`, :mod:`lpp.testing` (goodness-of-fit and
Geweke tests); :mod:`lpp.central` (the central-model routes of Foulds et al.);
:mod:`lpp.estimators`.

The library needs numpy, scipy and numba only; tqdm (progress bars), Dask (a fit on a
cluster) and ArviZ (diagnostics) are the extras ``progress``, ``distributed`` and
``diagnostics``. The code that reproduces the papers — the notebook runner, the score tables
and figures, the claims table — is the sibling package ``study``, which ``lpp`` never imports.
Each submodule loads on first use: ``import lpp`` alone stays light, and ``lpp.inference``,
``lpp.mechanism`` and the others are there without an import of their own (PEP 562).
``docs/design.md`` explains the design the code relies on.
"""
from functools import cache as _cache
from importlib import import_module as _import_module
from importlib import metadata as _metadata
from pkgutil import iter_modules as _iter_modules

from lpp import _numba_cache

_numba_cache.configure()

try:
    __version__ = _metadata.version("lpp")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"


@_cache
def _submodules() -> frozenset:
    """The public subpackages and modules, each imported when ``lpp.<name>`` is first used."""
    return frozenset(m.name for m in _iter_modules(__path__) if not m.name.startswith("_"))


def __getattr__(name: str):
    if name in _submodules():
        return _import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    public = (n for n in globals() if n.startswith("__") or not n.startswith("_"))
    return sorted({*public, *_submodules()})
