"""bench.memory: what this process holds, read from Linux's /proc/self/status."""
import sys

import numpy as np
import pytest

from bench.memory import process_memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_process_memory_reads_the_resident_set_and_its_peak():
    held = process_memory("VmRSS", "VmHWM", "NoSuchField")
    assert set(held) == {"VmRSS", "VmHWM"} and 0 < held["VmRSS"] <= held["VmHWM"]
    block = np.ones(2**23)  # 64 MiB, every page written
    grown = process_memory("VmRSS", "VmHWM")
    assert grown["VmRSS"] >= held["VmRSS"] + 48 * 2**20 and grown["VmHWM"] >= grown["VmRSS"]
    assert block.sum() == 2**23
