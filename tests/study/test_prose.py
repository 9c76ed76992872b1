"""The numbers that README.md and docs/ quote from result files are those files' numbers.

The committed pages are checked block by block and quote by quote (each its own test, so a
failure names the page, the block or sentence, and how to fix it); the machinery is checked
on hand-made pages, so that every way a number can go stale is seen to fail.
"""
import fnmatch
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from study.prose import (
    ROOT,
    WRITE_COMMAND,
    Block,
    Quote,
    block_content,
    block_problems,
    load_source,
    pages,
    parse_number,
    problems,
    quote_problems,
    quoted_values,
    render_blocks,
    replace_block,
    unfilled_blocks,
)
from study.prose.__main__ import main
from study.prose.blocks import BLOCKS, distinct, paper_run_summary, paper_run_table, short
from study.prose.quotes import QUOTES, _first_seed

# ---------------------------------------------------------------- the committed pages

@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.name)
def test_each_generated_block_is_its_rendering(block):
    assert not block_problems(block), "\n".join(block_problems(block))


@pytest.mark.parametrize("quote", QUOTES,
                         ids=lambda q: f"{Path(q.page).stem}: {q.plain[:40]}")
def test_each_quoted_number_is_its_files(quote):
    assert not quote_problems(quote), "\n".join(quote_problems(quote))


def test_every_block_of_the_pages_is_rendered_by_one_of_ours():
    """A marker pair on a page that no renderer fills would go stale unseen."""
    assert not unfilled_blocks(BLOCKS), "\n".join(unfilled_blocks(BLOCKS))


def test_the_pages_are_the_readme_the_docs_and_the_benchmarks_page():
    found = pages()
    assert {"README.md", "docs/results.md", "bench/README.md"} <= set(found)
    assert all(page.endswith(".md") for page in found)


def test_every_block_and_quote_is_on_a_checked_page():
    """A block or quote on a page outside the list would escape the unfilled-marker check."""
    checked = set(pages())
    stray = ({page for block in BLOCKS for page in block.pages}
             | {quote.page for quote in QUOTES}) - checked
    assert not stray, f"pages with blocks or quotes that pages() does not list: {stray}"


