"""The README's commands are CI's, and the code a newcomer copies runs as it stands.

The README's library example and every Python block of ``docs/quickstart.md`` (one
namespace, in order, as a reader runs them) are executed here.
"""
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def code_blocks(path: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(path.read_text()) if lang == language]


def _commands(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("python3 -m venv")]


def test_the_readme_opens_with_the_two_commands():
    first_block = FENCE.search(README.read_text())
    assert first_block.group(1) == "bash" and README.read_text().index("```") < 200
    install, test = _commands(first_block.group(2))
    assert install.endswith("&& dvc repro") and test.endswith("&& python -m pytest")
    assert install.rsplit("&&", 1)[0] == test.rsplit("&&", 1)[0]  # the same installation


def test_ci_runs_the_readmes_test_command():
    """.ci/run's first step is the README's second command (pip's -q aside)."""
    readme_test = _commands(FENCE.search(README.read_text()).group(2))[1]
    ci = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines()
          if ln.startswith("python3 -m venv .venv")]
    assert len(ci) == 1
    assert [w for w in shlex.split(ci[0]) if w != "-q"] == shlex.split(readme_test)


def test_the_readme_is_short():
    assert len(README.read_text().splitlines()) <= 200


def _run(blocks, tmp_path, monkeypatch):
    assert blocks
    monkeypatch.chdir(tmp_path)  # whatever the code writes stays out of the work tree
    namespace = {"__name__": "__readme__"}
    for block in blocks:
        exec(compile(block, "<example>", "exec"), namespace)
    return namespace


@pytest.mark.slow
def test_the_readme_example_runs(tmp_path, monkeypatch):
    blocks = code_blocks(README, "python")
    assert len(blocks) == 1 and len(blocks[0].splitlines()) <= 20
    ns = _run(blocks, tmp_path, monkeypatch)
    res, y = ns["res"], ns["y"]
    assert res.mu_hat.shape == y.shape
    assert res.samples["phi"].shape == (10, 5, 50)  # what the example's comment says


@pytest.mark.slow
def test_the_quickstart_runs(tmp_path, monkeypatch):
    ns = _run(code_blocks(ROOT / "docs" / "quickstart.md", "python"), tmp_path, monkeypatch)
    assert ns["rates"].shape == ns["y"].shape == (60, 40)
    assert ns["phi"].shape == (4, 40) and ns["theta"].shape == (60, 4)
