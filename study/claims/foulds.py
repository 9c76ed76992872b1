"""The claims of Foulds et al. (2016): Figures 1, 2, 6, Table 1, §3 and §5."""
from __future__ import annotations

import math
from dataclasses import replace

from study.claims.reading import Check, _Reader, _get, _rows_cell
from study.claims.rules import (ALMOST_SAME, FAIL, NOT_REPRODUCED, NOT_RUN, PASS, _Missing,
                                Verdict, _all_of, better, flag, _fmt, not_better)


#: the data sets of Foulds et al.'s Fig. 6 as the held-out table names the real war logs;
#: any other rows the Fig. 6 checks read are the synthetic stand-ins shaped after them
WAR_LOGS = ("afghanistan", "iraq")


def on_the_logs(verdict: Verdict, stand_in: bool) -> Verdict:
    """A Fig. 6 verdict as it stands: on the war logs, as computed; on a synthetic stand-in,
    NOT-RUN with the comparison's outcome shown. Each panel's sentence is about the logs, and
    the paper explains each by their size (corpus-wide counts, little data per step, more
    data per step); the stand-ins have the logs' size but our generator's content (its
    regimes, its emissions), which decide the held-out likelihoods too, so on them an outcome
    is a pattern, not a verdict (as the case studies on other data than the paper's)."""
    if not stand_in or verdict.status == NOT_RUN:
        return verdict
    return replace(verdict, status=NOT_RUN,
                   reason=f"untestable here: the claim is about the war logs, which carry no "
                          f"licence that lets us ship them; on the synthetic stand-in of their "
                          f"size (a pattern, not a verdict) the check gives "
                          f"{verdict.status}: {verdict.reason}")