def test_every_quoted_file_is_in_git():
    """A pipeline output that DVC keeps out of git is on the machine that ran the stage but not
    in a clone, where its quotes could not be checked: quote only files that git tracks."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    tracked = set(listed)
    sources = {quote.source for quote in QUOTES} | {
        source for block in BLOCKS for source in block.sources}
    # a block may read a glob of files: it must match at least one tracked file; a folder of
    # tables is read whole, so each of its tables must be tracked (a clone reads the same rows)
    folders = {source for source in sources if (ROOT / source).is_dir()}
    untracked = sorted(source for source in sources - folders
                       if source not in tracked and not fnmatch.filter(tracked, source))
    untracked += sorted(table.relative_to(ROOT).as_posix() for folder in folders
                        for table in (ROOT / folder).glob("*.csv")
                        if table.relative_to(ROOT).as_posix() not in tracked)
    untracked += sorted(folder for folder in folders
                        if not any(path.startswith(f"{folder}/") for path in tracked))
    assert not untracked, f"quoted files that git does not track: {untracked}"


def test_the_command_reports_all_match_on_the_committed_pages(capsys):
    assert main([]) == 0
    assert "all match" in capsys.readouterr().out


# ---------------------------------------------------------------- reading numbers

@pytest.mark.parametrize("literal, value, half_unit", [
    ("0.153", 0.153, 0.0005), ("−0.25", -0.25, 0.005), ("-826.2", -826.2, 0.05),
    ("7,500", 7500, 0.5), ("47,346", 47346, 0.5), ("62", 62, 0.5), ("+2", 2, 0.5),
    ("1.6332e8", 1.6332e8, 5e3), ("1e-13", 1e-13, 5e-14), ("2.15e6", 2.15e6, 5e3)])
def test_a_printed_number_and_half_a_unit_of_its_last_digit(literal, value, half_unit):
    parsed, unit = parse_number(literal)
    assert parsed == pytest.approx(value) and unit == pytest.approx(half_unit)


@pytest.mark.parametrize("word", ["modes", "two", "0.1.2", "1,00", ""])
def test_a_word_is_not_a_number(word):
    assert parse_number(word) is None


def test_short_and_distinct_formats():
    assert [short(v) for v in (1028.15, 36.0, 9.571, 0.0615)] == ["1028", "36.0", "9.57",
                                                                   "0.0615"]
    assert distinct([-163228557.9, -163229653.8]) == ["−1.63229e8", "−1.63230e8"]
    assert distinct([3.30661e6, 3.32026e6]) == ["3.307e6", "3.320e6"]


# ---------------------------------------------------------------- quotes, on a hand-made repository

def _repository(tmp_path, page_text, record):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(page_text)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text(json.dumps(record))
    return tmp_path


def _quote(text, values, rel_tol=None):
    return Quote("docs/page.md", text, "results/r.json", values, rel_tol)


PAGE = "Ours scores 0.153 and −0.25\n  at the\nsecond level, in modes.\n"
RECORD = {"a": 0.15349, "b": -0.2512, "verdict": "modes"}


def _read(record):
    return [record["a"], record["b"], record["verdict"]]


def test_a_quote_holds_across_line_breaks_and_indentation(tmp_path):
    root = _repository(tmp_path, PAGE, RECORD)
    quote = _quote("scores {0.153} and {−0.25} at the second level, in {modes}", _read)
    assert quote_problems(quote, root) == []


def test_a_number_off_by_more_than_its_last_digit_fails(tmp_path):
    root = _repository(tmp_path, PAGE, {**RECORD, "a": 0.1536})
    quote = _quote("scores {0.153} and {−0.25} at the second level, in {modes}", _read)
    [problem] = quote_problems(quote, root)
    assert "0.153 where the file gives 0.1536" in problem
    assert "docs/page.md" in problem and "results/r.json" in problem


def test_a_sign_error_fails(tmp_path):
    root = _repository(tmp_path, PAGE, {**RECORD, "b": 0.25})
    quote = _quote("scores {0.153} and {−0.25} at the second level, in {modes}", _read)
    assert len(quote_problems(quote, root)) == 1


def test_a_changed_word_fails(tmp_path):
    root = _repository(tmp_path, PAGE, {**RECORD, "verdict": "drifting"})
    quote = _quote("scores {0.153} and {−0.25} at the second level, in {modes}", _read)
    assert "'modes' where the file gives 'drifting'" in quote_problems(quote, root)[0]


def test_an_edited_or_deleted_sentence_fails(tmp_path):
    root = _repository(tmp_path, PAGE.replace("0.153", "0.15"), RECORD)
    quote = _quote("scores {0.153} and {−0.25} at the second level, in {modes}", _read)
    [problem] = quote_problems(quote, root)
    assert "is not in the page" in problem and "study/prose/quotes.py" in problem


def test_a_quote_whose_reader_gives_another_number_of_values_fails(tmp_path):
    root = _repository(tmp_path, PAGE, RECORD)
    quote = _quote("scores {0.153} and {−0.25} at the second level", _read)
    assert "2 braced values but 3" in quote_problems(quote, root)[0]


def test_a_relative_tolerance_for_rounded_figures(tmp_path):
    root = _repository(tmp_path, "about 38,000 sweeps\n", {"n": 37990.5})
    rounded = Quote("docs/page.md", "about {38,000} sweeps", "results/r.json",
                    lambda r: [r["n"]], rel_tol=0.02)
    assert quote_problems(rounded, root) == []
    exact = Quote("docs/page.md", "about {38,000} sweeps", "results/r.json", lambda r: [r["n"]])
    assert len(quote_problems(exact, root)) == 1


def test_a_quote_reading_what_its_file_lacks_fails_naming_the_file(tmp_path):
    root = _repository(tmp_path, PAGE, {"a": 0.153})
    quote = _quote("scores {0.153} and {−0.25} at the second level, in {modes}", _read)
    [problem] = quote_problems(quote, root)
    assert "results/r.json lacks what the quote reads (KeyError: 'b')" in problem


def test_a_missing_result_file_is_named(tmp_path):
    root = _repository(tmp_path, PAGE, RECORD)
    quote = Quote("docs/page.md", "scores {0.153}", "results/absent.json", lambda r: [0.153])
    with pytest.raises(FileNotFoundError, match="results/absent.json"):
        quote_problems(quote, root)


def test_a_folder_of_tables_is_read_as_one_table_in_the_order_of_their_names(tmp_path):
    """The diagnosis writes one table per case into one folder; a quote or block of the
    folder reads them one below the other, and sees a table added or rewritten."""
    folder = tmp_path / "results" / "diagnostics"
    folder.mkdir(parents=True)
    (folder / "topics_naive.csv").write_text("case,r_hat\nnaive,1.2\n")
    (folder / "network_collapsed.csv").write_text("case,r_hat\nnetwork,2.1\n")
    table = load_source("results/diagnostics", tmp_path)
    assert table.case.tolist() == ["network", "naive"]
    (folder / "topics_collapsed.csv").write_text("case,r_hat\ncollapsed,1.5\n")
    assert load_source("results/diagnostics", tmp_path).case.tolist() == [
        "network", "collapsed", "naive"]
    (folder / "notes.txt").write_text("not a table")
    assert len(load_source("results/diagnostics", tmp_path)) == 3
    (tmp_path / "results" / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="results/empty: the folder holds no result table"):
        load_source("results/empty", tmp_path)


def test_a_quote_of_the_committed_docs_fails_when_the_page_changes(tmp_path):
    """The real table, on a copy of the repository whose results page quotes another MAE."""
    for entry in ROOT.iterdir():
        if entry.name not in ("docs", ".git"):
            (tmp_path / entry.name).symlink_to(entry)
    (tmp_path / "docs").mkdir()
    page = (ROOT / "docs" / "results.md").read_text()
    quote = next(q for q in QUOTES if q.text.startswith("non-private level at every ε/N ("))
    low, high, reference = quoted_values(quote.text)
    quoted = f"({low}–{high} vs {reference})"
    assert quoted in page
    (tmp_path / "docs" / "results.md").write_text(
        page.replace(quoted, f"({low}–9.999 vs {reference})"))
    assert quote_problems(quote, ROOT) == []
    assert quote_problems(quote, tmp_path) == [
        (f"docs/results.md: \"{quote.plain[:70]}…\" is not in the page (edit the page or the "
        "quote in study/prose/quotes.py)")]


# ---------------------------------------------------------------- blocks, on a hand-made repository

def _block(text):
    return Block("scores", ("docs/page.md",), ("results/r.json",), lambda root: text)


def test_a_block_is_replaced_between_its_markers_only():
    page = "before\n<!-- scores -->\nold\n<!-- /scores -->\nafter\n"
    new = replace_block(page, "scores", "| a |\n|---|")
    assert new == "before\n<!-- scores -->\n| a |\n|---|\n<!-- /scores -->\nafter\n"
    assert block_content(new, "scores") == "| a |\n|---|"
    assert block_content(new, "other") is None


def test_a_block_in_a_list_item_keeps_its_indentation():
    page = "- item\n\n  <!-- scores -->\n  <!-- /scores -->\n"
    new = replace_block(page, "scores", "| a |\n\nnote")
    assert new == "- item\n\n  <!-- scores -->\n  | a |\n\n  note\n  <!-- /scores -->\n"
    assert block_content(new, "scores") == "| a |\n\nnote"


def test_a_page_without_the_markers_cannot_take_the_block():
    with pytest.raises(ValueError, match="no block <!-- scores -->"):
        replace_block("no markers here\n", "scores", "x")


def test_a_stale_block_names_the_page_the_block_and_the_command(tmp_path):
    root = _repository(tmp_path, "<!-- scores -->\nold\n<!-- /scores -->\n", RECORD)
    [problem] = block_problems(_block("new"), root)
    assert "docs/page.md" in problem and "<!-- scores -->" in problem
    assert WRITE_COMMAND in problem


def test_writing_the_blocks_makes_them_current_and_reports_the_pages(tmp_path):
    root = _repository(tmp_path, "<!-- scores -->\nold\n<!-- /scores -->\n", RECORD)
    block = _block("new")
    assert render_blocks([block], root) == ["docs/page.md <!-- scores -->"]
    assert block_problems(block, root) == []
    assert render_blocks([block], root) == []  # nothing left to change


def test_a_marked_block_that_no_renderer_fills_is_reported(tmp_path):
    root = _repository(tmp_path, "<!-- scores -->\nold\n<!-- /scores -->\n", RECORD)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "README.md").write_text("  <!-- speed -->\n  1.0 s\n  <!-- /speed -->\n")
    assert unfilled_blocks([_block("old")], root) == [
        "bench/README.md: block <!-- speed --> is rendered by no Block of study/prose/blocks.py"]
    assert len(problems([_block("old")], [], root)) == 1
    assert len(problems([], [], root)) == 2  # the docs page's block too


def test_a_page_that_lost_its_markers_is_reported_not_rewritten(tmp_path):
    root = _repository(tmp_path, "the table was deleted\n", RECORD)
    block = _block("new")
    assert render_blocks([block], root) == []
    assert "has no block <!-- scores -->" in block_problems(block, root)[0]
    assert len(problems([block], [], root)) == 1


def _paper_run(tmp_path, stages, machine=None):
    (tmp_path / "results" / "paper").mkdir(parents=True)
    shutil.copyfile(ROOT / "profiles" / "paper.yaml", tmp_path / "results/paper/params.yaml")
    record = {"stages": stages, **({"machine": machine} if machine else {})}
    (tmp_path / "results/paper/stage_seconds.json").write_text(json.dumps(record))
    return tmp_path


def test_the_paper_run_table_names_the_commit_and_sums_each_study(tmp_path):
    machine = {"revision": "a" * 40, "cpu_count": 16, "cpu_model": "Some CPU"}
    root = _paper_run(tmp_path, {"infer_private_topics@collapsed-1.0-0": 3600.0,
                                 "infer_nonprivate_topics": 1800.0, "claims": 36.0}, machine)
    text = paper_run_table(root)
    assert text.startswith("Made at commit `aaaaaaa` on 16 cores (Some CPU); 1.5 hours")
    assert "(3 stages;" in text
    row = next(line for line in text.splitlines() if line.startswith("| topics, MCMC"))
    assert "K = 50;" in row and "per fit; non-private:" in row
    assert row.endswith("| 2 | 1.5 | `aaaaaaa` |")
    changed = _paper_run(tmp_path / "changed", {"claims": 36.0},
                         {**machine, "revision": "b" * 40 + "+changes"})
    assert paper_run_table(changed).startswith("Made at commit `bbbbbbb+changes`")


def test_the_paper_run_names_the_commit_of_each_study(tmp_path):
    """Studies rerun at another commit (``revisions``) are named with it, in the title and
    in their study's row; the commit of most stages heads the title."""
    from study.prose.blocks import paper_run_summary, paper_run_table

    machine = {"revision": "b" * 40, "cpu_count": 2, "cpu_model": "Some CPU"}
    root = _paper_run(tmp_path, {"infer_private_topics@collapsed-1.0-0": 3600.0,
                                 "infer_nonprivate_topics": 1800.0,
                                 "synthetic_communities": 60.0,
                                 "synthetic_topics": 30.0}, machine)
    record = json.loads((root / "results/paper/stage_seconds.json").read_text())
    record["revisions"] = {"infer_private_topics@collapsed-1.0-0": "a" * 40,
                           "infer_nonprivate_topics": "a" * 40,
                           "synthetic_topics": "a" * 40, "synthetic_communities": "b" * 40}
    (root / "results/paper/stage_seconds.json").write_text(json.dumps(record))
    text = paper_run_table(root)
    assert text.startswith("Made at commit `aaaaaaa` (synthetic_communities at `bbbbbbb`) on 2")
    rows = {line.split(" |")[0][2:]: line for line in text.splitlines() if line.startswith("| ")}
    assert rows["topics, MCMC"].endswith("| `aaaaaaa` |")
    assert rows["synthetic figures and the VI paper"].endswith(
        "| `aaaaaaa`; synthetic_communities at `bbbbbbb` |")
    assert paper_run_summary(root).startswith(
        "Made at commit `aaaaaaa` (synthetic_communities at `bbbbbbb`) on 2 cores")


