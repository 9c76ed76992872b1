"""Numbers in the documentation that cannot go stale.

Every number that the pages (:data:`PAGES`: ``README.md``, ``docs/*.md`` and the benchmarks'
``bench/README.md``) quote from a result file (``results/``, ``bench/results/``, the committed
summaries of the prepared data, the investigations' records in ``experiments/results/``) is
tied to that file in one of two ways:

**Generated blocks.** A table (or a paragraph of numbers) sits between the markers
``<!-- name -->`` and ``<!-- /name -->`` of a page, and a :class:`Block` renders it from the
file. ``python -m study.prose --write`` re-renders every block in place after a rerun;
``python -m study.prose`` (``--check``) lists the blocks and quotes that no longer match, and
the markers of the pages that no block fills, and the tests (``tests/study/test_prose.py``)
fail on them.

**Checked quotes.** A number inside a sentence is listed as a :class:`Quote`: the page, the
sentence's words as the page has them with each checked value in braces
(``"ours {0.153}–{0.162} vs {0.159}"``), the file, and a function of the loaded file that gives
those values. The check finds the text (braces removed, runs of white space as one space) in
the page, so an edited or deleted sentence is noticed, and compares each braced value with the
file's: a number must be the file's value rounded to the digits shown (or within the quote's
``rel_tol``), a word must be equal. Numbers outside braces are settings, not checked.

The blocks are in :mod:`study.prose.blocks`, the quotes in :mod:`study.prose.quotes`.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd
import yaml

__all__ = [
    "PAGES",
    "ROOT",
    "Block",
    "Quote",
    "block_content",
    "block_problems",
    "load_source",
    "pages",
    "parse_number",
    "problems",
    "quote_problems",
    "quoted_values",
    "render_blocks",
    "replace_block",
    "unfilled_blocks",
]

#: the repository: pages and sources are named relative to it
ROOT = Path(__file__).resolve().parents[2]

#: the pages whose numbers are tied to result files (patterns relative to the repository)
PAGES = ("README.md", "docs/*.md", "bench/README.md")

#: the command that re-renders every generated block (named in every stale block's message)
WRITE_COMMAND = "python -m study.prose --write"

_BRACED = re.compile(r"\{([^{}]*)\}")
_NUMBER = re.compile(r"^([+-]?)(\d{1,3}(?:,\d{3})+|\d+)?(?:\.(\d+))?(?:e([+-]?\d+))?$")


# ---------------------------------------------------------------- sources

@cache
def _load(path: Path, stamp):
    """``path`` parsed by its suffix (``stamp``, its modification time, keys the cache); a
    folder is its CSV tables, one below the other in the order of their names."""
    if path.is_dir():
        return pd.concat([pd.read_csv(table) for table in sorted(path.glob("*.csv"))],
                         ignore_index=True)
    if path.suffix == ".json":
        return json.loads(path.read_text())
    if path.suffix == ".csv":
        return pd.read_csv(path)
    if path.suffix in (".yaml", ".yml", ".lock"):
        return yaml.safe_load(path.read_text())
    return path.read_text()


def load_source(source: str, root=ROOT):
    """A result file, parsed: JSON as a dict, CSV as a DataFrame, YAML (and ``dvc.lock``) as
    a dict, anything else as text; a folder of CSV tables as one DataFrame (the tables one
    below the other, in the order of their names).

    Parameters
    ----------
    source : str
        The file's (or folder's) path relative to ``root``.
    root : path-like
        The repository.

    Raises
    ------
    FileNotFoundError
        Naming the file, when it is absent.
    """
    path = Path(root) / source
    if path.is_dir():
        tables = sorted(path.glob("*.csv"))
        if not tables:
            raise FileNotFoundError(f"{source}: the folder holds no result table (under {root})")
        # the tables' names and times key the cache: one added, removed or rewritten is read
        return _load(path, tuple((table.name, table.stat().st_mtime) for table in tables))
    if not path.is_file():
        raise FileNotFoundError(f"{source}: the result file is absent (under {root})")
    return _load(path, path.stat().st_mtime)


def pages(root=ROOT) -> list[str]:
    """The pages of :data:`PAGES` that ``root`` holds, relative to it, in order."""
    return [path.relative_to(root).as_posix() for pattern in PAGES
            for path in sorted(Path(root).glob(pattern))]


# ---------------------------------------------------------------- generated blocks

@dataclass(frozen=True)
class Block:
    """A marked block of one or more pages, rendered from result files.

    Attributes
    ----------
    name : str
        The markers' name: ``<!-- name -->`` ... ``<!-- /name -->``.
    pages : tuple of str
        The pages (relative to the repository) that hold the block, each the same text.
    sources : tuple of str
        The files the rendering reads (for the messages).
    render : callable
        ``render(root) -> str``, the block's text between the markers.
    """

    name: str
    pages: tuple
    sources: tuple
    render: Callable


def _markers(name: str) -> re.Pattern:
    """An opening marker on a line of its own (indented like the list item it sits in), the
    block's lines and the closing marker."""
    name = re.escape(name)
    return re.compile(rf"^([ \t]*)(<!-- {name} -->\n)(.*?)\n?([ \t]*<!-- /{name} -->)",
                      re.DOTALL | re.MULTILINE)