def _foulds(r: _Reader):
    def crossing():
        check = _get(r.json("central/beta_bernoulli.json"), "figure2", "check")
        ours = f"Laplace overtakes OPS at N = {_get(check, 'crossing_n')}"
        return flag(_get(check, "holds"), ours,
                    holds="OPS better only at the smallest N, Laplace better from the crossing on",
                    fails="the crossing check failed (see central_beta_bernoulli)")

    def are():
        estimators = _get(r.json("central/beta_bernoulli.json"), "are", "estimators")
        parts, off = [], []
        for name, e in estimators.items():
            measured, theory, se = _get(e, "measured"), _get(e, "theory"), _get(e, "se")
            parts.append(f"{name} {_fmt(measured)} (theory {_fmt(theory)})")
            if abs(measured - theory) > 3 * se:
                off.append(name)
        ours = "; ".join(parts)
        if not off:
            return Verdict(PASS, ours, "every measured ARE within 3 standard errors of theory")
        return Verdict(FAIL, ours, f"more than 3 se from theory: {', '.join(off)}")

    def fig6(model, datasets):
        """Laplace's and the better OPS truncation's (by its mean) cells per data set and ε,
        over the held-out splits (every mechanism and ε uses the same splits: paired by
        split), each level's ε, and whether they come from a stand-in: the war logs' rows
        (:data:`WAR_LOGS`) where the table has them, else the synthetic stand-ins'."""
        t = r.csv("central/heldout_loglik.csv",
                  ("dataset", "split", "model", "route", "epsilon", "loglik_per_record"))
        t = t[(t.model == model) & t.dataset.isin(datasets) & t.epsilon.notna()]
        if t.empty:
            raise _Missing(f"no {model} rows for {', '.join(datasets)}")
        logs = t[t.dataset.isin(WAR_LOGS)]
        stand_in = logs.empty
        t = t if stand_in else logs
        laplace, ops, epsilon = {}, {}, {}
        for (dataset, eps), group in t.groupby(["dataset", "epsilon"]):
            mine = _rows_cell(group[group.route == "laplace"], "loglik_per_record", "split")
            truncations = [_rows_cell(g, "loglik_per_record", "split")
                           for route, g in group.groupby("route") if str(route).startswith("ops")]
            truncations = [c for c in truncations if c is not None]
            if mine is None or not truncations:
                continue
            level = f"{dataset} ε={eps:g}"
            laplace[level], epsilon[level] = mine, float(eps)
            ops[level] = max(truncations, key=lambda c: c.mean)
        if not laplace:
            raise _Missing(f"no Laplace and OPS rows for {model}")
        return laplace, ops, epsilon, stand_in

    def laplace_superior(model, datasets):
        laplace, ops, _, stand_in = fig6(model, datasets)
        return on_the_logs(better(laplace, ops, higher_is_better=True, need="somewhere",
                                  names=("Laplace", "best OPS"), level="setting"), stand_in)

    def ops_competitive(model, datasets):
        laplace, ops, _, stand_in = fig6(model, datasets)
        return on_the_logs(not_better(laplace, ops, higher_is_better=True, need="most",
                                      names=("Laplace", "best OPS"), level="setting"), stand_in)

    def laplace_ahead_at_high_privacy(model, datasets):
        laplace, ops, epsilon, stand_in = fig6(model, datasets)
        overall = better(laplace, ops, higher_is_better=True, need="somewhere",
                         names=("Laplace", "best OPS"), level="setting")
        high = [k for k, e in epsilon.items() if e == min(epsilon.values())]
        at_high = better({k: laplace[k] for k in high}, {k: ops[k] for k in high},
                         higher_is_better=True, names=("Laplace", "best OPS"), level="setting")
        return on_the_logs(_all_of(overall, replace(at_high, reason=f"at the highest privacy: "
                                                    f"{at_high.reason}")), stand_in)

    def occupancy():
        # the paper's count is of the war logs, which we cannot ship: the synthetic stand-ins'
        # regime count is their generator's (lpp.central.simulate.REGIME_RANGE) and Enron is
        # another data set, so the numbers are shown, never judged
        datasets = _get(r.json("central/occupancy.json"), "datasets")
        parts = []
        for name, d in datasets.items():
            private, nonprivate = _get(d, "laplace", "n_used"), _get(d, "nonprivate", "n_used")
            true = d.get("true_regimes") if isinstance(d, dict) else None
            parts.append(f"{name}: Laplace {private}, non-private {nonprivate}"
                         + (f" (true regimes {true})" if true else ""))
        ours = "; ".join(parts) + " states used (of 10)"
        return Verdict(NOT_RUN, ours, "untestable here: the claim is about the war logs, which "
                       "carry no licence that lets us ship them; the synthetic stand-ins' "
                       "state count is their generator's (drawn from 4-8 regimes) and Enron is "
                       "another data set (numbers shown for information)")

    return [
        Check("foulds.fig2.laplace_overtakes_ops", "Fig. 2 (beta-Bernoulli, p = 0.1, ε = 0.1)",
              "OPS beats Laplace-mechanism sampling only for very few observations; Laplace "
              "overtakes it quickly", "crossing at about N = 10", crossing),
        Check("foulds.sec3.are", "§3 (asymptotic relative efficiency)",
              "Posterior and Laplace sampling have ARE 2, their means 1, OPS sampling 1 + T",
              "2, 1, 1 + T (T = 2.77 at ε = 1, a0 = 0.2)", are),
        Check("foulds.fig6.naive_bayes", "Fig. 6 left (naive Bayes, held-out log-likelihood; "
              "on a synthetic Afghanistan-shaped stand-in)",
              "\"The Laplace mechanism was superior to OPS for the naive Bayes model, for which "
              "the statistics are corpus-wide counts\" (checked: Laplace's held-out "
              "log-likelihood above the better OPS truncation's beyond the paired spread at "
              "some ε and below it at none, paired by split)", "no numbers printed",
              lambda: laplace_superior("naive_bayes", ["synthetic_afghanistan", "afghanistan"])),
        Check("foulds.fig6.afghanistan_hmm", "Fig. 6 middle (Afghanistan HMM, held-out "
              "log-likelihood; on a synthetic Afghanistan-shaped stand-in)",
              "\"OPS was competitive with the Laplace mechanism for the HMM on Afghanistan, "
              "where the amount of data was relatively low\" (checked: Laplace not above the "
              "better OPS truncation beyond the paired spread at a majority of the ε, paired "
              "by split)", "no numbers printed",
              lambda: ops_competitive("hmm", ["synthetic_afghanistan", "afghanistan"])),
        Check("foulds.fig6.iraq_hmm", "Fig. 6 right (Iraq HMM, held-out log-likelihood; on a "
              "synthetic Iraq-shaped stand-in)",
              "\"For the Iraq dataset, where there was more data per timestep, the Laplace "
              "mechanism outperformed OPS, particularly in the high-privacy regime\" (checked: "
              "Laplace above the better OPS truncation beyond the paired spread at the "
              "smallest ε, and below it at no ε, paired by split)", "no numbers printed",
              lambda: laplace_ahead_at_high_privacy("hmm", ["synthetic_iraq", "iraq"])),
        Check("foulds.sec5.occupancy", "§5 (10-state HMM, ε = 5)",
              "A private 10-state HMM uses only 2-3 states where a non-private one uses all 10",
              "2-3 of 10 states", occupancy),
    ]


