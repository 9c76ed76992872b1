"""The names of earlier releases listed in docs/library.md, *Deprecated names*: every row of
the table is checked here (a name that moved warns and gives what its new name gives), and
every alias the package keeps is in the table."""
import importlib
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from lpp.formats.result import FitResult
from lpp.inference import RunOptions, TopicModel, fit_private
from lpp.inference import kernels as shared_kernels

ROOT = Path(__file__).resolve().parents[2]
#: a row whose earlier name and new name are both module attributes (`a.b.name` | `x.y.Name`)
ATTRIBUTE_ROW = re.compile(r"^\| `(lpp(?:\.\w+)+)` \| `(lpp(?:\.\w+)+)` \|$")


def table_rows() -> list[str]:
    text = (ROOT / "docs" / "library.md").read_text()
    section = text.split("## Deprecated names", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| `")]


def _resolve(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_the_table_lists_every_kind_of_alias_the_package_keeps():
    rows = "\n".join(table_rows())
    for name in ("SavedFit", "SavedChains", "as_fit_result", "result.meta", "result.rhat_max",
                 "lpp.inference.kernels.<kernel>", "MOVED_KERNELS", "fit_private",
                 "fit_variational"):
        assert name in rows, f"docs/library.md, Deprecated names, lacks {name}"
    # the rows checked name for name below (an empty table would check nothing)
    assert len([r for r in table_rows() if ATTRIBUTE_ROW.match(r)]) == 2


@pytest.mark.parametrize("row", [r for r in table_rows() if ATTRIBUTE_ROW.match(r)])
def test_a_moved_name_warns_and_is_its_new_name(row):
    old, new = ATTRIBUTE_ROW.match(row).groups()
    with pytest.warns(FutureWarning, match=new.rpartition(".")[2]):
        value = _resolve(old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert value is _resolve(new)


@pytest.mark.parametrize("name", sorted(shared_kernels.MOVED_KERNELS))
def test_each_moved_model_kernel_warns_and_is_the_kernel_in_its_models_folder(name):
    home = shared_kernels.MOVED_KERNELS[name]
    assert re.fullmatch(r"lpp\.inference\.models\.\w+\.kernels", home)
    with pytest.warns(FutureWarning, match=re.escape(home)):
        kernel = getattr(shared_kernels, name)
    assert kernel is getattr(importlib.import_module(home), name)


def test_the_shared_kernels_module_still_refuses_unknown_names():
    with pytest.raises(AttributeError, match="no_such_kernel"):
        shared_kernels.no_such_kernel


@pytest.fixture(scope="module")
def saved_fit(tmp_path_factory):
    y = np.random.default_rng(0).poisson(1.5, (8, 6))
    result = fit_private(y, 0.5, TopicModel(2), method="naive", chains=2, rng=3,
                         run=RunOptions(n_iter=4, burn_in=2, progress=False))
    out = result.save(tmp_path_factory.mktemp("fit") / "fit", data="here",
                      extra={"epsilon_over_n": 0.5},
                      diagnostics={"rhat_max": 1.25})
    return FitResult.load(out)


def test_meta_is_fit_json_as_a_dict_and_warns(saved_fit):
    with pytest.warns(FutureWarning, match="result.metadata"):
        meta = saved_fit.meta
    record = saved_fit.metadata
    assert meta["method"] == record.method == "naive"
    assert meta["model"] == record.model
    assert meta["extra"]["epsilon_over_n"] == record.epsilon_over_n == 0.5
    assert meta["seed"] == record.seed and meta["n_chains"] == 2
    assert meta["data"] == "here" and meta["n_iter"] == 4
    assert meta["diagnostics"]["rhat_max"] == 1.25


def test_rhat_max_warns_and_reads_the_typed_record(saved_fit):
    with pytest.warns(FutureWarning, match="metadata.rhat_max"):
        assert saved_fit.rhat_max == saved_fit.metadata.rhat_max == 1.25
