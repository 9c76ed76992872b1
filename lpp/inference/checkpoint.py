"""Checkpoints of a chain: its point, its record so far, and what it was run with.

One ``.npz`` file written atomically (:func:`lpp.io.atomic_writer`; numpy streams into it, so a
checkpoint of a large problem is never held twice in memory). A checkpoint is tied to its data
(a fingerprint), method, engine, model, burn-in, thinning and what is saved; resuming checks
them all and continues the chain bit for bit.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from lpp.io import atomic_writer

#: the checkpoint layout; a file of another version is refused
CHECKPOINT_VERSION = 2
#: the settings a resumed run must share with its checkpoint
RESUME_KEYS = ("version", "method", "engine", "model", "burn_in", "thin", "save", "data")


def write_checkpoint(path, meta: dict, state: dict, aux: dict, record_arrays: dict) -> None:
    """Write the chain's ``state``, ``aux``, the record's arrays and ``meta`` to ``path``."""
    arrays = {"meta": np.array(json.dumps(meta))}
    arrays.update({f"state__{k}": v for k, v in state.items()})
    arrays.update({f"aux__{k}": v for k, v in aux.items()})
    arrays.update(record_arrays)
    path = Path(path)
    with atomic_writer(path) as handle:
        np.savez(handle, **arrays)


def read_checkpoint(path):
    """``(meta, {"state", "aux", "samples"} groups of arrays, record arrays)`` of a checkpoint."""
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        groups = {"state": {}, "aux": {}, "samples": {}}
        for key in z.files:
            if "__" in key:
                group, name = key.split("__", 1)
                groups[group][name] = z[key]
        extra = {k: z[k] for k in ("saved_iterations", "log_joint", "iter_seconds", "mu_sum")
                 if k in z.files}
    return meta, groups, extra


def check_resumable(path, saved_meta: dict, meta: dict) -> None:
    """Raise ValueError naming the first setting in which a checkpoint differs from the run."""
    for key in RESUME_KEYS:
        if saved_meta.get(key) != meta[key]:
            raise ValueError(f"checkpoint {path} was written with a different {key!r} "
                             f"({saved_meta.get(key)!r} != {meta[key]!r}); cannot resume")