def test_the_fig1_quotes_read_the_first_seed_of_either_scores_file():
    """synthetic/communities.json of one network (``levels``) or of seeds (``per_seed``): the
    quotes of the figure's panels read the first seed's rows."""
    def mae(row):
        return row["epsilon"], row["collapsed"], row["naive"], row["non-private"]

    one = {"non-private": {"mae_to_rates": 0.1}, "levels": [
        {"epsilon": e, "collapsed": {"mae_to_rates": c}, "naive": {"mae_to_rates": n}}
        for e, c, n in ((2.5, 0.2, 0.3), (1.0, 0.4, 0.5))]}
    seeds = {"seeds": [4, 1], "per_seed": [
        {"seed": s, "epsilon": e, "collapsed": c + (s - 4), "naive": n, "non-private": 0.1}
        for s in (1, 4) for e, c, n in ((2.5, 0.2, 0.3), (1.0, 0.4, 0.5))]}
    assert [mae(r) for r in _first_seed(one)] == [mae(r) for r in _first_seed(seeds)] == [
        (2.5, 0.2, 0.3, 0.1), (1.0, 0.4, 0.5, 0.1)]


def test_the_paper_run_table_counts_the_seeds_of_fig1(tmp_path):
    def fig1(root):
        row = next(line for line in paper_run_table(root).splitlines()
                   if line.startswith("| synthetic figures"))
        return row.split("| ")[2].split(";")[0]

    root = _paper_run(tmp_path, {"synthetic_communities": 60.0})
    params = root / "results/paper/params.yaml"
    settings = yaml.safe_load(params.read_text())
    section = settings["synthetic_communities"]
    sweeps = f"Fig. 1: {section['n_iter']:,} sweeps"
    assert fig1(root) == (f"{sweeps} × {len(section['seeds'])} seeds × "
                          f"{section['n_chains']} chains")
    # a run whose settings name one seed ran one network
    settings["synthetic_communities"] = {"seed": 1, **{k: v for k, v in section.items()
                                                       if k not in ("seeds", "n_chains")}}
    params.write_text(yaml.safe_dump(settings))
    assert fig1(root) == sweeps


def test_the_readme_sums_up_the_paper_run_in_a_sentence(tmp_path):
    """The README's line on the paper run names its commit, its total hours and each case
    study's copies, chains and sweeps, from the run's own records."""
    machine = {"revision": "c" * 40, "cpu_count": 2, "cpu_model": "Some CPU"}
    root = _paper_run(tmp_path, {"infer_private_topics@collapsed-1.0-0": 5400.0,
                                 "infer_private_network@collapsed-1.0-0-5": 1800.0}, machine)
    text = paper_run_summary(root)
    assert text.startswith("Made at commit `ccccccc` on 2 cores (Some CPU), 2 hours of stage "
                           "wall time in all. Topics: K = 50; 5 privatized copies per level")
    assert "Network: C = 5, 10, 20; 5 privatized copies per level" in text
    assert text.endswith("chains.")


def test_the_paper_run_table_refuses_a_stage_of_no_study(tmp_path):
    root = _paper_run(tmp_path, {"infer_something_new@x": 1.0})
    with pytest.raises(ValueError, match=r"infer_something_new@x.*_RUN_STUDIES"):
        paper_run_table(root)
