"""lpp: locally private Bayesian inference for count models (Schein et al., ICML 2019).

People privatize their own counts with the geometric mechanism before sharing them; a
Bayesian model is then fitted to the noised counts alone, treating the true counts as latent
variables. The package is organised by job:

* :mod:`lpp.mechanism` — the geometric mechanism (two-sided geometric noise);
* :mod:`lpp.privatized` — privatized data sets on disk, the only data a private method reads;
* :mod:`lpp.inference` — Gibbs samplers: :func:`lpp.inference.fit_private` (privatized
  counts) and :func:`lpp.inference.fit_nonprivate` (true counts), the models and privacy steps;
* :mod:`lpp.distributions` — the distributions the samplers draw from and score with;
* :mod:`lpp.metrics`, :mod:`lpp.evaluation` — the paper's measures, and the score tables
  and figures of the case studies;
* :mod:`lpp.fits`, :mod:`lpp.io` — fits on disk, atomic and byte-reproducible writing;
* :mod:`lpp.notebook` — runs the pipeline's notebooks with settings from ``params.yaml``;
* :mod:`lpp.testing` — goodness-of-fit and Geweke tests for samplers.

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
