"""Checkpoints of a chain: its point, its record so far, and what it was run with.

One ``.npz`` file written atomically (:func:`lpp.formats.files.atomic_writer`; numpy streams into it, so a
checkpoint of a large problem is never held twice in memory). A checkpoint is tied to its data
(a fingerprint), method, engine, model, seed, burn-in, thinning and what is saved, and it
carries a sha256 digest of all of that and of every array it holds (the chain's point and its
record). Resuming verifies the digest, refuses a run that differs in any of those settings, and
continues the chain bit for bit.

The digest guards against damage and hand edits (a truncated copy, a changed iteration count
or seed), not against someone who recomputes it: it is a checksum, not a signature.
"""
from __future__ import annotations

import hashlib
import json
import logging
import numbers
from pathlib import Path

import numpy as np

from lpp.formats.files import atomic_writer, remove_stale_temporaries

#: the checkpoint layout; a file of another version is refused
CHECKPOINT_VERSION = 3
#: the settings a resumed run must share with its checkpoint (besides the seed, when one is given)
RESUME_KEYS = ("method", "engine", "model", "burn_in", "thin", "save", "data")
#: what every refusal to resume tells the user to do instead
START_OVER = ("delete it, or pass resume=False to start the chain over (the file is then "
              "overwritten)")

log = logging.getLogger(__name__)


def _digest(arrays: dict) -> str:
    """sha256 of the arrays by name: each one's name, dtype, shape and bytes."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
        h.update(a.reshape(-1).view(np.uint8) if a.size else b"")
    return h.hexdigest()


def write_checkpoint(path, meta: dict, state: dict, aux: dict, record_arrays: dict) -> None:
    """Write the chain's ``state``, ``aux``, the record's arrays, ``meta`` and their digest."""
    arrays = {"meta": np.array(json.dumps(meta))}
    arrays.update({f"state__{k}": v for k, v in state.items()})
    arrays.update({f"aux__{k}": v for k, v in aux.items()})
    arrays.update(record_arrays)
    arrays["digest"] = np.array(_digest(arrays))
    with atomic_writer(Path(path)) as handle:
        np.savez(handle, **arrays)


def read_checkpoint(path):
    """``(meta, {"state", "aux", "samples"} groups of arrays, record arrays)`` of a checkpoint
    whose layout version and digest check out; a ValueError naming the file otherwise."""
    try:
        # our own handle: np.load leaves the one it opens unclosed when the zip is cut short
        with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays["meta"]))
        if not isinstance(meta, dict):
            raise ValueError("its metadata is not a JSON object")
    except Exception as exc:  # noqa: BLE001 - a damaged zip fails in many ways (BadZipFile,
        # EOFError, KeyError, NotImplementedError for a garbled compression method, ...)
        raise ValueError(f"checkpoint {path} cannot be read ({type(exc).__name__}: {exc}); it is "
                         f"truncated or corrupted: {START_OVER}") from None
    if meta.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"checkpoint {path} has layout version {meta.get('version')!r}, this "
                         f"lpp reads version {CHECKPOINT_VERSION}: {START_OVER}")
    stored = str(arrays.pop("digest", ""))
    if stored != _digest(arrays):
        raise ValueError(f"checkpoint {path} does not match the sha256 digest stored in it: it "
                         f"was edited or damaged, and resuming would continue another chain: "
                         f"{START_OVER}")
    del arrays["meta"]
    groups = {"state": {}, "aux": {}, "samples": {}}
    for key, value in arrays.items():
        if "__" in key:
            group, name = key.split("__", 1)
            groups[group][name] = value
    extra = {k: arrays[k] for k in ("saved_iterations", "log_joint", "iter_seconds", "mu_sum")
             if k in arrays}
    return meta, groups, extra


def check_resumable(path, saved_meta: dict, meta: dict) -> None:
    """Raise ValueError naming the first setting in which a checkpoint differs from the run."""
    for key in RESUME_KEYS:
        if saved_meta.get(key) != meta[key]:
            raise ValueError(f"checkpoint {path} was written with a different {key!r} "
                             f"({saved_meta.get(key)!r} != {meta[key]!r}); cannot resume: "
                             f"run with the checkpoint's settings, or {START_OVER}")


def _check_record(path, meta: dict, groups: dict, extra: dict) -> None:
    """The iteration count and the record must be those of the checkpoint's own schedule."""
    it, n_iter = meta.get("iteration"), meta.get("n_iter")
    burn_in, thin = meta["burn_in"], meta["thin"]
    problem = None
    if not (isinstance(it, int) and isinstance(n_iter, int) and 0 <= it <= n_iter):
        problem = f"iteration {it!r} is outside its schedule of n_iter={n_iter!r}"
    elif extra.get("iter_seconds", np.empty(0)).shape != (it,):
        problem = f"its record does not hold the {it} iterations it claims"
    else:
        saved = np.arange(burn_in + thin, it + 1, thin)
        if not np.array_equal(extra.get("saved_iterations"), saved):
            problem = "its saved iterations are not those of its burn_in and thin"
        elif extra["log_joint"].shape != saved.shape or any(
                groups["samples"].get(n, np.empty(0)).shape[:1] != saved.shape
                for n in meta["save"]):
            problem = "its saved samples do not match its saved iterations"
    if problem is not None:
        raise ValueError(f"checkpoint {path}: {problem}: {START_OVER}")


def open_checkpoint(path, meta: dict, *, n_iter: int, rng, resume: bool):
    """Make ``path`` ready for a run with ``meta`` (the run's settings) and return what to
    resume from: ``(saved meta, groups, record arrays)`` of :func:`read_checkpoint`, or None
    (no checkpoint, ``resume=False`` or no file yet).

    Temporary files that a killed write left beside ``path`` are removed first (only one run
    may use a checkpoint path at a time). A file that cannot be read, fails its digest, was
    written by a run with other settings, is at an iteration past ``n_iter``, or, when ``rng``
    is an int, has another seed is refused with a ValueError naming the file and what differs.
    ``rng`` None or a Generator takes the checkpoint's seed.
    """
    if path is None:  # lpp.inference.runner.checkpoint_path refused resume=True without one
        return None
    for stale in remove_stale_temporaries(path):
        log.warning("removed %s, left by a checkpoint write that was killed", stale)
    if not (resume and path.exists()):
        return None
    saved_meta, groups, extra = read_checkpoint(path)
    check_resumable(path, saved_meta, meta)
    _check_record(path, saved_meta, groups, extra)
    seed = saved_meta["seed"]
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng != seed:
        raise ValueError(f"checkpoint {path} continues the chain of seed {seed}, not rng={rng}: "
                         f"pass rng={seed} (or None) to continue it, or {START_OVER}")
    if saved_meta["iteration"] > n_iter:
        raise ValueError(f"checkpoint {path} is at iteration {saved_meta['iteration']}, past "
                         f"n_iter={n_iter}: pass n_iter >= {saved_meta['iteration']} to continue "
                         f"the chain (equal to return it as saved)")
    return saved_meta, groups, extra
