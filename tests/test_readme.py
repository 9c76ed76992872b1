"""The README's commands are CI's, and its library example is short.

That the example runs as it stands, with every other Python block of the documentation, is
tests/test_doc_examples.py's check.
"""
import re
import shlex
from pathlib import Path

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


def test_the_readme_example_is_one_short_block():
    blocks = code_blocks(README, "python")
    assert len(blocks) == 1 and len(blocks[0].splitlines()) <= 20
