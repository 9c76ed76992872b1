"""The pipeline's privacy boundary, read from its DVC dependency graph.

True counts live under ``data/raw`` and ``data/prepared``. The ``privatize`` stages (the data
owners' side) are the only bridge from them to ``data/private``. No private inference stage
may reach a true-count file, directly or through any chain of stages, except through a
``privatize`` stage; and the private notebook must not load true counts itself.

Also: every stage declares, as DVC dependencies, all the local code it runs (below).
"""
import ast
import functools
import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path, PurePosixPath

import numpy as np
import pytest
import yaml
from dvc.dependency.param import ParamsDependency
from dvc.repo import Repo

from lpp.formats.fits import save_fit
from lpp.formats.ledger import Release, composed_epsilon
from lpp.inference import RunOptions, TopicModel, fit_nonprivate, fit_private
from study.claims import PARAMS_READ
from study.notebook import check_settings
from study.provenance import paper_layout
from study.reports import FIT_SETTINGS, STUDIES, named_fits

ROOT = Path(__file__).resolve().parents[1]
TRUE_COUNTS = ("data/raw", "data/prepared")
BRIDGE = "privatize"
#: what the data owners keep for themselves: privatize's executed notebook (true-count
#: statistics, and the noise seed among its parameters)
OWNER_SIDE = "results/owner"


def _is_under(path, roots):
    path = PurePosixPath(path)
    return any(path == PurePosixPath(r) or PurePosixPath(r) in path.parents for r in roots)


def _graph(dvc_yaml):
    """{stage name: (deps, outs)} with matrix stages expanded by DVC itself."""
    with Repo(str(dvc_yaml.parent)) as repo:
        stages = repo.index.stages
        return {s.addressing.split(":")[-1]: ([d.def_path for d in s.deps],
                                              [o.def_path for o in s.outs]) for s in stages}


class _Producers(dict):
    """{output path: the stage that writes it}, with an index of the outputs that are a path,
    lie under it or hold it (:meth:`related`), so that a walk of the paper profile's several
    hundred stages does not compare every dependency with every output."""

    def __init__(self, graph):
        super().__init__((out, name) for name, (_, outs) in graph.items() for out in outs)
        self._by_path = {}  # a normalised path -> the outputs at it
        self._by_folder = {}  # a normalised path -> the outputs at it or under it
        for out in self:
            path = PurePosixPath(out)
            self._by_path.setdefault(path, []).append(out)
            for folder in (path, *path.parents):
                self._by_folder.setdefault(folder, []).append(out)

    def related(self, dep):
        """``(output, producer)`` of every output at ``dep``, under it or holding it (the pairs
        that ``_is_under(out, [dep]) or _is_under(dep, [out])`` selects)."""
        path = PurePosixPath(dep)
        outs = dict.fromkeys(self._by_folder.get(path, ()))
        for folder in path.parents:
            outs.update(dict.fromkeys(self._by_path.get(folder, ())))
        return [(out, self[out]) for out in outs]


def _producers(graph):
    return _Producers(graph)


def _reaches_true_counts(stage, graph, producers, seen=None):
    """The dependency paths of ``stage`` that end in true counts without crossing privatize."""
    seen = set() if seen is None else seen
    found = []
    for dep in graph[stage][0]:
        if _is_under(dep, TRUE_COUNTS):
            found.append([stage, dep])
            continue
        for out, producer in producers.related(dep):
            if producer in seen or producer.split("@")[0] == BRIDGE:
                continue
            seen.add(producer)
            found += [[stage] + chain for chain in _reaches_true_counts(producer, graph, producers, seen)]
    return found


#: the analyst's stages that read privatized data: they must see only data/private (the fits,
#: and the diagnosis of the network's private fits, whose extra chains are private fits too)
PRIVATE_PREFIXES = ("infer_private", "infer_vi", "diagnose_network")


def _private_stages(graph):
    return [n for n in graph if n.startswith(PRIVATE_PREFIXES)]


def _work_tree(work, params_text, pipeline_text=None):
    """``work`` as a DVC project (no git) with the settings ``params_text`` and the pipeline
    ``pipeline_text`` (default: this repository's)."""
    (work / ".dvc").mkdir()
    (work / ".dvc" / "config").write_text("[core]\n    no_scm = true\n")
    (work / "dvc.yaml").write_text(pipeline_text or (ROOT / "dvc.yaml").read_text())
    (work / "params.yaml").write_text(params_text)
    return work


@pytest.fixture(scope="module")
def quick_graph():
    return _graph(ROOT / "dvc.yaml")


@pytest.fixture(scope="module")
def paper_graph(tmp_path_factory):
    """The stages of the paper profile: some matrices (e.g. network.unmasked_C) are empty
    in the quick profile, so their stages exist only here."""
    work = _work_tree(tmp_path_factory.mktemp("paper"),
                      (ROOT / "profiles" / "paper.yaml").read_text())
    return _graph(work / "dvc.yaml")


@pytest.fixture(scope="module", params=["quick", "paper"])
def graph(request):
    return request.getfixturevalue(f"{request.param}_graph")


def test_private_inference_never_depends_on_true_counts(graph):
    private = _private_stages(graph)
    assert private, "no private inference stage in dvc.yaml"
    producers = _producers(graph)
    for stage in private:
        chains = _reaches_true_counts(stage, graph, producers)
        assert not chains, f"{stage} reaches true counts: {chains}"
        assert any(d.startswith("data/private/") for d in graph[stage][0])


#: the evaluator's stages: owner-side evaluation, which by design reads the true counts and
#: the analyst's fits of every privatized copy (docs/privacy.md, *Who sees what*); every other
#: stage downstream of privatize is the analyst's and reads exactly one copy
EVALUATOR_STAGES = ("score_private_topics", "score_vi_topics", "report_topics",
                    "report_network", "report_network_rows_cols", "diagnose_topics",
                    "diagnose_nonprivate_topics", "claims")
#: the evaluator's stages that read one privatized copy: a topic fit's scoring (one fit, the
#: true counts and the non-private fit's mean topics), and the topics' diagnosis, beside the
#: non-private fit and its chains (the topics' chains share a folder)
ONE_COPY_EVALUATORS = ("score_private_topics", "score_vi_topics", "diagnose_topics",
                       "diagnose_nonprivate_topics")
PRIVATE_ROOT = "data/private"


def _private_copies(stage, graph, producers, seen=None):
    """The privatized copies (``data/private/<data set>/<copy>`` folders) that ``stage``
    reads, directly or through the outputs of other stages (never through privatize)."""
    seen = set() if seen is None else seen
    copies = set()
    for dep in graph[stage][0]:
        if _is_under(dep, [PRIVATE_ROOT]):
            # a copy, or a folder of copies (then every copy privatize writes under it)
            copies |= {o for o, p in producers.related(dep)
                       if p.split("@")[0] == BRIDGE and _is_under(o, [PRIVATE_ROOT])}
            continue
        for out, producer in producers.related(dep):
            if producer in seen or producer.split("@")[0] == BRIDGE:
                continue
            seen.add(producer)
            copies |= _private_copies(producer, graph, producers, seen)
    return copies


def _span(copies):
    """{data set: composed epsilon / N} of a reader of ``copies`` (folder paths
    ``data/private/<data set>/eps<level>_rep<copy>``), by the ledger's basic composition."""
    releases = []
    for path in sorted(copies):
        dataset, name = PurePosixPath(path).parts[2:4]
        level, rep = re.fullmatch(r"eps([0-9.]+)_rep([0-9]+)", name).groups()
        releases.append(Release(path=path, dataset_id=dataset, copy=int(rep),
                                epsilon=float(level), N=1.0, epsilon_over_n=float(level),
                                mechanism="fast", randomness="simulation", release_sha256=path,
                                selection=None, source=dataset))
    ledger = composed_epsilon(releases, warn=False)
    return {name: d.epsilon_over_n for name, d in ledger.datasets.items()}


def test_each_analyst_stage_reads_one_privatized_copy(graph):
    """A reader of several copies of the same counts has spent their epsilons' sum (the median
    of three copies at epsilon/N = 3 is the true count almost everywhere): every stage
    downstream of privatize either fits exactly one copy (the analyst's), or is one of the
    evaluator's stages, which read the true counts anyway and compare fits of every copy with
    them. A new stage that reads several copies must be classified here."""
    producers = _producers(graph)
    private, evaluators = set(_private_stages(graph)), {}
    for stage in graph:
        if stage.split("@")[0] == BRIDGE:
            continue
        copies = _private_copies(stage, graph, producers)
        if not copies:
            assert stage not in private, f"{stage} reads no privatized copy"
            continue
        if stage in private:
            assert len(copies) == 1, f"{stage} reads {len(copies)} privatized copies: {copies}"
            continue
        assert stage.split("@")[0] in EVALUATOR_STAGES, (
            f"{stage} is downstream of privatize but neither an analyst's stage (one copy) nor "
            f"the evaluator's: it reads {len(copies)} copies")
        assert _reaches_true_counts(stage, graph, producers) or any(
            _is_under(d, TRUE_COUNTS) for d in graph[stage][0]), \
            f"{stage} reads several copies but is no owner-side evaluation of the true counts"
        evaluators[stage] = copies
    assert {stage.split("@")[0] for stage in evaluators} == set(EVALUATOR_STAGES)
    assert all(len(c) > 1 for stage, c in evaluators.items()
               if stage.split("@")[0] not in ONE_COPY_EVALUATORS)


def test_the_evaluators_span_every_copy_of_their_data_sets(quick_graph):
    """What the evaluator's stages span, by the ledger's composition: each report reads fits
    of every level and copy of its counts (epsilon/N summed over them); the diagnosis reads
    one copy (its diagnosed level's epsilon/N); the claims, all of it."""
    settings = yaml.safe_load((ROOT / "params.yaml").read_text())
    levels = settings["privacy"]["levels"]
    topics = pytest.approx(sum(levels) * len(settings["topics"]["replicates"]))
    network = pytest.approx(sum(levels) * len(settings["network"]["replicates"]))
    producers = _producers(quick_graph)
    span = {stage: _span(_private_copies(stage, quick_graph, producers))
            for stage in quick_graph if stage.split("@")[0] in EVALUATOR_STAGES}
    diagnosed = pytest.approx(settings["diagnose"]["level"])
    assert span["report_topics"] == {"topics": topics}
    assert span["report_network"] == {"network": network}
    assert span["report_network_rows_cols"] == {"network_rows_cols": network}
    for method in settings["diagnose"]["topic_methods"]:
        assert span[f"diagnose_topics@{method}"] == {"topics": diagnosed}
    assert span["diagnose_nonprivate_topics"] == {"topics": diagnosed}
    scored = [stage for stage in span if stage.startswith(("score_private_topics@",
                                                           "score_vi_topics@"))]
    assert scored and all(len(span[stage]) == 1 and list(span[stage]) == ["topics"]
                          and float(stage.split("-")[1]) == pytest.approx(span[stage]["topics"])
                          for stage in scored)
    assert set(span["claims"]) == {"topics", "network", "network_rows_cols"}


