"""``python -m study.prose``: check the documentation's numbers against the result files;
``--write`` re-renders every generated block in place first."""
from __future__ import annotations

import argparse
import sys

from study.prose import ROOT, block_problems, quote_problems, render_blocks
from study.prose.blocks import BLOCKS
from study.prose.quotes import QUOTES


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m study.prose", description=__doc__)
    parser.add_argument("--write", action="store_true",
                        help="re-render every generated block of README.md and docs/ in place")
    parser.add_argument("--root", default=str(ROOT), help="the repository (default: this one)")
    args = parser.parse_args(argv)
    if args.write:
        for changed in render_blocks(BLOCKS, args.root):
            print(f"rewrote {changed}")
    problems = [p for block in BLOCKS for p in block_problems(block, args.root)]
    problems += [p for quote in QUOTES for p in quote_problems(quote, args.root)]
    for problem in problems:
        print(problem)
    print(f"{len(BLOCKS)} blocks, {len(QUOTES)} quotes: "
          f"{'all match' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
