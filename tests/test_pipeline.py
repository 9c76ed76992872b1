"""The pipeline's privacy boundary, read from its DVC dependency graph.

True counts live under ``data/raw`` and ``data/prepared``. The ``privatize`` stages (the data
owners' side) are the only bridge from them to ``data/private``. No private inference stage
may reach a true-count file, directly or through any chain of stages, except through a
``privatize`` stage; and the private notebook must not load true counts itself.
"""
import json
from pathlib import Path, PurePosixPath

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
TRUE_COUNTS = ("data/raw", "data/prepared")
BRIDGE = "privatize"


def _is_under(path, roots):
    path = PurePosixPath(path)
    return any(path == PurePosixPath(r) or PurePosixPath(r) in path.parents for r in roots)


def _graph(dvc_yaml):
    """{stage name: (deps, outs)} with matrix stages expanded by DVC itself."""
    from dvc.repo import Repo

    with Repo(str(dvc_yaml.parent)) as repo:
        stages = repo.index.stages
        return {s.addressing.split(":")[-1]: ([d.def_path for d in s.deps],
                                              [o.def_path for o in s.outs]) for s in stages}


def _producers(graph):
    return {out: name for name, (_, outs) in graph.items() for out in outs}


def _reaches_true_counts(stage, graph, producers, seen=None):
    """The dependency paths of ``stage`` that end in true counts without crossing privatize."""
    seen = set() if seen is None else seen
    found = []
    for dep in graph[stage][0]:
        if _is_under(dep, TRUE_COUNTS):
            found.append([stage, dep])
            continue
        for out, producer in producers.items():
            related = _is_under(out, [dep]) or _is_under(dep, [out])
            if not related or producer in seen or producer.split("@")[0] == BRIDGE:
                continue
            seen.add(producer)
            found += [[stage] + chain for chain in _reaches_true_counts(producer, graph, producers, seen)]
    return found


def _private_stages(graph):
    return [n for n in graph if n.startswith("infer_private")]


@pytest.fixture(scope="module")
def graph():
    return _graph(ROOT / "dvc.yaml")


def test_private_inference_never_depends_on_true_counts(graph):
    private = _private_stages(graph)
    assert private, "no private inference stage in dvc.yaml"
    producers = _producers(graph)
    for stage in private:
        chains = _reaches_true_counts(stage, graph, producers)
        assert not chains, f"{stage} reaches true counts: {chains}"
        assert any(d.startswith("data/private/") for d in graph[stage][0])


def test_only_privatize_writes_private_data(graph):
    writers = {name for name, (_, outs) in graph.items() if any(o.startswith("data/private") for o in outs)}
    assert writers and all(name.split("@")[0] == BRIDGE for name in writers)


def test_the_check_catches_a_leak(tmp_path):
    """A private stage that depends on a file derived from the true counts must be caught."""
    leaky = {"stages": {
        "prepare": {"cmd": "x", "deps": ["data/raw/a"], "outs": ["data/prepared/t"]},
        "summarise": {"cmd": "x", "deps": ["data/prepared/t"], "outs": ["results/stats.json"]},
        "privatize": {"cmd": "x", "deps": ["data/prepared/t"], "outs": ["data/private/p"]},
        "infer_private_x": {"cmd": "x", "deps": ["data/private/p", "results/stats.json"],
                            "outs": ["results/fit"]},
    }}
    (tmp_path / ".dvc").mkdir()
    (tmp_path / ".dvc" / "config").write_text("[core]\n    no_scm = true\n")
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump(leaky))
    leaked = _graph(tmp_path / "dvc.yaml")
    chains = _reaches_true_counts("infer_private_x", leaked, _producers(leaked))
    assert chains == [["infer_private_x", "summarise", "data/prepared/t"]]


def test_private_notebook_reads_no_true_counts():
    nb = json.loads((ROOT / "notebooks" / "infer_private.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    for forbidden in ("data_prep", "load_counts", "data/prepared", "data/raw", "fit_nonprivate"):
        assert forbidden not in code, f"infer_private.ipynb mentions {forbidden}"


def test_profiles_have_the_same_settings():
    def keys(tree, prefix=""):
        return {prefix + k for k in tree} | {
            x for k, v in tree.items() if isinstance(v, dict) for x in keys(v, f"{prefix}{k}.")}
    quick = yaml.safe_load((ROOT / "params.yaml").read_text())
    paper = yaml.safe_load((ROOT / "profiles" / "paper.yaml").read_text())
    assert keys(quick) == keys(paper)
    assert paper["prepare_topics"]["n_docs"] == 10_000 and paper["topics"]["K"] == 50