def test_the_copy_check_catches_a_reader_of_two_copies():
    graph = {
        "privatize@a-1": (["data/prepared/t"], ["data/private/t/eps1.0_rep0"]),
        "privatize@a-2": (["data/prepared/t"], ["data/private/t/eps1.0_rep1"]),
        "infer_private_x": (["data/private/t/eps1.0_rep0"], ["results/fits/x"]),
        "infer_private_median": (["data/private/t"], ["results/fits/m"]),
        "summary": (["results/fits/x", "results/fits/m"], ["results/s.csv"]),
    }
    producers = _producers(graph)
    assert _private_copies("infer_private_x", graph, producers) == {"data/private/t/eps1.0_rep0"}
    assert len(_private_copies("infer_private_median", graph, producers)) == 2
    assert len(_private_copies("summary", graph, producers)) == 2
    assert _span(_private_copies("summary", graph, producers)) == {"t": pytest.approx(2.0)}


def test_each_private_folder_records_its_copy():
    """privatize hands the notebook its replicate: the private folder's ledger records it."""
    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"][BRIDGE]
    assert "-p replicate ${item.rep}" in " ".join(stage["cmd"].split())


def test_the_unmasked_network_stages(quick_graph, paper_graph):
    """The arXiv design's runs: one private stage per method, level, copy and C of
    network.unmasked_C (under the privacy check above), one non-private stage per C; none
    when the setting is empty. Their fits lie under results/fits/network, which the
    network report reads."""
    settings = {name: yaml.safe_load(path.read_text()) for name, path in
                (("quick", ROOT / "params.yaml"), ("paper", ROOT / "profiles" / "paper.yaml"))}
    for name, graph in (("quick", quick_graph), ("paper", paper_graph)):
        network, privacy = settings[name]["network"], settings[name]["privacy"]
        private = [s for s in graph if s.startswith("infer_private_network_unmasked@")]
        nonprivate = [s for s in graph if s.startswith("infer_nonprivate_network_unmasked@")]
        assert len(private) == (len(network["methods"]) * len(privacy["levels"])
                                * len(network["replicates"]) * len(network["unmasked_C"]))
        assert len(nonprivate) == len(network["unmasked_C"])
        assert set(private) <= set(_private_stages(graph))
        for stage in private + nonprivate:
            fits = [o for o in graph[stage][1] if o.startswith("results/fits/network/")]
            assert len(fits) == 1 and fits[0].endswith("_unmasked"), (stage, fits)
        for stage in nonprivate:  # the non-private reference reads the true counts
            assert "data/prepared/network/counts.npz" in graph[stage][0]
    assert settings["paper"]["network"]["unmasked_C"] == [5, 10, 20]
    report = paper_graph["report_network"][0]
    assert "results/fits/network" in report


def test_the_rows_cols_network_stages(quick_graph, paper_graph):
    """The paper's literal held-out reading: its own prepared network (remasked from the
    block one), privatized like every data set, one private stage per method, level, copy and
    C of network.rows_cols_C (under the privacy check above) reading only its privatized
    copies, one non-private stage per C, and its own report."""
    settings = {name: yaml.safe_load(path.read_text()) for name, path in
                (("quick", ROOT / "params.yaml"), ("paper", ROOT / "profiles" / "paper.yaml"))}
    for name, graph in (("quick", quick_graph), ("paper", paper_graph)):
        network, privacy = settings[name]["network"], settings[name]["privacy"]
        private = [s for s in graph if s.startswith("infer_private_network_rows_cols@")]
        nonprivate = [s for s in graph if s.startswith("infer_nonprivate_network_rows_cols@")]
        assert len(private) == (len(network["methods"]) * len(privacy["levels"])
                                * len(network["replicates"]) * len(network["rows_cols_C"]))
        assert len(nonprivate) == len(network["rows_cols_C"])
        assert set(private) <= set(_private_stages(graph))
        for stage in private:
            assert all(d.startswith("data/private/network_rows_cols/")
                       for d in graph[stage][0] if d.startswith("data/"))
        for stage in private + nonprivate:
            fits = [o for o in graph[stage][1] if o.startswith("results/fits/")]
            assert len(fits) == 1 and fits[0].startswith("results/fits/network_rows_cols/")
        for stage in nonprivate:
            assert "data/prepared/network_rows_cols/counts.npz" in graph[stage][0]
        assert any(s.startswith("privatize@") and "data/prepared/network_rows_cols/counts.npz"
                   in graph[s][0] for s in graph)
        assert "results/fits/network_rows_cols" in graph["report_network_rows_cols"][0]
        assert "data/prepared/network/counts.npz" in graph["prepare_network_rows_cols"][0]
    assert settings["paper"]["network"]["rows_cols_C"] == [5, 10, 20]


#: the report stage of each case study (study.reports.STUDIES)
REPORTS = {"topics": "report_topics", "network": "report_network",
           "network_rows_cols": "report_network_rows_cols"}


def _other_settings():
    """The quick profile's settings with other methods, levels, copies and C: every setting
    that names fits changed (a level an int, as a user may write it)."""
    settings = yaml.safe_load((ROOT / "params.yaml").read_text())
    settings["privacy"].update(levels=[2.0, 0.5, 1], replicates=[0, 1, 2])
    settings["topics"].update(methods=["bessel"], replicates=[1, 2])
    settings["vi_topics"].update(methods=["collapsed_cavi", "paper_cavi"], replicates=[0, 2])
    settings["network"].update(methods=["naive"], replicates=[2], C=[20], unmasked_C=[5, 10],
                               rows_cols_C=[10, 20])
    return settings


@pytest.fixture(scope="module")
def other_graph(tmp_path_factory):
    """The stages of the pipeline under :func:`_other_settings`."""
    work = _work_tree(tmp_path_factory.mktemp("other"),
                      yaml.safe_dump(_other_settings(), sort_keys=False))
    return _graph(work / "dvc.yaml")


def _fit_folders(graph, study):
    """{fit folder name: the stage that writes it, without its matrix item} of the stages that
    write a fit folder directly under ``results/fits/<study>/``."""
    prefix = f"results/fits/{study}/"
    return {out[len(prefix):]: stage.split("@")[0] for stage, (_, outs) in graph.items()
            for out in outs if out.startswith(prefix) and "/" not in out[len(prefix):]}


def test_the_reports_score_the_fits_the_stages_write(quick_graph, paper_graph, other_graph):
    """study.reports.named_fits, the fits a report scores, names exactly the fit folders that
    the pipeline's stages write for the same settings (each with the stage that writes it),
    for both profiles and hand-made settings; and each report reads that study's folder."""
    profiles = {"quick": (yaml.safe_load((ROOT / "params.yaml").read_text()), quick_graph),
                "paper": (yaml.safe_load((ROOT / "profiles" / "paper.yaml").read_text()),
                          paper_graph),
                "other": (_other_settings(), other_graph)}
    assert set(STUDIES) == set(REPORTS)
    for profile, (settings, graph) in profiles.items():
        for study in STUDIES:
            named = {name: described.split()[1].rstrip(":")
                     for name, described in named_fits(settings, study).items()}
            written = _fit_folders(graph, study)
            assert written, (profile, study)
            assert named == written, (profile, study, set(named) ^ set(written))
            if study != "topics":
                assert f"results/fits/{study}" in graph[REPORTS[study]][0]
                continue
            # each topic fit is scored by a stage of its own, into the folder the report reads
            scores = f"results/eval/{settings['prepare_topics']['dataset']}_topics"
            assert scores in graph[REPORTS[study]][0]
            scorers = {out[len(scores) + 1:-len(".json")]: stage
                       for stage, (_, outs) in graph.items() for out in outs
                       if out.startswith(scores + "/") and out.endswith(".json")}
            assert set(scorers) == set(named), (profile, set(scorers) ^ set(named))
            for fit, stage in scorers.items():
                assert f"results/fits/topics/{fit}" in graph[stage][0], (profile, stage)
    assert "bessel_eps1_rep2" in _fit_folders(other_graph, "topics")


def _notebook_parameter(path, name):
    """The default of parameter ``name`` in a notebook's parameters cell."""
    nb = json.loads(Path(path).read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    for node in ast.parse("".join(cell["source"])).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name
                                                for t in node.targets):
            return ast.literal_eval(node.value)
    raise KeyError(name)


