"""Statistical checks shared by the test suite and by users who plug in their own samplers
or models.

* :mod:`lpp.testing.goodness_of_fit` — ``chisquare_gof`` checks draws against an exact pmf;
* :mod:`lpp.testing.geweke` — Geweke's (2004) joint-distribution test of a posterior sampler:
  ``geweke_simulations`` draws the test functions from its two simulators (driving the very
  chain the fit functions run), ``geweke_test`` compares them;
* :mod:`lpp.testing.model_contract` — ``check_model`` checks that a Poisson factorization
  model meets the contract of the samplers, Geweke test included;
* :mod:`lpp.testing.guards` — ``time_limit`` turns a hang into a failure.

(Geweke's 1992 convergence z of one chain's trace is a diagnostic of saved chains:
:func:`lpp.diagnostics.geweke_z`.)

The tests of this project call these with fixed seeds and a stated false-alarm rate
(``FALSE_ALARM``, per call), so a correct sampler fails a given test with probability
about ``FALSE_ALARM`` for the seed drawn — and, the seeds being fixed, never flakes.
"""
from lpp.testing.geweke import GewekeResult, geweke_simulations, geweke_test
from lpp.testing.goodness_of_fit import FALSE_ALARM, GofResult, chisquare_gof
from lpp.testing.model_contract import check_model
from lpp.testing.guards import time_limit

__all__ = ["FALSE_ALARM", "GewekeResult", "GofResult", "check_model", "chisquare_gof",
           "geweke_simulations", "geweke_test", "time_limit"]
