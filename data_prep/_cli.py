"""What the command lines of data_prep share: bad input is one line on stderr and a non-zero
exit status, never a traceback."""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable

#: what bad input raises; OSError covers unreadable files (permissions, a folder for a file)
INPUT_ERRORS = (ValueError, TypeError, OSError)

_SIZE = re.compile(r"\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


def run_reporting_errors(run: Callable[[], int], status: int = 2) -> int:
    """``run()``, or ``status`` after printing ``error: <message>`` for an input error."""
    try:
        return run()
    except INPUT_ERRORS as error:
        message = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
        print(f"error: {message or type(error).__name__}", file=sys.stderr)
        return status


def byte_size(text: str) -> int:
    """A number of bytes, optionally with a binary multiple: ``1000``, ``64M``, ``4GiB``."""
    match = _SIZE.fullmatch(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size in bytes (e.g. 1000, 64M, 4G): {text!r}")
    number, unit = match.groups()
    return int(number) * 1024 ** " kmgt".index(unit.lower() or " ")