def test_the_reports_declare_the_settings_that_name_their_fits(quick_graph):
    """A report reruns when the settings that name its fits change (study.reports.FIT_SETTINGS;
    of the privacy settings only the public levels, see
    test_no_other_stage_declares_the_privacy_settings), and its notebook's study is the one
    whose folder it scores."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for study, report in REPORTS.items():
        declared = stages[report].get("params", [])
        for key in FIT_SETTINGS[study]:
            if key.startswith("privacy."):
                assert key in PUBLIC_PRIVACY_SETTINGS and key in declared, (report, key)
            else:
                assert key in declared or key.split(".")[0] in declared, (report, key)
        args = shlex.split(" ".join(stages[report]["cmd"].split()))
        notebook = args[3]
        given = {args[i + 1]: args[i + 2] for i, a in enumerate(args) if a == "-p"}
        assert given.get("study", _notebook_parameter(ROOT / notebook, "study")) == study
        if study == "topics":  # it reads the fits' score records (the score_*_topics stages)
            assert given["scores_dir"] == "results/eval/${prepare_topics.dataset}_topics"
            assert not any(d.startswith("results/fits") for d in stages[report]["deps"])
        else:
            assert given.get("fits_dir", _notebook_parameter(ROOT / notebook, "fits_dir")) \
                == f"results/fits/{study}"
        assert "params_file" not in given  # the stage reads the params.yaml it runs under


def test_only_privatize_writes_private_data(graph):
    writers = {name for name, (_, outs) in graph.items() if any(o.startswith("data/private") for o in outs)}
    assert writers and all(name.split("@")[0] == BRIDGE for name in writers)


def _owner_side_leaks(graph):
    """(stage, path) pairs that break the owners' side: privatize writing outside data/private
    and results/owner, another stage writing into results/owner, or a private stage reading
    results/owner or any privatize output other than the private data."""
    leaks = []
    for name, (_, outs) in graph.items():
        owner = name.split("@")[0] == BRIDGE
        allowed = ["data/private", OWNER_SIDE] if owner else None
        leaks += [(name, o) for o in outs if (not _is_under(o, allowed) if owner
                                              else _is_under(o, [OWNER_SIDE]))]
    producers = _producers(graph)
    for stage in _private_stages(graph):
        for dep in graph[stage][0]:
            bridged = any(p.split("@")[0] == BRIDGE for _, p in producers.related(dep))
            if _is_under(dep, [OWNER_SIDE]) or (bridged and not _is_under(dep, ["data/private"])):
                leaks.append((stage, dep))
    return leaks


def test_privatize_hands_over_the_private_data_only(graph):
    """privatize writes the private data and, under results/owner, what only the owners may
    see; a private stage reads the former and never the latter."""
    assert _owner_side_leaks(graph) == []


def test_the_owner_side_check_catches_a_leak():
    graph = {
        "privatize@a": ("data/prepared/t", ["data/private/p", "results/owner/p.ipynb"]),
        "infer_private_x": (["data/private/p", "results/owner/p.ipynb"], ["results/fits/x"]),
        "infer_private_y": (["results/owner"], ["results/fits/y"]),
        "report": (["results/fits/x"], ["results/owner/report.csv"]),
    }
    assert _owner_side_leaks(graph) == [("report", "results/owner/report.csv"),
                                        ("infer_private_x", "results/owner/p.ipynb"),
                                        ("infer_private_y", "results/owner")]


def test_only_privatize_reads_the_noise_seed():
    """Whoever holds the noise seed can remove the noise: no other stage is handed it."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    readers = {name for name, stage in stages.items() if "noise_seed" in json.dumps(stage)}
    assert readers == {BRIDGE}


#: privacy settings that any stage may declare: the levels are public (every private folder
#: records its own), and the reports name their fits by them
PUBLIC_PRIVACY_SETTINGS = {"privacy.levels"}


def _privacy_setting_readers(dvc_yaml):
    """Stages other than privatize that declare the privacy settings (the noise seed among
    them) as a dependency: ``params.yaml`` whole, as a file, or a ``privacy`` key other than
    :data:`PUBLIC_PRIVACY_SETTINGS`."""
    readers = set()
    with Repo(str(dvc_yaml.parent)) as repo:
        for stage in repo.index.stages:
            name = stage.addressing.split(":")[-1]
            if name.split("@")[0] == BRIDGE:
                continue
            for dep in stage.deps:
                if PurePosixPath(dep.def_path).name != "params.yaml":
                    continue
                keys = list(dep.params or []) if isinstance(dep, ParamsDependency) else []
                if not keys or any(k == "privacy" or (k.startswith("privacy.")
                                                      and k not in PUBLIC_PRIVACY_SETTINGS)
                                   for k in keys):
                    readers.add(name)
    return readers


def test_no_other_stage_declares_the_privacy_settings(tmp_path):
    """The noise seed reaches privatize through its command line alone: no other stage depends
    on the privacy section, or on the whole params file, where the seed is (a stage that did
    could read it with DVC's tracking). A hand-made pipeline with such stages shows the
    check's power."""
    assert _privacy_setting_readers(ROOT / "dvc.yaml") == set()
    _work_tree(tmp_path, "privacy:\n  noise_seed: 1\nother:\n  k: 2\n", yaml.safe_dump(
        {"stages": {"privatize": {"cmd": "x", "params": ["privacy"]},
                    "infer_private_a": {"cmd": "x", "params": ["privacy.noise_seed"]},
                    "infer_private_b": {"cmd": "x", "params": ["privacy"]},
                    "infer_private_c": {"cmd": "x", "deps": ["params.yaml"]},
                    "report": {"cmd": "x", "params": ["other.k", "privacy.levels"]}}}))
    assert _privacy_setting_readers(tmp_path / "dvc.yaml") == {
        "infer_private_a", "infer_private_b", "infer_private_c"}


def test_the_check_catches_a_leak(tmp_path):
    """A private stage that depends on a file derived from the true counts must be caught."""
    leaky = {"stages": {
        "prepare": {"cmd": "x", "deps": ["data/raw/a"], "outs": ["data/prepared/t"]},
        "summarise": {"cmd": "x", "deps": ["data/prepared/t"], "outs": ["results/stats.json"]},
        "privatize": {"cmd": "x", "deps": ["data/prepared/t"], "outs": ["data/private/p"]},
        "infer_private_x": {"cmd": "x", "deps": ["data/private/p", "results/stats.json"],
                            "outs": ["results/fit"]},
    }}
    _work_tree(tmp_path, "", yaml.safe_dump(leaky))
    leaked = _graph(tmp_path / "dvc.yaml")
    chains = _reaches_true_counts("infer_private_x", leaked, _producers(leaked))
    assert chains == [["infer_private_x", "summarise", "data/prepared/t"]]


@pytest.mark.parametrize("notebook", ["infer_private.ipynb", "infer_vi.ipynb", "diagnose.ipynb"])
def test_private_notebook_reads_no_true_counts(notebook):
    nb = json.loads((ROOT / "notebooks" / notebook).read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    for forbidden in ("data_prep", "load_counts", "data/prepared", "data/raw", "fit_nonprivate",
                      "fit_variational_nonprivate", "noise_seed", "results/owner"):
        assert forbidden not in code, f"{notebook} mentions {forbidden}"


def test_profiles_have_the_same_settings():
    def keys(tree, prefix=""):
        return {prefix + k for k in tree} | {
            x for k, v in tree.items() if isinstance(v, dict) for x in keys(v, f"{prefix}{k}.")}
    quick = yaml.safe_load((ROOT / "params.yaml").read_text())
    paper = yaml.safe_load((ROOT / "profiles" / "paper.yaml").read_text())
    assert keys(quick) == keys(paper)
    assert paper["prepare_topics"]["n_docs"] == 10_000 and paper["topics"]["K"] == 50


# ---------------------------------------------------------------- complete dependencies
#
# A stage must re-run when any local code it runs changes: the module its command runs
# (``python -m ...``), the notebook's imports, and everything those import in turn. The
# imports are read statically (ast), including imports inside functions and the dotted
# module names that lazy loaders (``importlib.import_module``) hold as strings.

LOCAL_PACKAGES = ("lpp", "data_prep", "study")


@functools.lru_cache(maxsize=None)
def _module_path(name, root=ROOT):
    """The source file of local module ``name`` (relative to ``root``), or None."""
    if name.split(".")[0] not in LOCAL_PACKAGES:
        return None
    base = PurePosixPath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if (root / candidate).is_file():
            return candidate
    return None


def _imported_names(source, module=None):
    """Dotted names that ``source`` may import (``from a import b`` gives ``a`` and ``a.b``)."""
    names = set()
    package = module.rsplit(".", 1)[0] if module else None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and package:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and node.value.split(".")[0] in LOCAL_PACKAGES and node.value.isascii()
              and all(part.isidentifier() for part in node.value.split("."))):
            names.add(node.value)  # a lazy import by name
    return names


