"""A private write killed (SIGKILL) at every step of its swap leaves nothing that loads but
the folder it was writing, old or new, and the next write beside it removes every leftover.

Each case runs the write in a child process that sends itself SIGKILL just before its k-th
file-system step (making the temporary folder, syncing, renaming, removing), for k = 1, 2, ...
until a write finishes unkilled: so every step of the swap is a place it died at.
"""
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from lpp.formats.files import FormatError, MissingFileError
from lpp.formats.ledger import composed_epsilon, read_release
from lpp.formats.privatized import privatize_counts
from lpp.formats.privatized_blocks import privatize_blocks

ROWS = [f"d{i}" for i in range(12)]
COLS = [f"w{j}" for j in range(5)]

_CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import numpy as np
    from lpp.formats import files
    from lpp.formats.privatized import privatize_counts
    from lpp.formats.privatized_blocks import privatize_blocks

    parent, kill_at, fmt = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    counts = np.arange(60).reshape(12, 5) % 3
    rows, cols = [f"d{i}" for i in range(12)], [f"w{j}" for j in range(5)]
    steps = [0]

    def dying(call):
        def step(*args, **kwargs):
            steps[0] += 1
            if steps[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return call(*args, **kwargs)
        return step

    for module, name in ((files.tempfile, "mkdtemp"), (files.os, "fsync"), (files.os, "chmod"),
                         (files.os, "replace"), (files.os, "rename"), (files.shutil, "rmtree")):
        setattr(module, name, dying(getattr(module, name)))
    if fmt == "single":
        privatize_counts(counts, parent / "p", epsilon=1.0, N=1.0, source="toy", row_ids=rows,
                         column_ids=cols)
    else:
        privatize_blocks([counts[:5], counts[5:]], parent / "p", n_cols=5, epsilon=1.0, N=1.0,
                         source="toy", row_ids=rows, column_ids=cols)
    print(steps[0])
""")


def _write(fmt, folder):
    counts = np.arange(60).reshape(12, 5) % 3
    if fmt == "single":
        privatize_counts(counts, folder, epsilon=1.0, N=1.0, source="toy", row_ids=ROWS,
                         column_ids=COLS)
    else:
        privatize_blocks([counts[:5], counts[5:]], folder, n_cols=5, epsilon=1.0, N=1.0,
                         source="toy", row_ids=ROWS, column_ids=COLS)
    return read_release(folder).release_sha256


def _loads(path) -> bool:
    try:
        read_release(path)
    except (FormatError, MissingFileError):
        return False
    return True


@pytest.mark.parametrize("fmt", ["single", pytest.param("blocks", marks=pytest.mark.slow)])
def test_a_write_killed_at_any_step_leaves_nothing_that_loads(tmp_path, fmt):
    if not hasattr(signal, "SIGKILL"):
        pytest.skip("no SIGKILL on this platform")
    parent = tmp_path / "private"
    parent.mkdir()
    old = _write(fmt, parent / "p")
    killed_between_renames = 0
    for kill_at in range(1, 100):
        run = subprocess.run([sys.executable, "-c", _CHILD, str(parent), str(kill_at), fmt],
                             capture_output=True, text=True, timeout=120)
        if run.returncode == 0:
            break
        assert run.returncode == -signal.SIGKILL, run.stderr
        entries = sorted(parent.iterdir())
        loading = [e.name for e in entries if _loads(e)]
        assert loading in (["p"], []), (kill_at, [e.name for e in entries])
        for entry in entries:
            if entry.name != "p":  # a leftover: refused by every reader, never counted
                assert entry.name.startswith(".p.") and not _loads(entry)
                with pytest.raises(FormatError, match="temporary name|no meta.json"):
                    composed_epsilon([entry])
        killed_between_renames += loading == []
        # the next write of another folder beside it cleans up (and puts a missing p back)
        _write(fmt, parent / "q")
        assert sorted(e.name for e in parent.iterdir()) == ["p", "q"], kill_at
        assert _loads(parent / "p")
        if loading == []:
            assert read_release(parent / "p").release_sha256 == old  # the previous, complete
        for entry in parent.iterdir():
            if entry.name == "q":
                for file in entry.iterdir():
                    file.unlink()
                entry.rmdir()
    else:
        pytest.fail("the write never finished")
    steps = int(run.stdout.split()[-1])
    assert kill_at == steps + 1 and steps >= 8, steps  # every step was a place it died at
    assert killed_between_renames == 1  # the one step between the two renames
    assert os.listdir(parent) == ["p"] and read_release(parent / "p").release_sha256 != old