def _foulds_more(r: _Reader):
    """Foulds et al.'s Fig. 1, the OPS run-time remark, and the war-log figures (3-5, 7) that
    have no counterpart."""
    def fig1():
        f1 = _get(r.json("central/beta_bernoulli.json"), "figure1")
        t, a0 = float(_get(f1, "temperature")), float(_get(f1, "a0"))
        lo, hi = _get(f1, "ops_support")
        peak, ops_peak = float(_get(f1, "posterior_peak")), float(_get(f1, "ops_peak"))
        ours = (f"T = {_fmt(t)}; peak density: posterior {_fmt(peak)}, OPS {_fmt(ops_peak)}; "
                f"OPS support [{lo:g}, {hi:g}]")
        near = abs(t - 2.7) / 2.7 <= 0.05
        flatter = ops_peak < peak
        # the density grid's step is 0.001: the support's ends within a step of a0, 1 - a0
        truncated = lo >= a0 - 1e-3 and hi <= 1 - a0 + 1e-3
        if near and flatter and truncated:
            return Verdict(PASS, ours, "T within 5% of the paper's 2.7; OPS flatter than the "
                           "posterior and truncated at a0")
        return Verdict(FAIL, ours, "T more than 5% from 2.7, or OPS not flatter / not truncated")

    def runtime():
        results = _get(r.json("central/runtime.json"), "results")
        parts, off = [], []
        for kind, run in results.items():
            ops = float(_get(run, "relative", "ops"))
            laplace = float(_get(run, "relative", "laplace"))
            parts.append(f"{_get(run, 'data')}: OPS {ops:.2f}x, Laplace {laplace:.2f}x")
            # "did not greatly affect": Laplace's extra time judged beside the extra time
            # OPS adds, as "almost the same" is judged beside the other method's gap
            quiet = ops > 1.0 and abs(laplace - 1.0) <= ALMOST_SAME * (ops - 1.0)
            if not (1.5 <= ops <= 3.0 and quiet):
                off.append(kind)
        ours = "; ".join(parts) + " the non-private fit's time"
        if not off:
            return Verdict(PASS, ours, "OPS between 1.5x and 3x the non-private time, and "
                           f"Laplace's extra time at most {ALMOST_SAME:.0%} of OPS's, on every "
                           "data set")
        return Verdict(NOT_REPRODUCED, ours, f"outside those bounds on {', '.join(off)} "
                       "(our samplers, not the paper's)")

    def war_logs_only(what):
        return Verdict(NOT_RUN, "n/a", f"no counterpart: {what} of the real war logs; the "
                       "logs (classified documents released by WikiLeaks) carry no licence "
                       "that lets this repository ship them, and the synthetic stand-ins' "
                       "states are their generator's, so a picture of them would show nothing "
                       "about the paper's data")

    return [
        Check("foulds.fig1.ops_flat_truncated",
              "Fig. 1 (beta-Bernoulli, N = 20, ε = 1, a0 = 0.2)",
              "OPS flattens the posterior by the temperature T = 2.7 and truncates it at a0; "
              "Laplace-privatized posteriors scatter around the true one (checked: T within "
              "5%, OPS peak below the posterior's, OPS support inside [a0, 1 − a0])", "T = 2.7",
              fig1),
        # the paper gives both routes the sampler's complexity; the constant factor is a
        # timing of the authors' code: ours are reported as ours
        Check("foulds.sec5.ops_runtime", "§5 (HMM run time)",
              "One 10-state HMM fit per data set of each route, timed against the "
              "non-private fit, beside the paper's \"OPS roughly doubled the runtime\" (a "
              "timing of the authors' code; OPS 1.5x-3x and Laplace's extra time at most "
              f"{ALMOST_SAME:.0%} of OPS's is the outcome shown)", "", runtime,
              observation=True),
        Check("foulds.fig3_5.iraq_states", "Fig. 3, 4 and 5 (Iraq HMM states, Laplace, ε = 5)",
              "The 2-state private HMM on Iraq finds a poor-outcome state (explosive hazard, "
              "IED, civilian casualties) prevalent until the 2007 troop surge and a good-outcome "
              "state after it", "state plots (no numbers)",
              lambda: war_logs_only("state assignments and emission profiles")),
        Check("foulds.fig7.afghanistan_ops_states", "Fig. 7 (Afghanistan OPS HMM states, ε = 5)",
              "OPS state assignments on Afghanistan, estimated from the last 100 samples and "
              "from the last sample alone (the one OPS may release)", "state plots (no numbers)",
              lambda: war_logs_only("OPS state assignments")),
    ]