def _local_files(names, root=ROOT):
    """Every local source file that importing ``names`` runs (parents' __init__ included)."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__
            prefix = ".".join(parts[:i])
            path = _module_path(prefix, root)
            if path is None or path in seen:
                continue
            seen.add(path)
            is_package = path.name == "__init__.py"
            todo += _file_imports(root / path, f"{prefix}.__init__" if is_package else prefix)
    return seen


@functools.lru_cache(maxsize=None)
def _file_imports(path, module):
    """:func:`_imported_names` of a source file, read and parsed once per test session (every
    stage's walk reads the same few hundred files)."""
    return tuple(sorted(_imported_names(path.read_text(), module)))


def _notebook_imports(path):
    nb = json.loads(Path(path).read_text())
    names = set()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            names |= _imported_names("".join(cell["source"]))
    return names


def _command_imports(cmd, root=ROOT):
    """Modules a stage command runs: ``python -m M`` and, for the notebook runner, its notebook."""
    words = shlex.split(cmd)
    names = set()
    for i, word in enumerate(words[:-1]):
        if word == "-m":
            names.add(words[i + 1])
            if words[i + 1] == "study.notebook":
                names |= _notebook_imports(root / words[i + 2])
    return names


def _undeclared(cmd, deps, root=ROOT):
    """Local source files the command imports that no declared dependency covers."""
    return sorted(str(path) for path in _local_files(_command_imports(cmd, root), root)
                  if not _is_under(path, deps))


@pytest.fixture(scope="module")
def commands():
    with Repo(str(ROOT)) as repo:
        return {s.addressing.split(":")[-1]: (s.cmd, [d.def_path for d in s.deps])
                for s in repo.index.stages}


def test_every_stage_declares_the_local_code_it_imports(commands):
    assert len(commands) >= 10
    missing = {name: _undeclared(cmd, deps) for name, (cmd, deps) in commands.items()}
    assert not {name: files for name, files in missing.items() if files}


def test_import_reading_follows_notebooks_lazy_exports_and_relative_imports():
    names = _command_imports("python -m study.notebook notebooks/report_topics.ipynb out.ipynb")
    files = {str(p) for p in _local_files(names)}
    # the notebook imports data_prep's lazy export load_counts -> lpp/formats/counts.py -> lpp/formats/files.py
    assert {"study/notebook.py", "data_prep/__init__.py", "lpp/formats/counts.py", "lpp/formats/files.py",
            "study/reports.py", "lpp/evaluation.py"} <= files
    assert _imported_names("from . import b\nfrom .c import d", "pkg.sub.mod") >= {
        "pkg.sub", "pkg.sub.b", "pkg.sub.c", "pkg.sub.c.d"}


def test_the_check_catches_an_undeclared_import():
    cmd = "python -m data_prep.corpus topics --input x --out y"
    assert _undeclared(cmd, ["data_prep", "lpp"]) == []
    missing = _undeclared(cmd, ["data_prep"])
    assert "lpp/formats/files.py" in missing and all(m.startswith("lpp/") for m in missing)


def _shows_the_profile(cmd, root=ROOT):
    """Whether the notebook or module a stage command runs captions its figures with the
    settings profile (``study.figures.settings_caption`` reads ``params.yaml``'s ``profile``)."""
    words = shlex.split(cmd)
    sources = []
    for i, word in enumerate(words[:-1]):
        if word == "-m":
            if words[i + 1] == "study.notebook":
                sources.append(root / words[i + 2])
            elif (path := _module_path(words[i + 1], root)) is not None:
                sources.append(root / path)
    return any("settings_caption(" in path.read_text() for path in sources)


def test_every_stage_that_shows_the_profile_declares_it():
    """A figure's caption names the profile it was made under: a stage that draws one must
    declare ``profile``, or a work tree switched to another profile keeps the other's captions
    on stages DVC finds up to date (their settings otherwise the same in both)."""
    with Repo(str(ROOT)) as repo:
        stages = {s.addressing.split(":")[-1]: (s.cmd, {p for d in s.deps
                                                        for p in (getattr(d, "params", None)
                                                                  or [])})
                  for s in repo.index.stages}
    showing = {name for name, (cmd, _) in stages.items() if _shows_the_profile(cmd)}
    assert {"report_topics", "appendix_two_geometric", "central_hmm",
            "diagnose_topics@collapsed", "diagnose_network@collapsed"} <= showing
    assert {name for name in showing if "profile" not in stages[name][1]} == set()


def _profile_runner():
    spec = importlib.util.spec_from_file_location("profile_runner", ROOT / "profiles" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_paper_cuts_name_settings_of_the_paper_profile():
    runner = _profile_runner()
    paper = ROOT / "profiles" / "paper.yaml"
    merged = runner.merged_settings(paper, ROOT / "profiles" / "paper_cuts.yaml")
    full = yaml.safe_load(paper.read_text())
    assert merged["topics"]["K"] == full["topics"]["K"] == 50
    assert merged["topics"]["n_iter"] < full["topics"]["n_iter"]
    stages = set(yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"])
    assert set(runner.STAGES) | set(runner.DIAGNOSE_STAGES) | set(runner.SYNTHETIC_STAGES) <= stages


def test_a_cut_of_an_unknown_setting_is_refused(tmp_path):
    runner = _profile_runner()
    cuts = tmp_path / "cuts.yaml"
    cuts.write_text("topics:\n  n_iterations: 10\n")
    with pytest.raises(ValueError, match="n_iterations"):
        runner.merged_settings(ROOT / "profiles" / "paper.yaml", cuts)


@pytest.mark.parametrize("section", ["topics", "network", "vi_topics"])
def test_a_fit_of_a_copy_that_is_never_made_is_refused(tmp_path, section):
    runner = _profile_runner()
    cuts = tmp_path / "cuts.yaml"
    others = "".join(f"{other}:\n  replicates: [0]\n"
                     for other in ("topics", "network", "vi_topics") if other != section)
    cuts.write_text("privacy:\n  replicates: [0]\n" + others)
    with pytest.raises(ValueError, match=rf"{section}.replicates \[1, 2, 3, 4\]"):
        runner.merged_settings(ROOT / "profiles" / "paper.yaml", cuts)
    check_settings(yaml.safe_load((ROOT / "params.yaml").read_text()))
    runner.merged_settings(ROOT / "profiles" / "paper.yaml", ROOT / "profiles" / "paper_cuts.yaml")


def test_the_claims_stage_declares_the_params_it_reads():
    """study.claims reads a few settings from the params file next to the results (the case
    studies' data sets, the VI benchmark's size): its stage reruns when they change."""
    declared = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["claims"]["params"]
    for key in PARAMS_READ:
        section = key.split(".")[0]
        assert key in declared or section in declared, key


def test_the_paper_run_collects_the_tables_and_figures_of_its_data_sets(paper_graph):
    """What profiles/run.py copies back: every table and figure of the case-study reports and
    the diagnosis, under the names the paper profile's data sets give them."""
    runner = _profile_runner()
    settings = yaml.safe_load((ROOT / "profiles" / "paper.yaml").read_text())
    tables, figures = runner.collected_paths(settings)
    made = {out for stage in paper_graph
            if stage.split("@")[0] in ("report_topics", "report_network",
                                       "report_network_rows_cols", "diagnose_topics",
                                       "diagnose_nonprivate_topics", "diagnose_network")
            for out in paper_graph[stage][1] if not out.endswith(".ipynb")}
    assert made <= set(tables) | set(figures)
    assert "figures/enron_topic_words.png" in figures
    with pytest.raises(ValueError, match="dataset: NAME"):
        runner.collected_paths({"prepare_topics": {}, "prepare_network": {}})


def _long_chains_module():
    """``profiles/long_chains.py`` as a module (``profiles`` is a folder of scripts)."""
    spec = importlib.util.spec_from_file_location("long_chains",
                                                  ROOT / "profiles" / "long_chains.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_long_chains_summary_reads_the_saved_chains(tmp_path):
    """profiles/long_chains.py: R-hat, ESS, each chain's total rate and a trace figure from a
    saved fit of several chains (here a tiny one)."""
    module = _long_chains_module()
    name = module.fit_name("collapsed", 1, 0)
    assert name == "collapsed_eps1.0_rep0"  # the infer stage's output folder
    y_tilde = np.random.default_rng(1).poisson(1.0, (12, 9)) - 1
    fit = fit_private(y_tilde, 0.5, TopicModel(2),
                      run=RunOptions(n_iter=24, burn_in=8, thin=2, progress=False), rng=3,
                      chains=2)
    save_fit(fit, tmp_path / "fit", data="tiny")
    record = module.summarize(tmp_path / "fit", name, tmp_path / "res", tmp_path / "fig")
    assert record["n_chains"] == 2 and len(record["total_rate"]["last_saved"]) == 2
    assert record["saved_iterations"] == list(range(10, 25, 2))
    assert {"log_joint", "total_rate"} <= set(record["quantities"])
    assert record["rhat_max"] == max(q["r_hat"] for q in record["quantities"].values())
    saved = json.loads((tmp_path / "res" / f"long_{name}.json").read_text())
    assert saved["rhat_max"] == record["rhat_max"]
    assert (tmp_path / "fig" / f"enron_trace_long_{name}.png").stat().st_size > 0


def test_the_long_chains_summary_of_every_fit_writes_one_row_per_fit(tmp_path):
    """profiles/long_chains.py --all-fits: each fit folder under the work tree's topic fits
    (here a private and a non-private one, and a folder that holds no fit) gets its record and
    a row of the summary table."""
    module = _long_chains_module()
    y = np.random.default_rng(2).poisson(1.0, (12, 9))
    fits = tmp_path / "fits"
    save_fit(fit_private(y - 1, 0.5, TopicModel(2),
                         run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False), rng=3,
                         chains=2), fits / "collapsed_eps1.0_rep0",
             data="tiny")
    save_fit(fit_nonprivate(y, TopicModel(2),
                            run=RunOptions(n_iter=16, burn_in=8, thin=2, progress=False), rng=3,
                            chains=2), fits / "nonprivate", data="tiny")
    (fits / "notes").mkdir()
    rows = module.summarize_all(fits, tmp_path / "res", tmp_path / "fig")
    assert [r["fit"] for r in rows] == ["collapsed_eps1.0_rep0", "nonprivate"]
    assert all(r["chains"] == 2 and r["last_sweep"] == 16 and r["saved_per_chain"] == 4
               for r in rows)
    assert {r["log_joint_verdict"] for r in rows} <= {"agree", "drifting", "modes", "unclear"}
    table = (tmp_path / "res" / "topic_fits.csv").read_text().splitlines()
    assert table[0].startswith("fit,chains,last_sweep") and len(table) == 3
    assert (tmp_path / "res" / "long_nonprivate.json").exists()
    with pytest.raises(FileNotFoundError, match="no fit"):
        module.summarize_all(tmp_path / "res", tmp_path / "res", tmp_path / "fig")


#: settings that name no private topic fit (study.reports.named_fits): the runner's tests
#: collect the non-private fit's score record alone
NO_PRIVATE_TOPIC_FITS = {"privacy": {"levels": [1.0]},
                         "topics": {"methods": [], "replicates": []},
                         "vi_topics": {"methods": [], "replicates": []}}


def _collapsed_topic_settings(replicates=(0,)) -> dict:
    """Settings that name the Enron data sets and only the collapsed topic fits at ε/N = 1 of
    ``replicates``, besides the non-private fit."""
    return {"prepare_topics": {"dataset": "enron"}, "prepare_network": {"dataset": "enron"},
            **NO_PRIVATE_TOPIC_FITS,
            "topics": {"methods": ["collapsed"], "replicates": list(replicates)}}


def test_the_paper_run_leaves_out_outputs_of_stages_that_are_not_up_to_date(tmp_path):
    """A work tree moved to another commit holds the quick profile's committed tables where
    its own stood until its report stages run again: collect must not copy those."""
    runner = _profile_runner()
    work, results, figures = tmp_path / "work", tmp_path / "results", tmp_path / "figures"
    settings = {"prepare_topics": {"dataset": "enron"}, "prepare_network": {"dataset": "enron"},
                **NO_PRIVATE_TOPIC_FITS}
    (work / "results" / "eval").mkdir(parents=True)
    (work / "figures").mkdir()
    (work / "params.yaml").write_text(yaml.safe_dump(settings))
    made = {"report_topics": ["results/eval/enron_topics.csv", "figures/enron_topics.png"],
            "report_network": ["results/eval/enron_network.csv", "figures/enron_network.png"]}
    entries = {stage: {"outs": [{"path": p, "hash": "md5", "md5": "m"} for p in paths]}
               for stage, paths in made.items()}
    # a copy the run privatized and no collected output read
    entries["privatize@topics-1.0-3"] = {
        "outs": [{"path": "data/private/topics_eps1.0_rep3", "hash": "md5", "md5": "p"}]}
    (work / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": entries}))
    for path in (p for paths in made.values() for p in paths):
        (work / path).write_text(path)
    (work / runner.STAGE_TIMES).write_text(json.dumps({"report_topics": 5.0,
                                                       "report_network": 3.0}))
    asked = []

    def up_to_date(tree, stage):
        asked.append((tree, stage))
        return stage == "report_network"

    (results / "eval").mkdir(parents=True)
    (results / "eval" / "enron_topics.csv").write_text("the earlier run's table")
    earlier = {"cmd": "the earlier run",
               "outs": [{"path": "results/eval/enron_topics.csv", "hash": "md5", "md5": "e"}]}
    (results / "dvc.lock").write_text(yaml.safe_dump(
        {"schema": "2.0", "stages": {"report_topics": earlier,
                                     "report_network": {"cmd": "the earlier run"},
                                     "privatize@topics-1.0-7": {"cmd": "other settings"}}}))
    runner.collect(work, results, figures, up_to_date=up_to_date,
                   pipeline={"report_topics", "report_network", "privatize@topics-1.0-3"})
    assert {stage for _, stage in asked} >= {"report_network", "report_topics"}
    assert (results / "eval" / "enron_network.csv").read_text() == "results/eval/enron_network.csv"
    assert (figures / "enron_network.png").exists()
    assert (results / "eval" / "enron_topics.csv").read_text() == "the earlier run's table"
    assert not (figures / "enron_topics.png").exists()
    # the settings are always copied, under a header that says whose they are; the lock keeps
    # the earlier run's entry of the stage whose table was not collected
    params = (results / "params.yaml").read_text()
    assert params.startswith("# The settings of the last profiles/run.py")
    assert yaml.safe_load(params) == settings
    lock = yaml.safe_load((results / "dvc.lock").read_text())["stages"]
    assert lock["report_topics"] == earlier
    assert lock["report_network"] == entries["report_network"]
    # an entry of a stage the profile's pipeline does not have describes nothing collected,
    # nor does one whose outputs no collected output was made from
    assert "privatize@topics-1.0-7" not in lock and "privatize@topics-1.0-3" not in lock


def test_the_paper_run_times_each_fit_and_keeps_the_times_of_a_killed_run(tmp_path):
    """profiles/run.py runs a foreach group member by member and records each member's seconds
    in the work tree as it finishes; a later collect copies the times of the stages that are up
    to date there, so a run killed after some stages still reports them."""
    runner = _profile_runner()
    names = ["privatize@topics-1.0-0", "infer_private_topics@collapsed-1.0-0",
             "infer_private_topics@naive-1.0-0", "report_topics"]
    assert runner.stage_items(names, ["infer_private_topics", "report_topics"]) == [
        "infer_private_topics@collapsed-1.0-0", "infer_private_topics@naive-1.0-0",
        "report_topics"]
    assert runner.stage_items(names, None) == names  # --all: the whole pipeline
    assert runner.stage_items(names, ["infer_private_topics@naive-1.0-0"]) == [
        "infer_private_topics@naive-1.0-0"]
    work = tmp_path / "work"
    work.mkdir()
    runner.record_stage_seconds(work, "infer_private_topics@collapsed-1.0-0", 12.5)
    runner.record_stage_seconds(work, "report_topics", 3.0)
    runner.record_stage_seconds(work, "report_topics", 4.0)  # its later run replaces the time
    assert runner.recorded_stage_seconds(work, lambda tree, stage: stage != "report_topics") == {
        "infer_private_topics@collapsed-1.0-0": 12.5}
    assert runner.recorded_stage_seconds(work, lambda tree, stage: True)["report_topics"] == 4.0
    assert runner.recorded_stage_seconds(tmp_path / "elsewhere", lambda tree, stage: True) == {}


def test_a_stage_stopped_and_continued_is_timed_with_all_its_pieces(tmp_path):
    """A fit that a run stopped (Ctrl-C, --stop-after) and a later run finished from its
    checkpoints cost the seconds of every piece: the stopped pieces wait in the work tree until
    the stage is recorded, and are then counted once."""
    runner = _profile_runner()
    runner.record_stopped_piece(tmp_path, "fit@a", 100.0)
    runner.record_stopped_piece(tmp_path, "fit@a", 50.5)
    runner.record_stopped_piece(tmp_path, "fit@b", 7.0)
    assert runner.recorded_stage_seconds(tmp_path, lambda tree, stage: True) == {}
    runner.record_stage_seconds(tmp_path, "fit@a", 30.0)
    assert runner.recorded_stage_seconds(tmp_path, lambda tree, stage: True) == {"fit@a": 180.5}
    runner.record_stage_seconds(tmp_path, "fit@a", 30.0)  # a later rerun: its own time only
    runner.record_stage_seconds(tmp_path, "fit@b", 1.0)
    assert runner.recorded_stage_seconds(tmp_path, lambda tree, stage: True) == {
        "fit@a": 30.0, "fit@b": 8.0}
    assert json.loads((tmp_path / runner.STOPPED_TIMES).read_text()) == {}


def test_the_paper_run_collects_an_up_to_date_entry_its_commit_already_recorded(tmp_path):
    """A stage whose settings are the same in both profiles (the network's preparation, say)
    is up to date in the work tree with the entry its commit's dvc.lock records: that entry
    describes the data the run's other stages read, so it replaces an earlier run's entry.
    An up-to-date stage that no run of the work tree made or read (a benchmark without
    settings, whose output is the quick profile's as the commit holds it) keeps the committed
    entry, table and commit."""
    runner = _profile_runner()
    work, results = tmp_path / "work", tmp_path / "results"
    work.mkdir()
    results.mkdir()
    (work / "params.yaml").write_text(yaml.safe_dump({"prepare_topics": {"dataset": "enron"},
                                                      "prepare_network": {"dataset": "enron"},
                                                      **NO_PRIVATE_TOPIC_FITS}))
    entry = {"cmd": "prepare",
             "outs": [{"path": "data/prepared/network", "hash": "md5", "md5": "new"}]}
    report = {"cmd": "report",
              "deps": [{"path": "data/prepared/network", "hash": "md5", "md5": "new"}],
              "outs": [{"path": "results/eval/enron_network.csv", "hash": "md5", "md5": "t"}]}
    runtime = {"cmd": "bench",
               "outs": [{"path": "results/central/runtime.json", "hash": "md5", "md5": "q"}]}
    lock = {"schema": "2.0", "stages": {"prepare_network": entry, "report_network": report,
                                        "central_runtime": runtime}}
    (work / "dvc.lock").write_text(yaml.safe_dump(lock))
    (work / "results" / "eval").mkdir(parents=True)
    (work / "results" / "eval" / "enron_network.csv").write_text("the table")
    (work / "results" / "central").mkdir(parents=True)
    (work / "results" / "central" / "runtime.json").write_text("the quick profile's timing")
    (work / runner.STAGE_TIMES).write_text(json.dumps({"report_network": 2.0}))
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run(["git", "add", "dvc.lock"], cwd=work, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"],
                   cwd=work, check=True)
    earlier_runtime = {"cmd": "bench",
                       "outs": [{"path": "results/central/runtime.json", "hash": "md5",
                                 "md5": "p"}]}
    (results / "dvc.lock").write_text(yaml.safe_dump(
        {"schema": "2.0", "stages": {"prepare_network": {"cmd": "an earlier run's"},
                                     "central_runtime": earlier_runtime}}))
    (results / "central").mkdir()
    (results / "central" / "runtime.json").write_text("the paper profile's timing")
    (results / "stage_seconds.json").write_text(json.dumps(
        {"stages": {"central_runtime": 30.7}, "revisions": {"central_runtime": "a" * 40}}))
    runner.collect(work, results, tmp_path / "figures", up_to_date=lambda tree, stage: True,
                   pipeline={"prepare_network", "report_network", "central_runtime"})
    assert yaml.safe_load((results / "dvc.lock").read_text())["stages"] == {
        "prepare_network": entry, "report_network": report, "central_runtime": earlier_runtime}
    assert (results / "central" / "runtime.json").read_text() == "the paper profile's timing"
    times = json.loads((results / "stage_seconds.json").read_text())
    assert times["stages"] == {"central_runtime": 30.7, "report_network": 2.0}
    assert times["revisions"]["central_runtime"] == "a" * 40
    assert times["revisions"]["report_network"] == times["machine"]["revision"]


def test_the_paper_run_leaves_out_a_table_no_entry_of_the_work_tree_s_lock_made(tmp_path):
    """A score record the work tree's commit holds (the quick profile's) whose stage the work
    tree's lock does not record (an entry a run at an earlier commit never wrote) is not the
    run's: it is not collected, while the record of a stage the run made is."""
    runner = _profile_runner()
    work, results = tmp_path / "work", tmp_path / "results"
    (work / "results" / "eval" / "enron_topics").mkdir(parents=True)
    names = ["collapsed_eps1.0_rep0", "collapsed_eps1.0_rep1"]
    settings = _collapsed_topic_settings(replicates=(0, 1))
    (work / "params.yaml").write_text(yaml.safe_dump(settings))
    records = [f"results/eval/enron_topics/{name}.json" for name in names]
    assert set(records) <= set(runner.collected_paths(settings)[0])
    for path in records:
        (work / path).write_text(path)
    made = {"cmd": "score", "outs": [{"path": records[0], "hash": "md5", "md5": "r"}]}
    (work / "dvc.lock").write_text(yaml.safe_dump(
        {"schema": "2.0", "stages": {"score_private_topics@collapsed-1.0-0": made}}))
    (work / runner.STAGE_TIMES).write_text(
        json.dumps({"score_private_topics@collapsed-1.0-0": 2.0}))
    results.mkdir()
    runner.collect(work, results, tmp_path / "figures", up_to_date=lambda tree, stage: True,
                   pipeline={"score_private_topics@collapsed-1.0-0",
                             "score_private_topics@collapsed-1.0-1"})
    assert (results / "eval" / "enron_topics" / f"{names[0]}.json").exists()
    assert not (results / "eval" / "enron_topics" / f"{names[1]}.json").exists()
    assert list(yaml.safe_load((results / "dvc.lock").read_text())["stages"]) == [
        "score_private_topics@collapsed-1.0-0"]


def _score_entry(stage: str, *outputs: Path, work_path=lambda path: path) -> dict:
    """A lock entry of ``stage`` recording each of ``outputs`` with its md5."""
    from study.provenance import file_md5

    return {stage: {"cmd": "score", "outs": [
        {"path": work_path(path), "hash": "md5", "md5": file_md5(path)} for path in outputs]}}


def test_collect_drops_a_kept_entry_that_read_what_the_run_remade(tmp_path, capsys):
    """A run that remade a record while the committed report (an earlier run's) read the
    records' folder leaves that report describing the record it replaced; no hash in the lock
    shows it, so the collect drops the report's entry (the provenance check then fails on the
    report until it runs again) and says so. A stage made again to the same bytes replaced
    nothing."""
    runner = _profile_runner()
    work, results = tmp_path / "work", tmp_path / "results"
    settings = _collapsed_topic_settings()
    record = "results/eval/enron_topics/collapsed_eps1.0_rep0.json"
    (work / "results" / "eval" / "enron_topics").mkdir(parents=True)
    (work / "params.yaml").write_text(yaml.safe_dump(settings))
    (work / record).write_text("the new fit's record")
    score = {"cmd": "score", "deps": [{"path": "results/fits/topics/collapsed_eps1.0_rep0",
                                       "hash": "md5", "md5": "new.dir"}],
             "outs": [{"path": record, "hash": "md5", "md5": "r"}]}
    (work / "dvc.lock").write_text(yaml.safe_dump(
        {"schema": "2.0", "stages": {"score_private_topics@collapsed-1.0-0": score}}))
    (work / runner.STAGE_TIMES).write_text(json.dumps({"score_private_topics@collapsed-1.0-0": 9}))
    report = {"cmd": "report", "deps": [{"path": "results/eval/enron_topics", "hash": "md5",
                                         "md5": "records.dir"}],
              "outs": [{"path": "results/eval/enron_topics.csv", "hash": "md5", "md5": "t"}]}
    (results / "eval").mkdir(parents=True)
    (results / "eval" / "enron_topics.csv").write_text("the old report")
    (results / "dvc.lock").write_text(yaml.safe_dump(
        {"schema": "2.0", "stages": {"report_topics": report}}))
    runner.collect(work, results, tmp_path / "figures", up_to_date=lambda tree, stage: True,
                   pipeline={"score_private_topics@collapsed-1.0-0", "report_topics"})
    out = " ".join(capsys.readouterr().out.split())
    assert ("stale: report_topics (an earlier run's entry) read results/eval/enron_topics, which "
            "this run remade (score_private_topics@collapsed-1.0-0): its entry is dropped") in out
    lock = yaml.safe_load((results / "dvc.lock").read_text())["stages"]
    assert list(lock) == ["score_private_topics@collapsed-1.0-0"]
    # collected again, the record it already holds replaced nothing: the report made since
    # from it is not stale
    report["deps"] = [{"path": "results/eval/enron_topics", "hash": "md5", "md5": "new.dir"}]
    (results / "dvc.lock").write_text(yaml.safe_dump(
        {"schema": "2.0", "stages": {**lock, "report_topics": report}}))
    runner.collect(work, results, tmp_path / "figures", up_to_date=lambda tree, stage: True,
                   pipeline={"score_private_topics@collapsed-1.0-0", "report_topics"})
    assert "stale:" not in capsys.readouterr().out
    assert "report_topics" in yaml.safe_load((results / "dvc.lock").read_text())["stages"]


def test_a_piece_restores_the_collected_records_without_writing_through_a_cache_link(tmp_path):
    """--restore-scores puts the outputs that the pieces' lock records for score stages back
    where the score stages and the report read them; a file there that is a hard link to DVC's
    cache is replaced, the cache's copy untouched; one with the pieces' bytes stays; a record
    the work tree's own run made that the pieces do not hold stops the restore before it copies
    anything; other collected tables stay where they are."""
    runner = _profile_runner()
    work, pieces = tmp_path / "work", tmp_path / "pieces"
    settings = _collapsed_topic_settings(replicates=(0, 1))
    work.mkdir()
    (work / "params.yaml").write_text(yaml.safe_dump(settings))
    kept = pieces / "eval" / "enron_topics"
    kept.mkdir(parents=True)
    (pieces / "params.yaml").write_text("# collected\n" + yaml.safe_dump(settings))
    names = ("collapsed_eps1.0_rep0.json", "collapsed_eps1.0_rep1.json", "nonprivate.json",
             "nonprivate_topics.npy")
    for name in names:
        (kept / name).write_text(f"the piece's {name}")
    (pieces / "eval" / "enron_topics.csv").write_text("an earlier report")
    in_work = lambda path: f"results/eval/enron_topics/{path.name}"  # noqa: E731
    (pieces / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {
        **_score_entry("score_nonprivate_topics", kept / "nonprivate.json",
                       kept / "nonprivate_topics.npy", work_path=in_work),
        **_score_entry("score_private_topics@collapsed-1.0-0", kept / names[0],
                       work_path=in_work),
        **_score_entry("score_private_topics@collapsed-1.0-1", kept / names[1],
                       work_path=in_work),
        **_score_entry("report_topics", pieces / "eval" / "enron_topics.csv",
                       work_path=lambda path: "results/eval/enron_topics.csv")}}))
    cache = tmp_path / "cache"
    cache.write_text("the cache's reference")
    scores = work / "results" / "eval" / "enron_topics"
    scores.mkdir(parents=True)
    (scores / "nonprivate_topics.npy").hardlink_to(cache)
    # the work tree's own run made copy 1's record (timed, the file its lock records): the
    # pieces hold another, so the restore stops before copying anything
    (scores / names[1]).write_text("the work tree's own record")
    (work / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": _score_entry(
        "score_private_topics@collapsed-1.0-1", scores / names[1], work_path=in_work)}))
    (work / runner.STAGE_TIMES).write_text(json.dumps(
        {"score_private_topics@collapsed-1.0-1": 400.0}))
    with pytest.raises(ValueError, match=f"{names[1]}: the work tree's own run made it.*"
                                         "--collect-only"):
        runner.restore_scores(work, pieces)
    assert not (scores / names[0]).exists()
    # the same file, collected into the pieces, stays as it is
    (kept / names[1]).write_text("the work tree's own record")
    (pieces / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {
        **yaml.safe_load((pieces / "dvc.lock").read_text())["stages"],
        **_score_entry("score_private_topics@collapsed-1.0-1", kept / names[1],
                       work_path=in_work)}}))
    restored = runner.restore_scores(work, pieces)
    assert sorted(restored) == [f"results/eval/enron_topics/{name}" for name in (
        names[0], "nonprivate.json", "nonprivate_topics.npy")]
    assert (scores / "nonprivate_topics.npy").read_text() == "the piece's nonprivate_topics.npy"
    assert cache.read_text() == "the cache's reference"
    assert (scores / names[0]).read_text() == f"the piece's {names[0]}"
    assert not (work / "results" / "eval" / "enron_topics.csv").exists()
    # a timed stage whose file is not the one its lock records (the commit's, checked out over
    # it) made nothing there: the pieces' copy replaces it
    (scores / names[1]).write_text("the quick profile's record")
    assert runner.restore_scores(work, pieces) == [f"results/eval/enron_topics/{names[1]}"]
    # a collected record that is not the file the pieces' lock records is refused, named
    (kept / names[0]).write_text("changed since it was collected")
    with pytest.raises(ValueError, match=f"{names[0]}: changed since .* records it"):
        runner.restore_scores(work, pieces)
    (kept / names[0]).write_text(f"the piece's {names[0]}")
    # records and reference of another run's settings are refused
    (work / "params.yaml").write_text(yaml.safe_dump({**settings, "topics": {"K": 5}}))
    with pytest.raises(ValueError, match=r"other settings .*\(topics\)"):
        runner.restore_scores(work, pieces)


