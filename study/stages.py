"""The pipeline's stages in the groups that a paper-scale run runs them in.

``profiles/run.py`` runs one group at a time (the case studies by default, ``--diagnose``,
``--synthetic``), and the documentation times a group from the run's record
(:mod:`study.prose.quotes`), so both read the groups here; what the run copies back into
``results/paper`` and ``figures/paper`` (:func:`collected_paths`) is here too, for the
provenance check (:mod:`study.provenance`) reads it.
"""

#: the case-study stages, cheapest first, so a cut-short run has the complete network study
STAGES = ("prepare_topics", "prepare_network", "prepare_network_rows_cols", "privatize",
          "infer_nonprivate_network", "infer_private_network",
          "infer_nonprivate_network_unmasked", "infer_private_network_unmasked", "report_network",
          "infer_nonprivate_network_rows_cols", "infer_private_network_rows_cols",
          "report_network_rows_cols", "infer_nonprivate_topics", "infer_private_topics",
          "score_nonprivate_topics", "score_private_topics", "score_vi_topics", "report_topics")
#: the stages that write a topic fit's score record (and, the non-private fit's, the reference
#: topics :data:`REFERENCE_TOPICS`): what a study run in pieces keeps of each fit
TOPIC_SCORE_STAGES = ("score_nonprivate_topics", "score_private_topics", "score_vi_topics")
#: the papers' synthetic experiments and the central-model comparison (``--synthetic``):
#: independent of the case studies (central_hmm: about 6 minutes of one core at the paper's
#: 10 splits and 200 sweeps, 22 HMM fits of about a second per split and data set)
SYNTHETIC_STAGES = ("synthetic_communities", "synthetic_topics", "recovery_map", "vi_synthetic",
                    "vi_benchmark", "appendix_two_geometric", "central_beta_bernoulli",
                    "central_hmm", "central_runtime")
#: the convergence diagnosis: extra chains of a few fits, then R-hat and ESS (``--stages``)
DIAGNOSE_STAGES = ("infer_private_chains_network", "infer_nonprivate_chains_topics",
                   "infer_private_chains_topics", "diagnose_topics", "diagnose_nonprivate_topics",
                   "diagnose_network")

#: what is copied back: work-tree path -> path under --results (tables) or --figures; the case
#: studies' outputs are named by their data sets (:func:`collected_paths`)
TABLES = {"data/prepared/topics/summary.json": "data/topics_summary.json",
          "data/prepared/network/summary.json": "data/network_summary.json",
          "data/prepared/network_rows_cols/summary.json": "data/network_rows_cols_summary.json",
          "results/synthetic/communities.json": "synthetic/communities.json",
          "results/synthetic/topics.json": "synthetic/topics.json",
          "results/synthetic/recovery_map.json": "synthetic/recovery_map.json",
          "results/synthetic/recovery_map.md": "synthetic/recovery_map.md",
          "results/synthetic/two_geometric.json": "synthetic/two_geometric.json",
          "results/vi/benchmark.csv": "vi/benchmark.csv",
          "results/vi/synthetic.json": "vi/synthetic.json",
          "results/central/beta_bernoulli.json": "central/beta_bernoulli.json",
          "results/central/table1.csv": "central/table1.csv",
          "results/central/heldout_loglik.csv": "central/heldout_loglik.csv",
          "results/central/occupancy.json": "central/occupancy.json",
          "results/central/runtime.json": "central/runtime.json",
          "results/claims.md": "claims.md", "results/claims.json": "claims.json",
          "params.yaml": "params.yaml", "dvc.lock": "dvc.lock"}
FIGURES = ("figures/synthetic_communities.png", "figures/synthetic_topics.png",
           "figures/recovery_map.png",
           "figures/vi_benchmark.png", "figures/vi_synthetic.png",
           "figures/central_fig1.png", "figures/central_fig2.png", "figures/central_fig6.png",
           "figures/central_occupancy.png", "figures/appendix_fig2_two_geometric.png")


#: the non-private fit's mean topics, which every other topic fit's score stage matches its
#: topics to (``score_nonprivate_topics --reference-out``): collected beside the records, so
#: that a study run in pieces scores a later piece's private fits without the non-private fit
#: (``profiles/run.py --restore-scores``)
REFERENCE_TOPICS = "nonprivate_topics.npy"


def diagnosed_cases(settings: dict) -> list[tuple[str, str]]:
    """``(study, case)`` of each case the diagnosis stages of ``settings`` (a params file's
    content) diagnose: the methods its ``diagnose`` section names, and the topics' non-private
    fit; ``case`` names the case's table (``results/diagnostics/<study>_<case>.csv``) and trace
    figure (``figures/<data set>_trace_<study>_<case>.png``)."""
    diagnose = settings.get("diagnose") or {}
    return ([("topics", method) for method in diagnose.get("topic_methods") or []]
            + [("topics", "nonprivate")]
            + [("network", method) for method in diagnose.get("network_methods") or []])


def collected_paths(settings: dict) -> tuple[dict, tuple]:
    """What is copied back (:data:`TABLES`, :data:`FIGURES`) with the case studies' tables
    and figures, whose names carry the data sets of ``settings`` (a params file's content),
    the score record of each topic fit the settings name (``score_*_topics``: a study run in
    pieces keeps each piece's scores, its fits gone) with the reference topics they were
    matched to (:data:`REFERENCE_TOPICS`), and the diagnosis's table and trace figure of each
    diagnosed case."""
    # imported here, not at the top: what reads only the stage groups above needs none of
    # the reports' pandas and plotting
    from study.reports import named_fits

    try:
        topics = settings["prepare_topics"]["dataset"]
        network = settings["prepare_network"]["dataset"]
    except KeyError as missing:
        raise ValueError(f"the settings name no data set ({missing} missing under "
                         "prepare_topics / prepare_network): add dataset: NAME to both") from None
    datasets = {"topics": topics, "network": network}
    cases = diagnosed_cases(settings)
    try:
        topic_fits = named_fits(settings, "topics")
    except KeyError as missing:
        raise ValueError(f"the settings name no topic fits: {missing.args[0]}") from None
    tables = {f"results/eval/{topics}_topics.csv": f"eval/{topics}_topics.csv",
              f"results/eval/{topics}_topic_words.csv": f"eval/{topics}_topic_words.csv",
              f"results/eval/{network}_network.csv": f"eval/{network}_network.csv",
              f"results/eval/{network}_network_rows_cols.csv":
                  f"eval/{network}_network_rows_cols.csv",
              **{f"results/eval/{topics}_topics/{fit}.json": f"eval/{topics}_topics/{fit}.json"
                 for fit in topic_fits},
              **({f"results/eval/{topics}_topics/{REFERENCE_TOPICS}":
                  f"eval/{topics}_topics/{REFERENCE_TOPICS}"} if topic_fits else {}),
              **{f"results/diagnostics/{study}_{case}.csv": f"diagnostics/{study}_{case}.csv"
                 for study, case in cases}, **TABLES}
    figures = (f"figures/{topics}_topics.png", f"figures/{topics}_topic_words.png",
               f"figures/{network}_network.png", f"figures/{network}_network_rows_cols.png",
               *(f"figures/{datasets[study]}_trace_{study}_{case}.png" for study, case in cases),
               *FIGURES)
    return tables, figures
