"""Source notebooks stay clean and agree with the pipeline that runs them.

Each notebook in notebooks/ is saved without outputs, with kernelspec ``python3`` (papermill
starts it with the interpreter that runs papermill) and exactly one cell tagged
``parameters``; every ``-p NAME`` that dvc.yaml passes to a notebook must be a variable
that notebook's parameters cell defines (papermill would silently inject an unknown name).
"""
import json
import shlex
from pathlib import Path

import pytest
import yaml

from study.notebook import collect_parameters, parameter_names

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_a_clean_source(path):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), \
        "commit notebooks without outputs"
    parameter_names(path)  # exactly one parameters cell, and it parses
    assert "papermill" not in nb["metadata"], "an executed notebook was committed as source"


def _notebook_calls():
    """(stage, notebook, --section, [-p names]) for every ``python -m study.notebook`` command."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for name, stage in stages.items():
        words = shlex.split(stage["cmd"])
        for i, word in enumerate(words[:-2]):
            if word == "-m" and words[i + 1] == "study.notebook":
                args = words[i + 2:]
                section = args[args.index("--section") + 1] if "--section" in args else None
                passed = [args[j + 1] for j, a in enumerate(args) if a == "-p"]
                yield name, args[0], section, passed


def test_pipeline_runs_notebooks_with_parameters_they_define():
    calls = list(_notebook_calls())
    assert len(calls) >= 6, "dvc.yaml runs fewer notebooks than expected"
    for stage, notebook, section, passed in calls:
        assert (ROOT / notebook).is_file(), f"stage {stage}: {notebook} does not exist"
        # raises on a parameter the notebook does not define (DVC's ${...} values are dummies)
        collect_parameters(ROOT / notebook, section, [(n, "0") for n in passed],
                           params_file=ROOT / "params.yaml")


def test_a_misspelt_parameter_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no parameter"):
        collect_parameters(NOTEBOOKS[0], None, [("no_such_parameter", "1")])


#: the stages whose notebooks fit the topic model by Gibbs sampling: the only ones that take
#: the ``topics.device`` setting (the network, VI, synthetic and central stages run on the CPU)
TOPIC_FIT_STAGES = {"infer_private_topics", "infer_nonprivate_topics",
                    "infer_private_chains_topics", "infer_nonprivate_chains_topics"}


def test_the_device_setting_reaches_the_topic_fits_only():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    passed = {}
    for name, stage in stages.items():
        words = shlex.split(stage["cmd"])
        passed[name] = {words[i + 1]: words[i + 2] for i, word in enumerate(words[:-2])
                        if word == "-p"}
    topic_fits = {name for name, params in passed.items()
                  if params.get("model") == "topics" and "notebooks/infer_" in stages[name]["cmd"]
                  and "infer_vi" not in stages[name]["cmd"]}
    assert topic_fits == TOPIC_FIT_STAGES
    with_device = {name: params["device"] for name, params in passed.items()
                   if "device" in params}
    assert with_device == dict.fromkeys(TOPIC_FIT_STAGES, "${topics.device}")
    # both profiles run them on the CPU unless asked: the default changes no output
    for profile in ("params.yaml", "profiles/paper.yaml"):
        assert yaml.safe_load((ROOT / profile).read_text())["topics"]["device"] == "cpu"
    for notebook in ("infer_private.ipynb", "infer_nonprivate.ipynb"):
        assert "device" in parameter_names(ROOT / "notebooks" / notebook)
