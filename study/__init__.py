"""study: the code that exists to reproduce the papers, beside the reusable library ``lpp``.

``lpp`` is the library a researcher installs (mechanism, distributions, models, inference,
variational inference, the central model, metrics, diagnostics, data formats). This package is
the compendium around it: the notebook runner of the DVC pipeline (:mod:`study.notebook`), the
score tables and figures of the case studies (:mod:`study.reports`, :mod:`study.figures`),
the claims table (:mod:`study.claims`), the VI paper's benchmark (:mod:`study.vi_benchmark`)
and Foulds et al.'s beta-Bernoulli study (:mod:`study.beta_bernoulli`). It needs the
``compendium`` extra (papermill, pandas, matplotlib, seaborn, PyYAML, tqdm); ``lpp`` never
imports it.
"""
