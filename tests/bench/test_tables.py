"""The benchmark tables that the docs quote are the ones ``bench.tables`` makes from the
committed results, so a rerun's numbers cannot leave stale copies behind."""
import re
from pathlib import Path

from bench.tables import _load, cost_model_table, gpu_table

ROOT = Path(__file__).resolve().parents[2]


def test_the_gpu_page_quotes_the_committed_gpu_results():
    page = (ROOT / "docs" / "gpu.md").read_text()
    quoted = re.search(r"<!-- gpu-table -->\n(.*?)\n<!-- /gpu-table -->", page, re.S)
    assert quoted, "docs/gpu.md has no marked table"
    assert quoted.group(1) == gpu_table(_load("gpu"))


def test_the_readme_quotes_the_cost_model_of_the_committed_results():
    readme = (ROOT / "README.md").read_text()
    quoted = re.search(r"<!-- cost-model -->\n(.*?)\n<!-- /cost-model -->", readme, re.S)
    assert quoted, "README.md has no marked cost model"
    assert quoted.group(1) == cost_model_table(_load("sweep"), _load("gpu"))
