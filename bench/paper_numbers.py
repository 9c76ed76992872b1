"""What the VI paper (Schofield et al., appendix E) reports for the benchmark repeated here.

One synthetic private factorization, 1000 x 1000, K = 50, epsilon/N = 1: their MCMC and their
CAVI, with the time and the iterations each took. ``python -m bench.vi`` and
``python -m bench.accuracy`` print these beside their measurements, and the appendix E stage
(:mod:`study.vi_benchmark`) beside its table.
"""

#: the seed paper's appendix E (its authors' numbers, 1000 x 1000, K = 50, epsilon/N = 1)
PAPER_NUMBERS = {"mcmc_mae": 0.36, "mcmc_seconds_per_iteration": 0.8,
                 "mcmc_iterations": 7500, "vi_mae": 0.52, "vi_seconds_per_iteration": 2.8,
                 "vi_iterations": 100, "speed_up": 20.0}
#: the burn-in of the paper's MCMC, of its ``mcmc_iterations`` (the rest are collected)
MCMC_BURN_IN = 5000
