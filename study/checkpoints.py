"""Where a pipeline fit keeps its checkpoints, so that an infer stage cut short continues its
chains instead of starting them over.

A fit's chains checkpoint to ``<out_dir>.checkpoints/<key>.npz`` (chain c >= 1 beside it, see
:func:`lpp.inference.fit.chain_checkpoint`). The key is a digest of everything that decides the
chain apart from its length: the data's files, the model, the method, the start, the seed, the
schedule's burn-in and thinning, and whether the held-out mask is used. A stage rerun with the
same key continues where the interrupted run stopped, bit for bit (``fit_private(...,
resume=True)``), and may run its chains longer (a larger ``n_iter``); a stage whose settings or
data changed gets another key, and the checkpoints of the old key are removed, never resumed.
The folder is deleted once the fit is saved.

Checkpoints hold the chain's point and its record so far, the same kind of content as the
fit it becomes: a private fit's checkpoint is on the private side of the boundary, like its
fit. They are neither pipeline outputs nor committed (``.gitignore``: ``*.checkpoints/``).
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

#: what a fit's checkpoint folder adds to the name of its output folder
SUFFIX = ".checkpoints"
#: how often a pipeline fit checkpoints, in iterations
EVERY = 100


def _data_digest(data_dir) -> str:
    """sha256 over the names and bytes of the files under ``data_dir``, in sorted order."""
    h = hashlib.sha256()
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"the fit's data folder {root} does not exist")
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                h.update(block)
    return h.hexdigest()


def folder(out_dir) -> Path:
    """The checkpoint folder of the fit written to ``out_dir``: a sibling of it."""
    out = Path(out_dir)
    if not out.name:
        raise ValueError(f"out_dir {str(out_dir)!r} names no folder")
    return out.with_name(out.name + SUFFIX)


def stage_checkpoint(out_dir, data_dir, **settings) -> Path:
    """The checkpoint path of the fit written to ``out_dir`` from the data in ``data_dir``
    with ``settings`` (JSON-serialisable; leave out ``n_iter``, which may grow, and
    ``n_chains``: chain c's file does not depend on how many chains run). Checkpoints of other
    keys in the fit's folder are removed."""
    key_text = json.dumps({"data": _data_digest(data_dir), **settings}, sort_keys=True)
    key = hashlib.sha256(key_text.encode()).hexdigest()[:20]
    where = folder(out_dir)
    if where.is_dir():
        for stale in where.iterdir():
            if not stale.name.startswith(key + "."):
                if stale.is_dir():
                    shutil.rmtree(stale)
                else:
                    stale.unlink()
    where.mkdir(parents=True, exist_ok=True)
    return where / f"{key}.npz"


def resuming(checkpoint) -> bool:
    """Whether a run with ``checkpoint`` continues an interrupted one."""
    return Path(checkpoint).exists()


def clear(out_dir) -> None:
    """Remove the fit's checkpoints (its output is saved)."""
    shutil.rmtree(folder(out_dir), ignore_errors=True)
