"""Fixtures shared by the whole test suite."""
import subprocess
import sys

import pytest


@pytest.fixture
def run_isolated():
    """``run(code, timeout=120)``: run Python ``code`` in a fresh interpreter (from the
    repository root, so it imports this checkout's ``lpp``) and return its stdout; the run must
    succeed within ``timeout`` seconds. For code that used to hang inside a compiled kernel,
    where no signal reaches it: a hang fails the test instead of blocking the suite."""
    def run(code: str, timeout: float = 120) -> str:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout)
        assert done.returncode == 0, done.stderr
        return done.stdout
    return run
