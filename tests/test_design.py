"""The design notes' public face and recipes (docs/design.md, *The public face*, *How to add a
mechanism*, *How to add a model*, *How to add a save format*) name files that exist and names
that import, so that neither can drift from the code.

That their Python blocks run (the toy mechanism registered and fitted among them) is
tests/test_doc_examples.py's check.
"""
import importlib
import re
from pathlib import Path

import pytest

from lpp.formats.kinds import DESCRIPTIONS

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "design.md"
#: each recipe, and its worked example: what stands for a placeholder in the paths it lists
RECIPES = {
    "How to add a mechanism": {"<name>": "randomized_response"},
    "How to add a model": {"<name>": "topics"},
    "How to add a save format": {"<kind>": "counts", "<n>": "2"},
}
#: a path of the repository, in backticks
PATH = re.compile(r"`((?:lpp|tests|docs)/[^`\s]*|dvc\.yaml)`")
#: a dotted name of the library, in backticks, with or without its call
NAME = re.compile(r"`(lpp(?:\.\w+)+)")
#: the names of lpp's formats, which look like dotted names (``lpp.fit``) and are not
FORMAT_NAMES = frozenset(DESCRIPTIONS)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def section(text: str, title: str) -> str:
    """The section ``## title`` of ``text``, up to the next of its level."""
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def list_items(text: str) -> list[str]:
    """The items of the Markdown lists in ``text`` (code blocks left out), each with its
    continuation lines."""
    items = []
    for line in FENCE.sub("", text).splitlines():
        if line.startswith("- "):
            items.append(line[2:])
        elif items and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()
    return items


def library_names(text: str) -> set[str]:
    """The dotted names of the library that ``text`` writes in backticks (format names aside)."""
    return set(NAME.findall(text)) - FORMAT_NAMES


def resolves(name: str) -> bool:
    """Whether the dotted ``name`` is a module of the library, or an attribute of one."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def problems(text: str, placeholders: dict, root: Path = ROOT) -> list[str]:
    """What the lists of the recipe ``text`` name that is not there: a path (its placeholders
    replaced by the worked example's) missing from ``root``, a dotted name that does not
    import."""
    found = []
    for item in list_items(text):
        for path in PATH.findall(item):
            for placeholder, example in placeholders.items():
                path = path.replace(placeholder, example)
            if not (root / path).exists():
                found.append(f"no file {path}")
        found += [f"{name} does not import" for name in sorted(library_names(item))
                  if not resolves(name)]
    return found


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text()


@pytest.mark.parametrize("title", RECIPES)
def test_a_recipe_lists_the_module_its_tests_and_its_docs_line_and_each_exists(page, title):
    text = section(page, title)
    items = list_items(text)
    paths = [p for item in items for p in PATH.findall(item)]
    # the shape of every recipe: the code it touches, its tests, the page that names it
    for top in ("lpp/", "tests/", "docs/"):
        assert any(p.startswith(top) for p in paths), f"*{title}* lists no file under {top}"
    assert problems(text, RECIPES[title]) == []


def test_the_recipes_name_the_registrations_they_rest_on(page):
    named = {title: {n for item in list_items(section(page, title)) for n in library_names(item)}
             for title in RECIPES}
    assert "lpp.inference.privacy.register_mechanism" in named["How to add a mechanism"]
    assert "lpp.inference.models.MODELS" in named["How to add a model"]
    assert {"lpp.formats.fit_layout.VERSIONS", "lpp.formats.kinds.file_kind"} <= named[
        "How to add a save format"]
    assert not [name for names in named.values() for name in names if not resolves(name)]


def test_the_mechanism_recipe_registers_and_fits_a_mechanism(page):
    code = FENCE.findall(section(page, "How to add a mechanism"))
    assert len(code) == 1
    assert "register_mechanism(" in code[0] and "fit_private(" in code[0]


def test_the_public_face_names_modules_and_objects_that_exist(page):
    text = section(page, "The public face")
    names = library_names(text)
    assert {"lpp.mechanism", "lpp.inference.runner", "lpp.formats.result",
            "lpp.formats.fits.load_fit"} <= names
    assert [name for name in sorted(names) if not resolves(name)] == []
    # every row of the table: its objects live in the module it names
    rows = [line.split("|")[1:-1] for line in text.splitlines()
            if line.startswith("| ") and "`lpp." in line]
    assert len(rows) == 6
    for _, objects, where, _ in rows:
        module = importlib.import_module(re.search(r"`(lpp[\w.]*)`", where)[1])
        for obj in re.findall(r"`([A-Z]\w*|make_\w+)[(`]", objects):
            assert hasattr(module, obj), f"{module.__name__} has no {obj}"


def test_the_check_finds_a_missing_file_and_a_name_that_does_not_import(tmp_path):
    (tmp_path / "lpp" / "present").mkdir(parents=True)
    text = ("- `lpp/present/<name>/`: there, once named;\n"
            "- `lpp/absent.py`: the module, registered by\n"
            "  `lpp.inference.privacy.no_such_function(...)`;\n"
            "- `lpp.inference.privacy.register_mechanism`: there.\n")
    (tmp_path / "lpp" / "present" / "example").mkdir()
    assert problems(text, {"<name>": "example"}, tmp_path) == [
        "no file lpp/absent.py", "lpp.inference.privacy.no_such_function does not import"]
