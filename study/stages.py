"""The pipeline's stages in the groups that a paper-scale run runs them in.

``profiles/run.py`` runs one group at a time (the case studies by default, ``--diagnose``,
``--synthetic``), and the documentation times a group from the run's record
(:mod:`study.prose.quotes`), so both read the groups here.
"""

#: the case-study stages, cheapest first, so a cut-short run has the complete network study
STAGES = ("prepare_topics", "prepare_network", "prepare_network_rows_cols", "privatize",
          "infer_nonprivate_network", "infer_private_network",
          "infer_nonprivate_network_unmasked", "infer_private_network_unmasked", "report_network",
          "infer_nonprivate_network_rows_cols", "infer_private_network_rows_cols",
          "report_network_rows_cols", "infer_nonprivate_topics", "infer_private_topics",
          "report_topics")
#: the papers' synthetic experiments and the central-model comparison (``--synthetic``):
#: independent of the case studies (central_hmm: about 6 minutes of one core at the paper's
#: 10 splits and 200 sweeps, 22 HMM fits of about a second per split and data set)
SYNTHETIC_STAGES = ("synthetic_communities", "synthetic_topics", "recovery_map", "vi_synthetic",
                    "vi_benchmark", "appendix_two_geometric", "central_beta_bernoulli",
                    "central_hmm", "central_runtime")
#: the convergence diagnosis: extra chains of a few fits, then R-hat and ESS (``--stages``)
DIAGNOSE_STAGES = ("infer_private_chains_network", "infer_nonprivate_chains_topics",
                   "infer_private_chains_topics", "diagnose")
