"""Every Python block of the README and of ``docs/*.md`` runs as it stands.

A page's blocks run in order in one namespace, as a reader pastes them into one session: a
page may make its data in its first block and use it in the next. They run in a temporary
directory, so that what they write stays out of the work tree.

A block that cannot run here (it needs a GPU, a Dask cluster, a corpus the repository does
not ship) says so in its first line, ``# not run: <why>``; it is still compiled, so its syntax
cannot rot, and the page's other blocks must not depend on it. Blocks in other languages
(``bash``, ``yaml``) are not run.

An example that needs an optional package fails for want of it like any other test, and
``--skip-missing-extras`` (tests/conftest.py) turns that into a skip naming the package.
"""
import re
import textwrap
from pathlib import Path

import pytest

from lpp.estimators import forget_noised_rows
from lpp.inference.privacy import mechanism_support

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: a fenced block, unindented or inside a list item (closed at the indent it opened with)
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[^\s`]*)[^\n]*\n"
                   r"(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
#: a first line that means to mark its block not run, however it is spelt
NOT_RUN = re.compile(r"#\s*not[ -]run\b", re.I)
#: the one spelling that does: the mark and the reason
REASON = re.compile(r"# not run: (?P<reason>\S.*)$")


class Block:
    """One ```python block of a page: its code (dedented) and the line its code starts on."""

    def __init__(self, page: Path, line: int, code: str):
        self.page, self.line, self.code = page, line, code
        first = code.lstrip().partition("\n")[0]
        self.marked = bool(NOT_RUN.match(first))
        reason = REASON.match(first)
        self.not_run = reason.group("reason").strip() if reason else None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def compiled(self):
        # padded to the page's line numbers: a traceback points into the page itself
        return compile("\n" * (self.line - 1) + self.code, str(self.page), "exec")


def python_blocks(page: Path) -> list[Block]:
    text = page.read_text()
    return [Block(page, text.count("\n", 0, m.start("body")) + 1, textwrap.dedent(m["body"]))
            for m in FENCE.finditer(text) if m["lang"] == "python"]


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


PAGES_WITH_CODE = [page for page in PAGES if python_blocks(page)]


def test_every_python_block_is_found_and_compiles():
    """The fence pattern finds every opening of a Python block, indented ones included, and
    every block, run or not, is valid Python."""
    blocks = [block for page in PAGES for block in python_blocks(page)]
    openings = sum(len(re.findall(r"^[ \t]*```python\b", page.read_text(), re.M))
                   for page in PAGES)
    assert len(blocks) == openings > 10
    for block in blocks:
        block.compiled()


def test_a_block_that_is_not_run_says_why():
    for block in (b for page in PAGES for b in python_blocks(page) if b.marked):
        assert block.not_run, (f"{block.where}: write the first line as '# not run: <why>', "
                               f"got {block.code.partition(chr(10))[0]!r}")


def check_readme(ns):
    assert ns["res"].mu_hat.shape == ns["y"].shape
    assert ns["res"].samples["phi"].shape == (10, 5, 50)  # what the example's comment says


def check_quickstart(ns):
    assert ns["rates"].shape == ns["y"].shape == (60, 40)
    assert ns["phi"].shape == (4, 40) and ns["theta"].shape == (60, 4)


def check_design(ns):
    """The public face's fit saved and loaded back whole; the recipe's toy mechanism
    registered with its step and fitted by it."""
    assert ns["result"].samples["phi"].shape == (4, 3, 15)  # what the example's comment says
    assert (ns["back"].mu_hat == ns["result"].mu_hat).all()
    assert set(mechanism_support(ns["toy"]).steps) == {"thinning"}
    assert ns["toy_fit"].method == "thinning" and ns["toy_fit"].n_saved == 20


#: what a page's comments promise of its results, beyond running
PROMISES = {"README.md": check_readme, "docs/quickstart.md": check_quickstart,
            "docs/design.md": check_design}


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=_page_id)
def test_the_examples_of_a_page_run(page, tmp_path, monkeypatch):
    blocks = python_blocks(page)
    run = [block for block in blocks if not block.not_run]
    if not run:
        pytest.skip("; ".join(f"{b.where} not run: {b.not_run}" for b in blocks))
    monkeypatch.chdir(tmp_path)  # whatever the examples write stays out of the work tree
    # the mechanism's process-wide record of noised rows: another test's rows must not make
    # this page's first release look like a second noising of the same rows
    forget_noised_rows()
    namespace = {"__name__": "__doc_example__"}
    for block in run:
        exec(block.compiled(), namespace)
    PROMISES.get(_page_id(page), lambda ns: None)(namespace)