def test_a_piece_without_the_reference_topics_stops_before_any_stage(tmp_path, capsys):
    """Pieces that record no reference topics (the non-private fit's piece not collected yet)
    leave a fresh work tree without what every private fit's score stage reads: the run stops
    with the reason before a stage runs, rather than score against another reference."""
    runner = _profile_runner()
    work, pieces = tmp_path / "work", tmp_path / "pieces"
    settings = _collapsed_topic_settings()
    kept = pieces / "eval" / "enron_topics"
    kept.mkdir(parents=True)
    (pieces / "params.yaml").write_text(yaml.safe_dump(settings))
    (kept / "collapsed_eps1.0_rep0.json").write_text("a record")
    (pieces / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": _score_entry(
        "score_private_topics@collapsed-1.0-0", kept / "collapsed_eps1.0_rep0.json",
        work_path=lambda path: f"results/eval/enron_topics/{path.name}")}))
    profile = tmp_path / "profile.yaml"
    profile.write_text(yaml.safe_dump(settings))
    ran = []
    runner._work_tree = lambda path: path.mkdir(exist_ok=True)
    runner.merged_settings = lambda profile, cuts: settings
    runner.run_stages = lambda *args, **kwargs: ran.append(args)
    with pytest.raises(SystemExit):
        runner.main(["--work-tree", str(work), "--results", str(pieces), "--figures",
                     str(tmp_path / "figures"), "--restore-scores", "--single-item",
                     "--stages", "score_private_topics@collapsed-1.0-0"])
    error = " ".join(capsys.readouterr().err.split())  # argparse wraps its message
    assert "--restore-scores:" in error and "record no nonprivate_topics.npy" in error
    assert "results/eval/enron_topics/nonprivate_topics.npy" in error
    assert not ran


