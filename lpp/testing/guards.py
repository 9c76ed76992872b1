"""A guard for property tests of code that must never hang."""
from __future__ import annotations

import signal
from contextlib import contextmanager

__all__ = ["time_limit"]


@contextmanager
def time_limit(seconds: int, what: str = "the call"):
    """Raise ``TimeoutError`` in the main thread when the block runs past ``seconds``.

    For property tests of code that must never hang: a hang becomes a failure instead of a
    test run that never ends. Python code is interrupted between bytecodes and compiled
    kernels when they return, so a kernel that never returns is still caught by the test's
    own process-level timeout only. Unix only (``SIGALRM``).
    """
    def expire(signum, frame):
        raise TimeoutError(f"{what} ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(int(seconds))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