def _foulds_table1(r: _Reader):
    """Foulds et al.'s Table 1 for the beta-Bernoulli model as the central_beta_bernoulli stage
    computes it (``central/table1.csv``), against the paper's entries at the stage's ε and
    a0 (recorded in ``central/beta_bernoulli.json`` with the ARE check, which uses them too)."""
    def rows():
        t = r.csv("central/table1.csv",
                  ("mechanism", "release", "sensitivity", "temperature", "are", "gibbs_cost"))
        mechanism = t.mechanism.astype(str).str.lower()
        laplace, ops = t[mechanism.str.startswith("laplace")], t[mechanism.str.contains("ops")]
        if laplace.empty or ops.empty:
            raise _Missing("central/table1.csv lacks a Laplace or an OPS row")
        return laplace, ops.iloc[0]

    def settings():
        are = _get(r.json("central/beta_bernoulli.json"), "are")
        return float(_get(are, "epsilon")), float(_get(are, "a0"))

    def same(value, expected) -> bool:
        # the table is written with six significant digits
        return math.isclose(float(value), expected, rel_tol=1e-5)

    def sensitivity():
        laplace, ops = rows()
        _, a0 = settings()
        ops_expected = -math.log(a0) + math.log(1.0 - a0)   # Eq. 15
        ours = (f"Laplace {', '.join(_fmt(v) for v in laplace.sensitivity)}; OPS "
                f"{_fmt(ops.sensitivity)} at a0 = {a0:g}")
        holds = all(same(v, 2.0) for v in laplace.sensitivity) and same(ops.sensitivity,
                                                                       ops_expected)
        return flag(holds, ours, holds=f"Laplace 2 and OPS −log a0 + log(1 − a0) = "
                    f"{_fmt(ops_expected)}, as the paper gives them",
                    fails=f"not the paper's 2 (Laplace) and {_fmt(ops_expected)} (OPS)")

    def efficiency():
        laplace, ops = rows()
        epsilon, _ = settings()
        mean = laplace[laplace.release.astype(str).str.contains("mean")]
        if mean.empty:
            raise _Missing("central/table1.csv has no Laplace row releasing the posterior mean")
        temperature = 2.0 * float(ops.sensitivity) / epsilon   # Eq. 14
        ours = (f"Laplace (statistics, posterior mean) {_fmt(mean.are.iloc[0])}; OPS "
                f"{_fmt(ops.are)} with T = {_fmt(ops.temperature)} at ε = {epsilon:g}")
        holds = (same(mean.are.iloc[0], 1.0) and same(ops.temperature, temperature)
                 and same(ops.are, 1.0 + temperature))
        return flag(holds, ours, holds=f"1 and 1 + T with T = 2Δ/ε = {_fmt(temperature)}",
                    fails=f"not the paper's 1 (Laplace) and 1 + T = {_fmt(1 + temperature)} "
                          "(OPS)")

    def gibbs_cost():
        laplace, ops = rows()
        costs = [str(c).lower() for c in laplace.gibbs_cost]
        ours = f"Laplace {'; '.join(costs)}; OPS {str(ops.gibbs_cost).lower()}"
        ops_cost = str(ops.gibbs_cost).lower()
        holds = (all(c.startswith("once") for c in costs) and ops_cost.startswith("per update")
                 and "unless converged" in ops_cost)
        return flag(holds, ours, holds="Laplace once, OPS per update unless converged",
                    fails="not the paper's 'Once' (Laplace) and 'Per update (unless "
                          "converged)' (OPS)")

    where = "Table 1 (the two mechanisms' properties; beta-Bernoulli model)"
    return [
        Check("foulds.table1.sensitivity", where,
              "Table 1, \"Sensitivity\": the L1 sensitivity of the summed statistics for the "
              "Laplace mechanism, the exponential mechanism's for OPS; for the beta-Bernoulli "
              "model \"the L1 sensitivity is 2\" and the truncated model's OPS sensitivity is "
              "−log a0 + log(1 − a0) (Eq. 15) (checked: the table's entries at its a0)",
              "2; −log a0 + log(1 − a0)", sensitivity),
        Check("foulds.table1.are", where,
              "Table 1, \"ARE\": 1 for the Laplace mechanism's statistics, 1 + T for OPS, "
              "with T = 2Δ/ε (Eq. 14) (checked: the table's entries at its ε)", "1; 1 + T",
              efficiency),
        Check("foulds.table1.gibbs_cost", where,
              "Table 1, \"Pay Gibbs cost\": \"Once\" for the Laplace mechanism, \"Per update "
              "(unless converged)\" for OPS", "Once; Per update (unless converged)",
              gibbs_cost),
    ]