def test_the_finished_pieces_merge_into_the_results_they_complete(tmp_path):
    """--merge-into: the pieces' files, lock entries, stage times and commits replace the same
    ones of the results; an earlier run's entry of the study that describes nothing left is
    dropped, the other studies' entries and times stay; the pieces, collected inside the
    results as the documentation has them, are removed."""
    runner = _profile_runner()
    results, figures = tmp_path / "results", tmp_path / "figures"
    pieces, pieces_figures = results / "pieces", figures / "pieces"
    settings = _collapsed_topic_settings()
    record = "results/eval/enron_topics/collapsed_eps1.0_rep0.json"
    fit = {"cmd": "infer new", "outs": [{"path": "results/fits/topics/collapsed_eps1.0_rep0",
                                         "hash": "md5", "md5": "f2"}]}
    score = {"cmd": "score", "deps": [{"path": "results/fits/topics/collapsed_eps1.0_rep0",
                                       "hash": "md5", "md5": "f2"}],
             "outs": [{"path": record, "hash": "md5", "md5": "r"}]}
    report = {"cmd": "report", "deps": [{"path": record, "hash": "md5", "md5": "r"}],
              "outs": [{"path": "results/eval/enron_topics.csv", "hash": "md5", "md5": "t2"}]}
    (pieces / "eval" / "enron_topics").mkdir(parents=True)
    (pieces / "eval" / "enron_topics" / "collapsed_eps1.0_rep0.json").write_text("{}")
    (pieces / "eval" / "enron_topics.csv").write_text("the new table")
    (pieces / "params.yaml").write_text(yaml.safe_dump(settings))
    (pieces / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {
        "infer_private_topics@collapsed-1.0-0": fit, "score_private_topics@collapsed-1.0-0": score,
        "report_topics": report}}))
    new, old = "b" * 40, "a" * 40
    (pieces / "stage_seconds.json").write_text(json.dumps({
        "machine": {"revision": new}, "stages": {"infer_private_topics@collapsed-1.0-0": 9.0},
        "revisions": dict.fromkeys(["infer_private_topics@collapsed-1.0-0",
                                    "score_private_topics@collapsed-1.0-0", "report_topics"],
                                   new)}))
    pieces_figures.mkdir(parents=True)
    (pieces_figures / "enron_topics.png").write_text("the new figure")
    # the results: the study made by an earlier run (its report read a fit that the pieces
    # replaced, and a fit of a copy the settings no longer name), the network by another
    old_fit = {"cmd": "infer old", "outs": [{"path": "results/fits/topics/collapsed_eps1.0_rep9",
                                             "hash": "md5", "md5": "f9"}]}
    network = {"cmd": "report network",
               "outs": [{"path": "results/eval/enron_network.csv", "hash": "md5", "md5": "n"}]}
    (results / "eval").mkdir(parents=True)
    (results / "params.yaml").write_text("# the last run's\n" + yaml.safe_dump(settings))
    (results / "eval" / "enron_topics.csv").write_text("the old table")
    (results / "eval" / "enron_network.csv").write_text("the network")
    (results / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {
        "infer_private_topics@collapsed-1.0-9": old_fit, "report_topics": {"cmd": "old"},
        "report_network": network}}))
    (results / "stage_seconds.json").write_text(json.dumps({
        "machine": {"revision": old}, "stages": {"report_topics": 5.0, "report_network": 1.0},
        "revisions": {"report_topics": old, "report_network": old,
                      "infer_private_topics@collapsed-1.0-9": old}}))
    runner.merge_pieces(pieces, pieces_figures, results, figures)
    lock = yaml.safe_load((results / "dvc.lock").read_text())["stages"]
    assert lock == {"report_topics": report, "report_network": network,
                    "infer_private_topics@collapsed-1.0-0": fit,
                    "score_private_topics@collapsed-1.0-0": score}
    assert (results / "eval" / "enron_topics.csv").read_text() == "the new table"
    assert (results / "eval" / "enron_topics" / "collapsed_eps1.0_rep0.json").exists()
    assert (figures / "enron_topics.png").read_text() == "the new figure"
    assert yaml.safe_load((results / "params.yaml").read_text()) == settings
    times = json.loads((results / "stage_seconds.json").read_text())
    assert times["stages"] == {"report_network": 1.0, "infer_private_topics@collapsed-1.0-0": 9.0}
    assert times["revisions"] == {"report_topics": new, "report_network": old,
                                  "infer_private_topics@collapsed-1.0-0": new,
                                  "score_private_topics@collapsed-1.0-0": new}
    assert not pieces.exists() and not pieces_figures.exists()
    with pytest.raises(FileNotFoundError, match="no collected stages"):
        runner.merge_pieces(pieces, pieces_figures, results, figures)
    # results inside the pieces (the two swapped), which the merge would remove, are refused
    # before anything is touched
    with pytest.raises(ValueError, match="must not be the pieces or lie inside them"):
        runner.merge_pieces(results, figures, results / "pieces", figures / "pieces")
    with pytest.raises(ValueError, match="must not be the pieces or lie inside them"):
        runner.merge_pieces(pieces, pieces_figures, results, pieces / "figures")
    assert (results / "dvc.lock").exists() and figures.exists()
    # pieces made under other settings than the results' are refused, nothing merged
    pieces.mkdir()
    (pieces / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {
        "report_topics": {"cmd": "another"}}}))
    (pieces / "params.yaml").write_text(yaml.safe_dump({**settings, "topics": {"K": 5}}))
    with pytest.raises(ValueError, match=r"other settings .*\(topics\)"):
        runner.merge_pieces(pieces, pieces_figures, results, figures)
    assert yaml.safe_load((results / "dvc.lock").read_text())["stages"]["report_topics"] == report