def _indent(text: str, prefix: str) -> str:
    """``text`` with every non-empty line prefixed."""
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


def _dedent(text: str, prefix: str) -> str:
    """``text`` without ``prefix`` at the start of its lines."""
    return "\n".join(line.removeprefix(prefix)
                     for line in text.split("\n"))


def block_content(page_text: str, name: str) -> str | None:
    """The text between the markers of block ``name``, without the markers' indentation
    (None when the page has no such block)."""
    found = _markers(name).search(page_text)
    return _dedent(found.group(3), found.group(1)) if found else None


def replace_block(page_text: str, name: str, content: str) -> str:
    """``page_text`` with block ``name``'s text replaced by ``content`` (indented as its
    markers are).

    Raises
    ------
    ValueError
        When the page has no such block.
    """
    if block_content(page_text, name) is None:
        raise ValueError(f"no block <!-- {name} --> ... <!-- /{name} --> in the page")
    return _markers(name).sub(
        lambda m: m.group(1) + m.group(2) + _indent(content, m.group(1)) + "\n" + m.group(4),
        page_text, count=1)


def block_problems(block: Block, root=ROOT) -> list[str]:
    """Why ``block``'s pages do not hold its rendering (empty when they do)."""
    rendered = block.render(Path(root))
    problems = []
    for page in block.pages:
        committed = block_content((Path(root) / page).read_text(), block.name)
        if committed is None:
            problems.append(f"{page} has no block <!-- {block.name} --> ... "
                            f"<!-- /{block.name} -->")
        elif committed != rendered:
            problems.append(f"{page}, block <!-- {block.name} -->, is not the rendering of "
                            f"{', '.join(block.sources)}: run `{WRITE_COMMAND}`")
    return problems


_CLOSING_MARKER = re.compile(r"^[ \t]*<!-- /([\w.-]+) -->[ \t]*$", re.MULTILINE)


def unfilled_blocks(blocks, root=ROOT) -> list[str]:
    """The marked blocks of the pages (:func:`pages`) that none of ``blocks`` renders into
    that page: each would go stale unseen. One message each, empty when there are none."""
    filled = {(page, block.name) for block in blocks for page in block.pages}
    return [f"{page}: block <!-- {name} --> is rendered by no Block of study/prose/blocks.py"
            for page in pages(root)
            for name in _CLOSING_MARKER.findall((Path(root) / page).read_text())
            if (page, name) not in filled]


def render_blocks(blocks, root=ROOT) -> list[str]:
    """Re-render every block of ``blocks`` in its pages; returns the pages changed. A page
    without the block's markers is left alone (:func:`block_problems` reports it)."""
    changed = []
    for block in blocks:
        rendered = block.render(Path(root))
        for page in block.pages:
            path = Path(root) / page
            text = path.read_text()
            if block_content(text, block.name) is None:
                continue
            new = replace_block(text, block.name, rendered)
            if new != text:
                path.write_text(new)
                changed.append(f"{page} <!-- {block.name} -->")
    return changed


# ---------------------------------------------------------------- checked quotes

