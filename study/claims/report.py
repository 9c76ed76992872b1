"""Every group of claims checked over a results root, their diagnoses attached, and the report
(``claims.md``, ``claims.json``) written."""
from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from lpp.formats.files import atomic_write_bytes, json_bytes
from study.claims.foulds import _foulds, _foulds_more, _foulds_table1
from study.claims.icml import _icml_appendix_fig2, _icml_fig1, _icml_fig3, _icml_fig4, _icml_fig5
from study.claims.reading import _Reader, dataset_of, _run
from study.claims.rules import (ALMOST_SAME, AS_FAR_AS, FOULDS, ICML, PAPER_DATASET, PASS,
                                STATUSES, VI)
from study.claims.vi import _vi, _vi_speed
from study.diagnoses import CAUSES, DIAGNOSES, diagnosis_of


#: ``python -m study.claims``'s description
DESCRIPTION = "The papers' qualitative claims, each checked against the pipeline's result tables."

#: the groups of claims, in the report's order: (paper, function of a reader -> checks)
GROUPS = ((ICML, _icml_fig1), (ICML, _icml_fig3), (ICML, _icml_fig4), (ICML, _icml_fig5),
          (ICML, _icml_appendix_fig2), (VI, _vi), (VI, _vi_speed), (FOULDS, _foulds),
          (FOULDS, _foulds_table1), (FOULDS, _foulds_more))


@dataclass(frozen=True)
class Claim:
    """One checked claim: where it is made, what it says, our and the paper's numbers, the
    files it read and the support behind the verdict (chains, copies, worst R-hat).

    ``observation`` marks a comparison of our own that the papers do not state: reported
    with its numbers and outcome, without a status, and left out of the summary. A verdict
    other than ``PASS`` carries its diagnosis (:mod:`study.diagnoses`): ``cause``,
    ``evidence`` and the ``command`` that shows it (None where none is recorded). ``judged``
    is False for a case study run on other data (``dataset``) than the paper's: the
    comparison is then a pattern of that data, reported without its status or the paper's
    numbers and left out of the summary.
    """

    id: str
    source: str
    statement: str
    status: str
    ours: str
    paper: str
    reason: str
    reads: tuple = ()
    chains: int | None = None
    copies: int | None = None
    rhat: float | None = None
    dataset: str | None = None
    judged: bool = True
    observation: bool = False
    cause: str | None = None
    evidence: str | None = None
    command: str | None = None


def check_claims(results_root) -> list[Claim]:
    """Check every claim against the tables under ``results_root``.

    Parameters
    ----------
    results_root : path-like
        A results folder with the pipeline's layout (module docstring), e.g. ``results`` or
        ``results/paper``. Tables that are absent give ``NOT-RUN`` claims.

    Returns
    -------
    list of Claim
        In a fixed order: ICML Figs 1, 3, 4, 5 (and appendix Fig. 1), VI, Foulds et al.;
        our own observations among them, marked ``observation``.
    """
    root = Path(results_root)
    settings = _Reader(root)
    params = settings.params()
    claims = []
    for source, group in GROUPS:
        reader = _Reader(root)
        for check in group(reader):
            reader.read = []
            verdict = _run(check.run)
            dataset = dataset_of(params, check.case) if check.case else None
            reads = list(reader.read)
            if check.case and settings.read and settings.read[0] not in reads:
                reads += settings.read   # where the case study's data set was read
            claims.append(Claim(
                id=check.id, source=f"{source}, {check.where}", statement=check.statement,
                status=verdict.status, ours=verdict.ours, paper=check.paper,
                reason=verdict.reason, reads=tuple(reads), chains=verdict.chains,
                copies=verdict.copies, rhat=verdict.rhat, dataset=dataset,
                judged=dataset in (None, PAPER_DATASET), observation=check.observation))
    return [_diagnosed(c, profile_of(root)) for c in claims]


def _diagnosed(claim: Claim, profile: str | None) -> Claim:
    """The claim with its diagnosis attached where it is a verdict other than PASS."""
    found = diagnosis_of(profile, claim.id)
    if found is None or claim.status == PASS or not claim.judged or claim.observation:
        return claim
    return replace(claim, cause=found.cause, evidence=found.evidence, command=found.command)


def diagnosis_problems(claims, profile: str | None) -> dict:
    """What the diagnoses of ``profile`` (:data:`study.diagnoses.DIAGNOSES`) leave wrong:
    ``undiagnosed``, the verdicts other than PASS without a diagnosis, and ``stale``, the
    diagnosed claims that pass, carry no verdict or do not exist (ids, in the claims' order)."""
    verdicts = {c.id: c for c in _verdicts(claims)}
    undiagnosed = [c.id for c in verdicts.values() if c.status != PASS and c.cause is None]
    diagnosed = [c.id for c in claims] + sorted(DIAGNOSES.get(profile, {}))
    stale = [i for i in dict.fromkeys(diagnosed) if diagnosis_of(profile, i) is not None
             and (i not in verdicts or verdicts[i].status == PASS)]
    return {"undiagnosed": undiagnosed, "stale": stale}