def test_a_merge_that_would_keep_a_stale_entry_or_lose_a_file_is_refused(tmp_path):
    """Pieces that remade a fit but not the report that read the fits' folder would leave the
    report's entry describing the fit they replaced, which no hash in the lock reveals: the
    merge names the report and changes nothing. A file under the pieces that is no collected
    output, which the merge's removal of the pieces would lose, is refused too."""
    runner = _profile_runner()
    results, figures = tmp_path / "results", tmp_path / "figures"
    pieces, pieces_figures = results / "pieces", figures / "pieces"
    settings = _collapsed_topic_settings()
    fit_path = "results/fits/topics/collapsed_eps1.0_rep0"
    fit = lambda md5: {"cmd": "infer", "outs": [  # noqa: E731
        {"path": fit_path, "hash": "md5", "md5": md5}]}
    report = {"cmd": "report", "deps": [{"path": "results/fits/topics", "hash": "md5",
                                         "md5": "folder.dir"}],
              "outs": [{"path": "results/eval/enron_topics.csv", "hash": "md5", "md5": "t"}]}
    for folder, stages in ((results, {"infer_private_topics@collapsed-1.0-0": fit("old"),
                                      "report_topics": report}),
                           (pieces, {"infer_private_topics@collapsed-1.0-0": fit("new")})):
        (folder / "eval").mkdir(parents=True)
        (folder / "params.yaml").write_text(yaml.safe_dump(settings))
        (folder / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": stages}))
    (results / "eval" / "enron_topics.csv").write_text("the report of the old fit")
    before = (results / "dvc.lock").read_text()
    # pieces that made the fit again to the same bytes replaced nothing the report read
    (pieces / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {
        "infer_private_topics@collapsed-1.0-0": fit("old")}}))
    runner.merge_pieces(pieces, pieces_figures, results, figures)
    assert "report_topics" in yaml.safe_load((results / "dvc.lock").read_text())["stages"]
    (results / "dvc.lock").write_text(before)
    (pieces / "eval").mkdir(parents=True)
    (pieces / "params.yaml").write_text(yaml.safe_dump(settings))
    (pieces / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {
        "infer_private_topics@collapsed-1.0-0": fit("new")}}))
    with pytest.raises(ValueError, match="report_topics read results/fits/topics, which the "
                                         r"pieces remade \(infer_private_topics@collapsed-1.0-0\)"):
        runner.merge_pieces(pieces, pieces_figures, results, figures)
    assert (results / "dvc.lock").read_text() == before and pieces.exists()
    # with the report remade in the pieces, a stray file under them is still refused
    (pieces / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {
        "infer_private_topics@collapsed-1.0-0": fit("new"), "report_topics": report}}))
    (pieces / "eval" / "enron_topics.csv").write_text("the report of the new fit")
    (pieces / "eval" / "notes.txt").write_text("someone's notes")
    with pytest.raises(ValueError, match=r"notes\.txt: not an output the pieces' settings "):
        runner.merge_pieces(pieces, pieces_figures, results, figures)
    assert (results / "dvc.lock").read_text() == before
    (pieces / "eval" / "notes.txt").unlink()
    runner.merge_pieces(pieces, pieces_figures, results, figures)
    assert (results / "eval" / "enron_topics.csv").read_text() == "the report of the new fit"
    assert not pieces.exists()


def test_the_work_tree_links_its_outputs_to_the_cache_unless_told_otherwise(tmp_path):
    """A copy of every output beside the cache would hold the paper profile's fits twice: the
    runner sets a linking cache type in the work tree's local config, once, and keeps one the
    user set there. A stage's output then shares its file with the cache: a cache type led by
    ``reflink`` copied every folder output on ext4."""
    runner = _profile_runner()
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    dvc = [sys.executable, "-m", "dvc"]
    subprocess.run([*dvc, "init", "-q"], cwd=work, check=True)

    def cache_type():
        return subprocess.run([*dvc, "config", "--local", "cache.type"], cwd=work,
                              capture_output=True, text=True).stdout.strip()

    runner.link_cache(work)
    assert cache_type() == runner.CACHE_TYPE
    assert "config.local" not in subprocess.run(["git", "status", "--porcelain"], cwd=work,
                                                capture_output=True, text=True).stdout
    # a folder output, as a fit is (DVC links a single file's output whatever the order)
    make = ("python -c \"import os; os.makedirs('fit'); "
            "open('fit/fit.npz', 'wb').write(bytes(4096))\"")
    subprocess.run([*dvc, "stage", "add", "-q", "-n", "make", "-o", "fit", make], cwd=work,
                   check=True)
    subprocess.run([*dvc, "repro", "-q"], cwd=work, check=True)
    assert (work / "fit" / "fit.npz").stat().st_nlink == 2
    subprocess.run([*dvc, "config", "--local", "cache.type", "copy"], cwd=work, check=True)
    runner.link_cache(work)
    assert cache_type() == "copy"
    # the order that copies on ext4, as the runner once set it, is replaced
    subprocess.run([*dvc, "config", "--local", "cache.type", "reflink,hardlink,copy"], cwd=work,
                   check=True)
    runner.link_cache(work)
    assert cache_type() == runner.CACHE_TYPE


def test_the_collected_stage_times_describe_only_the_stages_of_the_lock(tmp_path):
    """The committed stage times keep the stages the collected lock records (a rerun's new
    times replacing the earlier ones), drop the rest and any other note of an earlier run, and
    name the machine and the work tree's revision; each stage's commit is the work tree's for
    the stages whose entries the run took (fresh), the earlier record's for the others (a
    record of one run: its machine's revision)."""
    runner = _profile_runner()
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    (work / "lpp").mkdir()
    (work / "lpp" / "code.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "."], cwd=work, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"],
                   cwd=work, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True,
                            text=True, check=True).stdout.strip()
    times = tmp_path / "stage_seconds.json"
    earlier = "f" * 40
    times.write_text(json.dumps({"note": "an earlier run on another machine",
                                 "machine": {"revision": earlier},
                                 "stages": {"fit@a": 10.0, "fit@b": 20.0, "gone@x": 5.0}}))
    runner.collect_stage_seconds(times, {"fit@a": 11.5}, {"fit@a": {}, "fit@b": {}}, work,
                                 fresh={"fit@a"})
    record = json.loads(times.read_text())
    assert set(record) == {"machine", "stages", "revisions"}
    assert record["stages"] == {"fit@a": 11.5, "fit@b": 20.0}
    assert record["machine"]["revision"] == commit
    assert record["revisions"] == {"fit@a": commit, "fit@b": earlier}
    assert "numba_threads" not in record["machine"] and record["machine"]["cpu_count"] >= 1
    (work / "lpp" / "code.py").write_text("x = 2\n")
    runner.collect_stage_seconds(times, {}, {"fit@a": {}, "fit@b": {}}, work, fresh={"fit@b"})
    record = json.loads(times.read_text())
    assert record["stages"] == {"fit@a": 11.5, "fit@b": 20.0}
    assert record["machine"]["revision"] == commit + "+changes"
    # the earlier record's commits stay; the fresh stage is the uncommitted code's
    assert record["revisions"] == {"fit@a": commit, "fit@b": commit + "+changes"}
    # nothing recorded and nothing to record: no file is made
    runner.collect_stage_seconds(tmp_path / "none.json", {"gone@x": 1.0}, {"fit@a": {}}, work)
    assert not (tmp_path / "none.json").exists()


