"""Central-model private Bayesian inference (Foulds, Geumlek, Welling & Chaudhuri, UAI 2016).

The local model of the rest of ``lpp`` noises every count before it leaves its owner; here a
trusted curator holds the data and releases either

* the model's aggregate sufficient statistics once, with Laplace noise calibrated to their L1
  sensitivity — the exact discrete Laplace, drawn with integer arithmetic, since the
  statistics are counts — and projected back onto valid statistics
  (:mod:`lpp.central.mechanisms`); any posterior computation on them afterwards is free
  post-processing; or
* one posterior sample at temperature ``T = 2 Delta / epsilon`` from a truncated posterior
  (the "one posterior sample", OPS, exponential mechanism; :mod:`lpp.central.conjugate`).

:mod:`lpp.central.naive_bayes` and :mod:`lpp.central.hmm` run both routes inside Gibbs
samplers; :mod:`lpp.central.audit` measures privacy empirically on neighbouring data sets;
:mod:`study.beta_bernoulli` is the paper's beta–Bernoulli study,
:mod:`lpp.central.simulate` generates war-logs-shaped event data and
:mod:`lpp.central.heldout` scores the routes on held-out steps.
"""
