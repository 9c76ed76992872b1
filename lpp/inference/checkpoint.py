"""Checkpoints of a chain: its point, its record so far, and what it was run with.

One ``.npz`` file of its own format, ``lpp.checkpoint`` (recorded in its metadata, its
zip's first member: :mod:`lpp.formats.kinds` tells it from a saved fit), written atomically (:func:`lpp.formats.files.atomic_writer`; numpy streams into it, so a
checkpoint of a large problem is never held twice in memory). A checkpoint is tied to its data
(a fingerprint), method, engine, model, seed, burn-in, thinning and what is saved, and it
carries a sha256 digest of all of that and of every array it holds (the chain's point and its
record). Resuming verifies the digest, refuses a run that differs in any of those settings, and
continues the chain bit for bit.

The digest guards against damage and hand edits (a truncated copy, a changed iteration count
or seed), not against someone who recomputes it: it is a checksum, not a signature. So the
content is checked as well, digest or not: only the arrays a checkpoint holds, each of real
numbers and finite (a second per iteration may be NaN: not timed), the record consistent with
the schedule, every saved draw of a latent the shape of the latent, and the arrays of the
data's shape (the rates' running sum, the saved true counts, a privacy step's auxiliary
arrays) of one shape that fits the model's latents. A refusal is a ValueError naming the file
and the array or setting.
"""
from __future__ import annotations

import hashlib
import json
import logging
import numbers
from pathlib import Path

import numpy as np

from lpp.formats.files import atomic_writer, remove_stale_temporaries
from lpp.formats.kinds import CHECKPOINT_FORMAT, CHECKPOINT_META, wrong_kind
from lpp.inference.engines.collapsed_phi import CARRIED
from lpp.inference.models import model_from_params

#: the checkpoint layout; a file of another version is refused
CHECKPOINT_VERSION = 3
#: the settings a resumed run must share with its checkpoint (besides the seed, when one is given)
RESUME_KEYS = ("method", "engine", "model", "burn_in", "thin", "save", "data")
#: what every refusal to resume tells the user to do instead
START_OVER = ("delete it, or pass resume=False to start the chain over (the file is then "
              "overwritten)")
#: the groups of arrays a checkpoint holds (``<group>__<name>``) and its record's arrays
GROUPS = ("state", "aux", "samples")
RECORD_ARRAYS = ("saved_iterations", "log_joint", "iter_seconds", "mu_sum")
#: the auxiliary arrays each built-in method keeps between sweeps, all of the data's shape
#: (the noise rates of :class:`lpp.inference.privacy.BesselPrivacy`; the others keep none)
BUILT_IN_AUX = {"collapsed": (), "naive": (), "nonprivate": (),
                "bessel": ("lam_plus", "lam_minus")}
#: stands for an array a checkpoint lacks: its shape is no record's
_ABSENT = np.empty((0, 0))

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
    """Write the chain's ``state``, ``aux``, the record's arrays, ``meta`` (with the format's
    name) and their digest."""
    # meta first: a checkpoint damaged past its metadata is still known by its first member
    arrays = {CHECKPOINT_META: np.array(json.dumps({"format": CHECKPOINT_FORMAT, **meta}))}
    arrays.update({f"state__{k}": v for k, v in state.items()})
    arrays.update({f"aux__{k}": v for k, v in aux.items()})
    arrays.update(record_arrays)
    arrays["digest"] = np.array(_digest(arrays))
    with atomic_writer(Path(path)) as handle:
        np.savez(handle, **arrays)


def read_checkpoint(path):
    """``(meta, {"state", "aux", "samples"} groups of arrays, record arrays)`` of a checkpoint
    whose format, layout version and digest check out; a ValueError naming the file otherwise
    (a saved fit's data file handed as a checkpoint included). A checkpoint written before
    checkpoints named their format (none recorded) is read as one."""
    problem = wrong_kind(path, CHECKPOINT_FORMAT)
    if problem is not None:
        raise ValueError(f"{problem}: to run a saved fit's chains on, write their checkpoints "
                         "with lpp.inference.checkpoints_from_fit")
    try:
        # our own handle: np.load leaves the one it opens unclosed when the zip is cut short
        with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(str(arrays[CHECKPOINT_META]))
        if not isinstance(meta, dict):
            raise ValueError("its metadata is not a JSON object")
    except Exception as exc:  # noqa: BLE001 - a damaged zip fails in many ways (BadZipFile,
        # EOFError, KeyError, NotImplementedError for a garbled compression method, ...)
        raise ValueError(f"checkpoint {path} cannot be read ({type(exc).__name__}: {exc}); it is "
                         f"truncated or corrupted: {START_OVER}") from None
    if meta.get("format", CHECKPOINT_FORMAT) != CHECKPOINT_FORMAT:
        raise ValueError(f"checkpoint {path} records format {meta.get('format')!r}, not "
                         f"{CHECKPOINT_FORMAT!r}: {START_OVER}")
    if meta.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"checkpoint {path} has layout version {meta.get('version')!r}, this "
                         f"lpp reads version {CHECKPOINT_VERSION}: {START_OVER}")
    stored = str(arrays.pop("digest", ""))
    if stored != _digest(arrays):
        raise ValueError(f"checkpoint {path} does not match the sha256 digest stored in it: it "
                         f"was edited or damaged, and resuming would continue another chain: "
                         f"{START_OVER}")
    del arrays[CHECKPOINT_META]
    groups = {group: {} for group in GROUPS}
    extra = {}
    for key, value in arrays.items():
        group, sep, name = key.partition("__")
        if sep and name and group in groups:
            groups[group][name] = value
        elif key in RECORD_ARRAYS:
            extra[key] = value
        else:
            raise ValueError(f"checkpoint {path}: array {key!r} is not part of a checkpoint: "
                             f"{START_OVER}")
        _check_values(path, key, value)
    return meta, groups, extra