def profile_of(results_root) -> str | None:
    """The profile that made the results under ``results_root`` (``profile`` in the params
    file next to them; None where there is none)."""
    return _Reader(Path(results_root)).params().get("profile")


def _verdicts(claims) -> list:
    """The claims that get a verdict: the papers' statements, on the papers' data."""
    return [c for c in claims if c.judged and not c.observation]


def _summary(claims) -> dict:
    judged = _verdicts(claims)
    return {status: sum(c.status == status for c in judged) for status in STATUSES}


def _causes(claims) -> dict:
    """How many verdicts other than PASS each cause explains (``undiagnosed``: none does)."""
    open_ = [c for c in _verdicts(claims) if c.status != PASS]
    counts = {cause: sum(c.cause == cause for c in open_) for cause in CAUSES}
    return {**counts, "undiagnosed": sum(c.cause is None for c in open_)}


def _support(c: Claim) -> tuple[str, str]:
    support = "n/a" if c.chains is None else f"{c.chains} × {c.copies}"
    rhat = "n/a" if c.rhat is None else f"{c.rhat:.3g}"
    return support, rhat


def _cells_row(cells) -> str:
    return "| " + " | ".join(str(x).replace("|", "/") for x in cells) + " |"


def _reads(c: Claim, root: str) -> str:
    """The files a claim read, relative to the results folder ``root`` (the report's own
    folder): so the report stays right where it is copied with its tables."""
    prefix = root.rstrip("/") + "/"
    return ", ".join(f"`{p[len(prefix):] if p.startswith(prefix) else p}`" for p in c.reads)


#: how the report's statuses and columns are read (its header)
_LEGEND = (
    "PASS: holds in our results beyond the spread. FAIL: our results contradict it beyond "
    "the spread. UNSETTLED: the comparison that decides it lies inside the spread and the "
    "chains of one fit disagree about it. NOT-REPRODUCED: neither confirmed nor contradicted "
    "(a difference within the spread, one value per cell so no spread to judge by, or a "
    "printed number missed by more than the stated tolerance). NOT-RUN: the table it needs "
    "is absent. Cells whose fits ran on the same design unit (a privatized copy, a held-out "
    "split, a seed) are compared paired by it: the spread is the standard deviation of the "
    "per-unit differences (plus the chains' own variance within a unit), and the row gives "
    "the paired difference and in how many units each side is ahead; other cells are "
    "compared by the standard deviations over every chain of every copy, summed in "
    "quadrature. \"Almost the same\" is judged by the gap the other method opens: our gap, "
    f"spread included, at most {ALMOST_SAME:.0%} of it passes, at least {AS_FAR_AS:.0%} of "
    "it, spread excluded, fails. *chains × copies* is the fewest behind any compared cell "
    "(for Foulds et al., copies are held-out splits), *R-hat* the worst of the fits (n/a: "
    "one chain, or not recorded). Each claim quotes the paper's sentence and says how it is "
    "checked; comparisons the papers do not state are listed apart, as our own "
    "observations. Machine-readable twin: `claims.json`.")


#: how the diagnoses' causes are read (study.diagnoses)
_CAUSES_LEGEND = (
    "contradicted: fails under the paper's own protocol and reading, beyond a spread we trust. "
    "undecided: our runs cannot tell (inside the spread, one value per cell, or a spread not "
    "to be trusted); the evidence says what would decide it and its cost. ours-not-theirs: "
    "the regime or measure is ours, not the paper's (where the paper is silent, or a size "
    "other than the paper's); the evidence gives the paper's "
    "reading. untestable: the paper's data or numbers are not available to us. Each row names "
    "the command, run from the repository's root, that shows its evidence (docs/claims.md).")


def _unjudged_section(title: str, intro: str, column: str, claims, place,
                      root: str) -> list[str]:
    """The lines of a table of comparisons without verdicts (our observations, patterns on
    other data): ``column`` names what ``place(claim)`` gives for each row."""
    lines = ["", f"## {title}", "", intro, "",
             f"| comparison | {column} | ours | chains × copies | R-hat | outcome | read |",
             "|---|---|---|---|---|---|---|"]
    for c in claims:
        support, rhat = _support(c)
        lines.append(_cells_row([c.statement, place(c), c.ours, support, rhat, c.reason,
                                 _reads(c, root)]))
    return lines