def test_the_paper_run_times_only_the_stages_dvc_reran(tmp_path, monkeypatch):
    """run_stages records a member's seconds when ``dvc repro`` changed its lock entry; a
    member DVC skipped keeps the time of the run that made it."""
    runner = _profile_runner()
    work = tmp_path
    lock = {"schema": "2.0", "stages": {"fit@a": {"cmd": "old"}, "fit@b": {"cmd": "same"}}}
    (work / "dvc.lock").write_text(yaml.safe_dump(lock))
    runner.record_stage_seconds(work, "fit@b", 99.0)
    ran = []

    def fake_repro(args, cwd, check):
        ran.append(args[-1])
        if args[-1] == "fit@a":  # DVC reran it: its entry changes
            lock["stages"]["fit@a"] = {"cmd": "new"}
            (work / "dvc.lock").write_text(yaml.safe_dump(lock))

    monkeypatch.setattr(runner, "_dvc", lambda tree, *args: "fit@a\nfit@b\nother\n")
    monkeypatch.setattr(runner.subprocess, "run", fake_repro)
    runner.run_stages(work, ["fit"])
    assert ran == ["fit@a", "fit@b"]
    recorded = runner.recorded_stage_seconds(work, lambda tree, stage: True)
    assert set(recorded) == {"fit@a", "fit@b"} and recorded["fit@b"] == 99.0
    assert 0 <= recorded["fit@a"] < 99.0


def test_the_paper_run_with_jobs_hands_the_stages_to_the_scheduler(tmp_path, monkeypatch):
    """run_stages with jobs > 1 (or a cluster) runs no ``dvc repro``: profiles/jobs.py gets
    the stages, a group member by member, and each stage's own seconds are recorded as it
    is, and so does a serial run with a time limit; the exit status names a failure (1),
    Ctrl-C (130) or the time limit (124), and the options are checked."""
    runner = _profile_runner()
    scheduler = runner.scheduler
    work = tmp_path
    calls = []

    def fake_pipeline(root, targets, **options):
        calls.append((root, targets, {k: v for k, v in options.items()
                                      if k not in ("on_done", "on_stopped")}))
        options["on_stopped"]("fit@b", 5.0)
        options["on_done"]("fit@a", 12.34)
        return {"fit@a": 12.34}

    monkeypatch.setattr(runner, "_dvc", lambda tree, *args: "fit@a\nfit@b\nother\n")
    monkeypatch.setattr(runner.subprocess, "run", lambda *a, **k: pytest.fail("dvc repro ran"))
    monkeypatch.setattr(scheduler, "run_pipeline", fake_pipeline)
    runner.run_stages(work, ["fit", "other"], True, jobs=3, threads_per_job=2)
    assert calls == [(work, ["fit@a", "fit@b", "other"],
                      {"single_item": True, "jobs": 3, "cluster": None, "threads_per_job": 2,
                       "stop_after": None})]
    assert runner.recorded_stage_seconds(work, lambda tree, stage: True) == {"fit@a": 12.3}
    assert json.loads((work / runner.STOPPED_TIMES).read_text()) == {"fit@b": 5.0}
    runner.run_stages(work, ["fit"], cluster="tcp://host:8786")
    assert calls[-1][2]["cluster"] == "tcp://host:8786" and calls[-1][2]["jobs"] == 1
    runner.run_stages(work, ["other"], stop_after=600.0)
    assert calls[-1][1:] == (["other"], {"single_item": False, "jobs": 1, "cluster": None,
                                         "threads_per_job": None, "stop_after": 600.0})

    def failing(root, targets, **options):
        raise scheduler.StagesFailed({"fit@a": "exit 1"}, {"other": "fit@a"})

    monkeypatch.setattr(scheduler, "run_pipeline", failing)
    assert runner._run_in_parallel(work, ["fit"], False, 2, None, None) == 1

    def interrupted(root, targets, **options):
        raise KeyboardInterrupt

    monkeypatch.setattr(scheduler, "run_pipeline", interrupted)
    assert runner._run_in_parallel(work, ["fit"], False, 2, None, None) == 130

    def timed_out(root, targets, **options):
        raise scheduler.TimeLimitReached("stopped at the time limit; 3 stages did not start")

    monkeypatch.setattr(scheduler, "run_pipeline", timed_out)
    assert runner._run_in_parallel(work, ["fit"], False, 1, None, None, 60.0) == 124
    for wrong in (["--jobs", "0"], ["--jobs", "2", "--cluster", "tcp://host:8786"]):
        with pytest.raises(SystemExit):
            runner.main(["--work-tree", str(tmp_path / "never"), *wrong])
    assert not (tmp_path / "never").exists()


def test_the_merged_lock_takes_the_work_trees_entries_of_fresh_stages_only():
    runner = _profile_runner()
    committed = {"schema": "2.0", "stages": {"a": {"cmd": "old a"}, "b": {"cmd": "old b"}}}
    work = {"schema": "2.0", "stages": {"a": {"cmd": "new a"}, "b": {"cmd": "quick b"},
                                        "c": {"cmd": "new c"}}}
    merged = runner.merged_lock(work, committed, fresh={"a", "c"})
    assert merged["stages"] == {"a": {"cmd": "new a"}, "b": {"cmd": "old b"},
                                "c": {"cmd": "new c"}}
    assert runner.merged_lock(work, None, fresh=set())["stages"] == {}
    assert runner.merged_lock(None, committed, fresh={"a"})["stages"] == committed["stages"]
    kept = runner.merged_lock(work, committed, fresh={"a", "c"}, pipeline={"a", "c"})
    assert kept["stages"] == {"a": {"cmd": "new a"}, "c": {"cmd": "new c"}}


def test_continue_chains_sets_aside_only_fits_whose_data_did_not_change():
    """profiles/run.py --continue-chains: an inference stage whose command or code changed (more
    sweeps, newer lpp) continues its fits; one whose data changed, or whose fit was modified,
    starts over, and stages not asked for are left alone."""
    runner = _profile_runner()
    fits = {"infer_private_topics@collapsed-1.0-0": "results/fits/topics/collapsed_eps1.0_rep0",
            "infer_private_topics@naive-1.0-0": "results/fits/topics/naive_eps1.0_rep0",
            "infer_private_topics@naive-2.0-0": "results/fits/topics/naive_eps2.0_rep0",
            "infer_nonprivate_topics": "results/fits/topics/nonprivate",
            "infer_private_network@collapsed-5-1.0-0": "results/fits/network/c"}
    lock = {"stages": {stage: {"cmd": f"python -m study.notebook nb.ipynb out.ipynb -p "
                                      f"{'counts' if 'nonprivate' in stage else 'private'}_dir "
                                      f"data/{stage} -p out_dir {path}",
                               "deps": [{"path": "lpp"}, {"path": f"data/{stage}/counts.npz"}],
                               "outs": [{"path": path}, {"path": "results/notebooks/x.ipynb"}]}
                       for stage, path in fits.items()}}
    status = {
        "infer_private_topics@collapsed-1.0-0": ["changed command",
                                                 {"changed deps": {"lpp": "modified"}}],
        "infer_private_topics@naive-1.0-0": [
            {"changed deps": {"data/private/topics/eps1.0_rep0": "modified"}}],
        "infer_private_topics@naive-2.0-0": [{"changed outs": {fits[
            "infer_private_topics@naive-2.0-0"]: "modified"}}, "changed command"],
        "infer_nonprivate_topics": ["changed command"],
        "infer_private_network@collapsed-5-1.0-0": ["changed command"],
        "report_topics": ["changed command"],
    }
    chosen = runner.continuable_fits(status, lock, ["infer_private_topics",
                                                    "infer_nonprivate_topics", "report_topics"])
    assert chosen == {stage: (f"data/{stage}", [fits[stage]])
                      for stage in ("infer_private_topics@collapsed-1.0-0",
                                    "infer_nonprivate_topics")}


def test_the_long_chains_records_go_with_the_investigations_not_the_paper_profile(
        tmp_path, monkeypatch):
    """profiles/long_chains.py runs outside the pipeline, so by default its records and trace
    figures go to experiments/results/long_chains/, outside the folders whose every file must
    be an output of the paper profile's lock; --results and --figures still choose others."""
    module = _long_chains_module()
    written_to = []
    monkeypatch.setattr(module, "summarize_all",
                        lambda fits, results, figures: written_to.append((results, figures))
                        or [])
    module.main(["--all-fits", "--work-tree", str(tmp_path)])
    module.main(["--all-fits", "--work-tree", str(tmp_path),
                 "--results", str(tmp_path / "res"), "--figures", str(tmp_path / "fig")])
    records = ROOT / "experiments" / "results" / "long_chains"
    assert written_to == [(records, records), (tmp_path / "res", tmp_path / "fig")]
    paper_roots = [ROOT / root for root in paper_layout(ROOT).roots]
    assert not any(root == records or root in records.parents for root in paper_roots)


def test_every_cached_output_is_ignored_by_git_before_dvc_lists_it(tmp_path):
    """DVC lists an output in a ``.gitignore`` only once its stage succeeded; a stage that
    fails leaves its outputs unlisted, where a ``git add`` would commit true counts, private
    copies, fits or executed notebooks. The repository's own ``.gitignore`` covers every cached
    output under settings that name new ones (other levels, copies, methods and C)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")

    _work_tree(tmp_path, yaml.safe_dump(_other_settings(), sort_keys=False))
    with Repo(str(tmp_path)) as repo:
        cached = sorted({o.def_path for s in repo.index.stages for o in s.outs if o.use_cache})
    assert any("eps0.5_rep1" in out for out in cached) and any("bessel" in out for out in cached)
    # a folder output (eps0.5_rep1 has no file type) is checked by a file in it: a pattern may
    # name folders only
    files = (".npz", ".json", ".ipynb", ".csv", ".png")
    probes = [out if out.endswith(files) else f"{out}/fit.npz" for out in cached]
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT,
                             input="\n".join(probes), capture_output=True, text=True).stdout
    assert sorted(set(probes) - set(ignored.split())) == []