def _check_values(path, key: str, value: np.ndarray) -> None:
    """Real numbers, all finite (``iter_seconds``: non-negative or NaN, not timed)."""
    problem = None
    if value.dtype.kind not in "iuf":
        problem = f"has dtype {value.dtype}, not real numbers"
    elif key == "saved_iterations" and value.dtype.kind not in "iu":
        problem = "holds no integers"
    elif key == "iter_seconds":
        if np.any(np.isinf(value)) or np.any(value < 0):
            problem = "holds negative or infinite seconds"
    elif value.dtype.kind == "f" and not np.isfinite(value).all():
        problem = "holds NaN or infinite values"
    if problem is not None:
        raise ValueError(f"checkpoint {path}: array {key!r} {problem}; resuming would continue "
                         f"a broken chain: {START_OVER}")


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
    seed = meta.get("seed")
    problem = None
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        problem = f"its seed {seed!r} is not a non-negative integer"
    elif not (isinstance(it, int) and isinstance(n_iter, int) and 0 <= it <= n_iter):
        problem = f"iteration {it!r} is outside its schedule of n_iter={n_iter!r}"
    elif extra.get("iter_seconds", np.empty(0)).shape != (it,):
        problem = f"its record does not hold the {it} iterations it claims"
    else:
        saved = np.arange(burn_in + thin, it + 1, thin)
        if not np.array_equal(extra.get("saved_iterations"), saved):
            problem = "its saved iterations are not those of its burn_in and thin"
        elif extra.get("log_joint", _ABSENT).shape != saved.shape or any(
                groups["samples"].get(n, _ABSENT).shape[:1] != saved.shape
                for n in meta["save"]):
            problem = "its saved samples do not match its saved iterations"
    if problem is None:
        problem = _check_shapes(meta, groups, extra)
    if problem is not None:
        raise ValueError(f"checkpoint {path}: {problem}: {START_OVER}")


def _check_shapes(meta: dict, groups: dict, extra: dict) -> str | None:
    """What is wrong with the shapes of a checkpoint's arrays, or None.

    Every saved draw of a latent has the latent's shape; the arrays of the data's shape (the
    rates' running sum, the saved true counts, a built-in method's auxiliary arrays) agree on
    one shape, and the model (when ``lpp.inference.model_from_params`` rebuilds it from
    ``meta["model"]``) gives latents of exactly the state's shapes for data of that shape.
    """
    state, aux, samples = groups["state"], groups["aux"], groups["samples"]
    for name in meta["save"]:
        draws = samples[name]
        if name in state and draws.shape[0] and draws.shape[1:] != state[name].shape:
            return (f"its saved draws of {name!r} have shape {draws.shape[1:]}, its state "
                    f"{state[name].shape}")
    data_shaped = {}
    if "mu_sum" in extra:
        data_shaped["mu_sum"] = extra["mu_sum"].shape
    if "y" in samples and "y" not in state and samples["y"].ndim > 1:
        data_shaped["samples__y"] = samples["y"].shape[1:]
    built_in = BUILT_IN_AUX.get(meta.get("method"))
    if built_in is not None:
        # a collapse_phi chain carries its tokens' topics too (none before its first sweep)
        model_params = meta.get("model")
        carried = (CARRIED if isinstance(model_params, dict) and model_params.get("collapse_phi")
                   else ())
        if sorted(aux) not in (sorted(built_in), sorted(built_in + carried)):
            return (f"its auxiliary arrays {sorted(aux)} are not those of method "
                    f"{meta.get('method')!r} ({sorted(built_in + carried)})")
        data_shaped.update({f"aux__{name}": aux[name].shape for name in built_in})
    if len(set(data_shaped.values())) > 1:
        return f"its arrays of the data's shape disagree ({data_shaped})"
    if not data_shaped:
        return None
    shape = next(iter(data_shaped.values()))
    try:
        model = model_from_params(meta["model"])
    except (TypeError, ValueError, KeyError):
        return None  # a model of the user's: its check_state checks the state on restore
    try:
        latents = model.latent_shapes(shape)
    except (TypeError, ValueError) as exc:
        return f"its arrays of the data's shape {shape} do not fit its model ({exc})"
    found = {name: value.shape for name, value in state.items()}
    if found != latents:
        return (f"its state {found} is not that of its model for data of shape {shape} "
                f"({latents})")
    return None


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