def claims_markdown(claims, *, results_root: str = "results",
                    beside: bool = True, problems: dict | None = None) -> str:
    """The claims as a Markdown report: a summary line and one table row per claim; the
    diagnosis of each verdict other than PASS (``problems``: :func:`diagnosis_problems`, shown
    where a list is not empty); our own observations in a table without verdicts; the
    comparisons of a case study on other data than the paper's in a pattern table."""
    judged = _verdicts(claims)
    open_ = [c for c in judged if c.status != PASS]
    causes = ", ".join(f"{n} {cause}" for cause, n in _causes(claims).items()
                       if n or cause != "undiagnosed")
    observations = [c for c in claims if c.judged and c.observation]
    pattern = [c for c in claims if not c.judged]
    summary = ", ".join(f"{n} {s}" for s, n in _summary(claims).items())
    lines = [
        "# The papers' claims, checked against our results",
        "",
        f"Generated by `python -m study.claims --results {results_root}` from the tables of "
        + ("that folder, where it writes this report" if beside else f"`{results_root}/`")
        + f" (the files each row read are named relative to it; do not edit by hand). "
        f"{len(judged)} claims: {summary}"
        + (f"; {len(observations)} observations of our own, without verdicts."
           if observations else ".")
        + (f" Causes of the {len(open_)} verdicts other than PASS: {causes}." if open_ else ""),
        "",
        _LEGEND,
        "",
        "| status | cause | claim | where | ours | paper | chains × copies | R-hat | why | read |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in judged:
        support, rhat = _support(c)
        cause = "" if c.status == PASS else (c.cause or "undiagnosed")
        lines.append(_cells_row([f"**{c.status}**", cause, c.statement, c.source, c.ours,
                                 c.paper, support, rhat, c.reason, _reads(c, results_root)]))
    if open_:
        lines += ["", "## Why each verdict other than PASS is not one", "",
                  _CAUSES_LEGEND, "", "| claim | status | cause | evidence | shown by |",
                  "|---|---|---|---|---|"]
        lines += [_cells_row([f"`{c.id}`", c.status, c.cause or "undiagnosed",
                              c.evidence or "", f"`{c.command}`" if c.command else ""])
                  for c in open_]
    for key, text in (("undiagnosed", "Verdicts other than PASS without a diagnosis"),
                      ("stale", "Diagnoses of claims that pass or are not verdicts")):
        if problems and problems.get(key):
            lines += ["", f"**{text}** (study/diagnoses.py): "
                      + ", ".join(f"`{i}`" for i in problems[key]) + "."]
    if observations:
        lines += _unjudged_section(
            "Our own observations (no verdicts)",
            "Comparisons the papers do not state — ours against the naive method at levels "
            "the papers do not single out, the naive method's own trend where the text states "
            "none, private against naive VI — and our readings where a paper's sentence says "
            "something else (our own code's timings beside the authors'; ours against a "
            "non-private fit where the paper sets ours beside the naive method): shown with "
            "our numbers and how they come out, never as a verdict on the papers, and not "
            "counted above.",
            "where", observations, lambda c: c.source, results_root)
    if pattern:
        datasets = sorted({c.dataset for c in pattern})
        lines += _unjudged_section(
            "Patterns on other data (no verdicts)",
            f"These case studies ran on {', '.join(f'`{d}`' for d in datasets)}, not on the "
            "papers' Enron data, so the papers' claims are not judged on them: the same "
            "comparisons are shown as patterns of this data, without the papers' numbers.",
            "data", pattern, lambda c: c.dataset, results_root)
    return "\n".join(lines) + "\n"


def _payload(claims, root: str, problems: dict) -> dict:
    def record(c, dropped=()):
        d = asdict(c)
        d["reads"] = list(c.reads)
        for key in dropped:
            d.pop(key)
        return d

    unjudged = ("status", "paper", "judged", "cause", "evidence", "command")
    return {"results": root, "summary": _summary(claims), "causes": _causes(claims),
            "diagnosis_problems": problems,
            "claims": [record(c, ("observation",)) for c in _verdicts(claims)],
            "observations": [record(c, (*unjudged, "observation")) for c in claims
                             if c.judged and c.observation],
            "pattern": [record(c, unjudged) for c in claims if not c.judged]}


def write_claims(results_root, out_dir) -> tuple[Path, Path]:
    """Check the claims under ``results_root``; write ``claims.md`` and ``claims.json``.

    Parameters
    ----------
    results_root : path-like
        The results folder to read (see :func:`check_claims`).
    out_dir : path-like
        Where to write the two files (created if needed), atomically.

    Returns
    -------
    tuple of pathlib.Path
        The Markdown and JSON paths.
    """
    return _write(check_claims(results_root), results_root, out_dir)


def _write(claims, results_root, out_dir) -> tuple[Path, Path]:
    out = Path(out_dir)
    root = Path(results_root).as_posix()
    md, js = out / "claims.md", out / "claims.json"
    beside = out.resolve() == Path(results_root).resolve()
    problems = diagnosis_problems(claims, profile_of(results_root))
    atomic_write_bytes(md, claims_markdown(claims, results_root=root, beside=beside,
                                           problems=problems).encode())
    atomic_write_bytes(js, json_bytes(_payload(claims, root, problems)))
    return md, js


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m study.claims",
                                     description=DESCRIPTION)
    parser.add_argument("--results", default="results", help="the results folder to read "
                        "(results, or results/paper for the paper-scale tables)")
    parser.add_argument("--out", default=None, help="where to write claims.md/json "
                        "(default: the results folder)")
    args = parser.parse_args(argv)
    claims = check_claims(args.results)
    md, js = _write(claims, args.results, args.out or args.results)
    counts = _summary(claims)
    print(f"wrote {md} and {js}: " + ", ".join(f"{n} {s}" for s, n in counts.items())
          + "; causes: " + ", ".join(f"{n} {c}" for c, n in _causes(claims).items()))
    return 0
