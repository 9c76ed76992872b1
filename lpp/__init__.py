"""lpp: locally private Bayesian inference for count models (Schein et al., ICML 2019).

People privatize their own counts with the geometric mechanism before sharing them; a
Bayesian model is then fitted to the noised counts alone, treating the true counts as latent
variables. The package is organised by job:

* :mod:`lpp.mechanism` — the geometric mechanism (two-sided geometric noise);
* :mod:`lpp.formats.privatized` — privatized data sets on disk, the only data a private method reads;
* :mod:`lpp.inference` — Gibbs samplers: :func:`lpp.inference.fit_private` (privatized
  counts) and :func:`lpp.inference.fit_nonprivate` (true counts), the models and privacy steps;
* :mod:`lpp.vi` — variational inference on the same models and privacy steps;
* :mod:`lpp.estimators` — both behind scikit-learn's estimator interface (``fit``,
  ``components_``, ``transform``, ``get_params``), without depending on scikit-learn;
* :mod:`lpp.central` — the central-model routes of Foulds et al. (Laplace mechanism, OPS);
* :mod:`lpp.distributions` — the distributions the samplers draw from and score with;
* :mod:`lpp.metrics`, :mod:`lpp.evaluation` — the paper's measures, and the scores of one fit
  against the true counts;
* :mod:`lpp.diagnostics` — convergence diagnostics of saved chains (ArviZ, ``lpp[diagnostics]``);
* :mod:`lpp.formats.fits`, :mod:`lpp.formats.counts`, :mod:`lpp.formats.files` — fits and count matrices on disk, atomic
  and byte-reproducible writing;
* :mod:`lpp.testing` — goodness-of-fit and Geweke tests for samplers.

The library needs numpy, scipy and numba only; tqdm (progress bars), Dask (a fit on a
cluster) and ArviZ (diagnostics) are the extras ``progress``, ``distributed`` and
``diagnostics``. The code that reproduces the papers — the notebook runner, the score tables
and figures, the claims table — is the sibling package ``study``, which ``lpp`` never imports.
Submodules are imported on demand (``import lpp`` alone stays light). ``docs/design.md``
explains the design the code relies on.
"""
from importlib.metadata import PackageNotFoundError, version

from lpp import _numba_cache

_numba_cache.configure()

try:
    __version__ = version("lpp")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