@dataclass(frozen=True)
class Quote:
    """A sentence of a page and the values in it that come from a result file.

    Attributes
    ----------
    page : str
        The page, relative to the repository (``"docs/results.md"``).
    text : str
        The page's words, each checked value in braces: ``"ours {0.153}–{0.162}"``. Without
        the braces (and with runs of white space as one space) it must occur in the page.
    source : str
        The result file, relative to the repository.
    values : callable
        ``values(data)`` of the loaded file (:func:`load_source`): the braced values in
        order, numbers or words.
    rel_tol : float or None
        None: a quoted number is the value rounded to the digits shown. Otherwise the
        relative tolerance of every number (for "about" and rounded figures).
    """

    page: str
    text: str
    source: str
    values: Callable
    rel_tol: float | None = None

    @property
    def plain(self) -> str:
        """The text as the page has it."""
        return _squeeze(_BRACED.sub(lambda m: m.group(1), self.text))


def _squeeze(text: str) -> str:
    """``text`` with every run of white space one space."""
    return " ".join(text.split())


def parse_number(literal: str) -> tuple[float, float] | None:
    """A number as the pages print it, and half a unit of its last digit.

    Understands ``−`` (U+2212) and ``-``, thousands commas (``7,500``), decimals and an
    exponent (``1.6332e8``). Returns None for anything else (a word).

    Examples
    --------
    >>> parse_number("−0.25")
    (-0.25, 0.005)
    >>> parse_number("1.6332e8")
    (163320000.0, 5000.0)
    """
    found = _NUMBER.match(literal.strip().replace("\u2212", "-"))
    if not found or (found.group(2) is None and found.group(3) is None):
        return None
    sign, whole, decimals, exponent = found.groups()
    value = float(f"{sign}{(whole or '0').replace(',', '')}.{decimals or '0'}"
                  f"e{exponent or '0'}")
    half_unit = 0.5 * 10.0 ** (int(exponent or 0) - len(decimals or ""))
    return value, half_unit


def quoted_values(text: str) -> list[str]:
    """The braced values of a quote's text, as printed."""
    return _BRACED.findall(text)


def _mismatch(literal: str, expected, rel_tol) -> str | None:
    """Why the printed ``literal`` is not ``expected`` (None when it is)."""
    parsed = parse_number(literal)
    if parsed is None:
        if str(expected) == literal:
            return None
        return f"{literal!r} where the file gives {expected!r}"
    try:
        value = float(expected)
    except (TypeError, ValueError):
        return f"{literal} where the file gives {expected!r}"
    printed, half_unit = parsed
    allowed = abs(value) * rel_tol if rel_tol is not None else half_unit * (1 + 1e-9)
    if not math.isfinite(value) or abs(printed - value) > allowed + 1e-12:
        return f"{literal} where the file gives {value:.6g}"
    return None


def quote_problems(quote: Quote, root=ROOT) -> list[str]:
    """Why ``quote`` no longer holds (empty when it does): its text is not in its page, or
    a value differs from its file's."""
    where = f"{quote.page}: \"{quote.plain[:70]}…\""
    page = _squeeze((Path(root) / quote.page).read_text())
    if quote.plain not in page:
        return [(f"{where} is not in the page (edit the page or the quote in "
                "study/prose/quotes.py)")]
    printed = quoted_values(quote.text)
    try:
        expected = list(quote.values(load_source(quote.source, root)))
    except (KeyError, IndexError, StopIteration) as missing:
        return [f"{where}: {quote.source} lacks what the quote reads "
                f"({type(missing).__name__}: {missing})"]
    if len(expected) != len(printed):
        return [(f"{where}: {len(printed)} braced values but {len(expected)} from "
                f"{quote.source}")]
    return [f"{where}: {why} ({quote.source})"
            for literal, value in zip(printed, expected)
            if (why := _mismatch(literal, value, quote.rel_tol)) is not None]


def problems(blocks, quotes, root=ROOT) -> list[str]:
    """Every stale block, every marked block that none of ``blocks`` fills and every quote
    that no longer holds, one message each."""
    found = [p for block in blocks for p in block_problems(block, root)]
    found += unfilled_blocks(blocks, root)
    return found + [p for quote in quotes for p in quote_problems(quote, root)]
