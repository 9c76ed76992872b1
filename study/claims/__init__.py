"""The papers' qualitative claims, each checked against the pipeline's result tables.

Every claim of the ICML paper's Figures 1, 3, 4, 5 and appendix Figures 1 and 2, of the VI
paper (Schofield et al.) and of Foulds et al. (2016) that our pipeline has a table for is
restated here as a check over that table. Each check quotes the paper's sentence and tests
what that sentence says, no more: a comparison the papers do not state (ours against the naive
method at every noise level where the paper speaks of high noise, a trend of the naive method
the text does not mention, private against naive VI) is reported as one of *our own
observations*, with its numbers and no verdict. :func:`check_claims` returns one
:class:`Claim` per statement or observation with our numbers, the paper's numbers where it
prints them, the file it read, the support behind it (chains x privatized copies, worst R-hat)
and, for a claim, a status:

``PASS``
    the claim holds in our results beyond the spread;
``FAIL``
    our results contradict it beyond the spread;
``UNSETTLED``
    the comparison that decides it lies inside the spread *and* the chains of one fit
    disagree about it (some chains on one side, some on the other); a comparison beyond the
    spread decides however its chains scatter;
``NOT-REPRODUCED``
    our results neither confirm nor contradict it: a difference within the spread, a cell
    with a single value (one chain of one copy: no spread to judge a difference by), or a
    printed number that ours misses by more than the stated tolerance (our settings differ
    from the paper's, so a number is compared, not asserted);
``NOT-RUN``
    the table the check reads is absent (its stage has not run at this scale) or lacks the
    column or setting it needs.

**Cells and units.** A *cell* is one method at one setting (privacy level, C, data set); its
values are one per chain of each fit (score tables: one row per fit and chain, a ``chain``
column where fits have several chains, ``rhat`` their worst R-hat; absent columns mean one
chain and an unknown R-hat). A fit ran on one *design unit*: a privatized copy (the score
tables' ``..._eps<ε/N>_rep<k>`` fit names: ours and the naive method at one level are fitted to
the same copies), a held-out split (Foulds et al.: every mechanism and ε shares the ten
splits) or a seed (ICML Figs 1 and 3: one seed draws the true network or topics of every
noise level and the privatized data every method fits).

**The spread.** Two cells whose fits ran on the same units are compared *paired* by that
unit: per unit, the difference of the two cells' means there; the comparison's value is the
mean of these differences and its spread their standard deviation over the units, plus the
chains' own variance within a unit where fits have several chains (a single unit with
several chains: the chains' spread alone). A comparison decides where that mean difference
exceeds the spread (with one chain per unit: where the paired t statistic exceeds the square
root of the number of units); the verdict gives the paired difference, its spread and in how
many units each side is ahead.
Cells that share no unit (a non-private reference, fitted once to the true data; two privacy
levels, which have copies of their own) are compared unpaired: the difference of their means
against the square root of their summed variances over every chain and copy. Chains of
independent fits are never paired, by index or otherwise; a chain counts only against the
other side's value (on its unit when paired). A trend's steps each get the spread of their
two cells as tolerance.

**"Almost the same".** A claim that our method is close to a reference where another method
is not (ICML Fig. 4's "almost the same reconstruction error as non-private Poisson
factorization ... In contrast, the naïve approach has a higher reconstruction error") is
judged against the gap the other method opens, not against a fixed tolerance: PASS where, at
every level, our gap to the reference, spread included, is at most :data:`ALMOST_SAME` of
the other method's gap, spread excluded; FAIL where at some level our gap, spread excluded, is
at least :data:`AS_FAR_AS` of the other's, spread included.

**Case-study data.** The Enron claims (Figs 4 and 5) are judged only on the paper's data:
when the params file next to the results (``<results>/params.yaml``, else the one in its
parent folder) names another ``prepare_topics.dataset`` / ``prepare_network.dataset`` than
``enron`` (a missing key is ``enron``), the same comparisons are reported in a *pattern*
table, without verdicts or the paper's numbers.

A failed claim is a finding, never an error: the functions are pure functions of the tables,
and a table that is missing or malformed gives ``NOT-RUN`` with the reason. The results root
is a parameter, so the same checks run on the quick tables (``results``) and on the paper-scale
ones (``results/paper``), which have the same layout::

    eval/<dataset>_topics.csv, eval/<dataset>_network.csv,
    eval/<dataset>_network_rows_cols.csv           (report_* stages; the data sets' names)
    synthetic/communities.json, synthetic/topics.json,
    synthetic/recovery_map.json                    (Figures 1 and 3)
    synthetic/two_geometric.json                   (appendix Figure 2)
    vi/synthetic.json, vi/benchmark.csv            (VI paper, Figure 1 and appendix E)
    central/beta_bernoulli.json, central/table1.csv, central/heldout_loglik.csv,
    central/occupancy.json, central/runtime.json   (Foulds et al.)

Every check records the files it read (``Claim.reads``); a check reads under its results root
only. Run ``python -m study.claims --results results`` to write ``claims.md`` and
``claims.json`` there (the DVC stage ``claims``).

The package holds one module per paper -- :mod:`study.claims.icml`, :mod:`study.claims.vi`,
:mod:`study.claims.foulds` -- beside the verdict rules (:mod:`study.claims.rules`), the
reading of the tables (:mod:`study.claims.reading`) and the report
(:mod:`study.claims.report`); this module gathers their public names.

Adding a check: write a function of the results root that returns a :class:`Verdict` (the
kinds of :mod:`study.claims.rules` -- :func:`better`, :func:`not_better`,
:func:`trend_with_noise`, :func:`almost_same`, :func:`near_number`, :func:`flag` -- do the
judging over :class:`Cell` objects built by :func:`table_cells`), and list it in its paper's
group function as a :class:`Check` (``observation=True`` for a comparison the papers do not
state).
"""
from __future__ import annotations

from study.claims.rules import (ALMOST_SAME, AS_FAR_AS, FAIL, FOULDS, ICML, METHOD_LABELS, NAIVE,
                                NONPRIVATE, NOT_REPRODUCED, NOT_RUN, OURS, PAPER_DATASET,
                                PARAMS_READ, PASS, STATUSES, UNSETTLED, VI, Cell, Difference,
                                Verdict, almost_same, better, compare, flag, near_number,
                                not_better, trend_with_noise)
from study.claims.reading import Check, dataset_of, table_cells
from study.claims.icml import FIG3_HIGH_NOISE, FIG3_LOW_NOISE, FIG3_TOKENS, recovers
from study.claims.foulds import WAR_LOGS, on_the_logs
from study.claims.report import (GROUPS, Claim, check_claims, claims_markdown, diagnosis_problems,
                                 main, profile_of, write_claims)

__all__ = [
    "ALMOST_SAME",
    "AS_FAR_AS",
    "METHOD_LABELS",
    "STATUSES",
    "Cell",
    "Check",
    "Claim",
    "Difference",
    "Verdict",
    "almost_same",
    "better",
    "check_claims",
    "claims_markdown",
    "compare",
    "diagnosis_problems",
    "flag",
    "near_number",
    "not_better",
    "profile_of",
    "table_cells",
    "trend_with_noise",
    "write_claims",
]
