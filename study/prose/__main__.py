"""``python -m study.prose``: check the documentation's numbers against the result files;
``--write`` re-renders every generated block in place first."""
from __future__ import annotations

import argparse
import sys

from study.prose import ROOT, problems, render_blocks
from study.prose.blocks import BLOCKS
from study.prose.quotes import QUOTES


def main(argv=None) -> int:
    """Re-render (``--write``) and check; 1 when anything is stale, else 0."""
    parser = argparse.ArgumentParser(prog="python -m study.prose", description=__doc__)
    parser.add_argument("--write", action="store_true",
                        help="re-render every generated block of the pages in place")
    parser.add_argument("--root", default=str(ROOT), help="the repository (default: this one)")
    args = parser.parse_args(argv)
    if args.write:
        for changed in render_blocks(BLOCKS, args.root):
            print(f"rewrote {changed}")
    found = problems(BLOCKS, QUOTES, args.root)
    for problem in found:
        print(problem)
    print(f"{len(BLOCKS)} blocks, {len(QUOTES)} quotes: "
          f"{f'{len(found)} problems' if found else 'all match'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
