"""Where a pipeline fit keeps its checkpoints, so that an infer stage cut short continues its
chains instead of starting them over.

A fit's chains checkpoint to ``<out_dir>.checkpoints/<key>.npz`` (chain c >= 1 beside it, see
:func:`lpp.inference.fit.chain_checkpoint`). The key is a digest of everything that decides the
chain apart from its length: the data's files, the model, the method, the start, the seed, the
schedule's burn-in and thinning, whether the held-out mask is used, and the device the sweeps
run on. A stage rerun with the
same key continues where the interrupted run stopped, bit for bit (``fit_private(...,
resume=True)``), and may run its chains longer (a larger ``n_iter``); a stage whose settings or
data changed gets another key, and the checkpoints of the old key are removed, never resumed.
The folder is deleted once the fit is saved.

A stage can also run on the chains of its *finished* fit. ``python profiles/run.py
--continue-chains`` moves such a fit aside to ``<out_dir>.previous`` before DVC reruns the stage
(with a larger ``n_iter``, or burn-in), after checking with DVC that the stage's data are the
ones the fit was made from; the notebook then writes checkpoints at the end of its chains
(:func:`continue_previous`, :func:`lpp.inference.checkpoints_from_fit`), and the run continues
them as if they had never stopped. The data are checked against the fit's recorded fingerprint,
or, for a fit saved before fits recorded one, against the digest of the stage's data taken when
the fit was set aside. The folder set aside is deleted with the checkpoints.

Checkpoints hold the chain's point and its record so far, the same kind of content as the
fit it becomes: a private fit's checkpoint is on the private side of the boundary, like its
fit. They are neither pipeline outputs nor committed (``.gitignore``: ``*.checkpoints/``,
``*.previous/``).
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

#: what a fit's checkpoint folder adds to the name of its output folder
SUFFIX = ".checkpoints"
#: what a finished fit set aside to be continued adds to the name of its output folder
PREVIOUS_SUFFIX = ".previous"
#: the note beside a fit set aside: the digest of the data it was made from
PREVIOUS_NOTE = "continue.json"
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


def previous_folder(out_dir) -> Path:
    """Where ``profiles/run.py --continue-chains`` sets the finished fit of ``out_dir`` aside."""
    out = folder(out_dir)
    return out.with_name(out.name[:-len(SUFFIX)] + PREVIOUS_SUFFIX)


def set_aside(out_dir, *, data_dir=None) -> Path | None:
    """Move the finished fit in ``out_dir`` to :func:`previous_folder` (replacing one set
    aside earlier); None where there is no fit. ``data_dir``: the folder the fit was made from,
    as its stage's DVC record shows (its digest is noted beside the fit, so that a fit that
    recorded no fingerprint of its data can be checked against the data the stage runs on)."""
    out, aside = Path(out_dir), previous_folder(out_dir)
    if not (out / "fit.json").is_file():
        return None
    note = {} if data_dir is None else {"data": str(data_dir),
                                        "data_digest": _data_digest(data_dir)}
    shutil.rmtree(aside, ignore_errors=True)
    out.rename(aside)
    (aside / PREVIOUS_NOTE).write_text(json.dumps(note))
    return aside


def continue_previous(out_dir, checkpoint, make_chain, *, data_dir, burn_in: int,
                      thin: int) -> bool:
    """Write the checkpoints from which the fit's run continues the chains of the fit set aside
    for ``out_dir`` (:func:`set_aside`); True if it did, False where none was set aside or a
    checkpoint exists already (an interrupted continuation goes on from it).

    ``make_chain(seed)`` builds a chain of the stage on its data in ``data_dir`` (its start is
    replaced). The data are checked against the fingerprint the fit recorded or, for a fit that
    recorded none, against the digest noted when it was set aside. A fit that cannot be
    continued under the stage's settings (other data, another thin, a shorter burn-in, another
    model...) is a ValueError saying so: delete the folder to start the chains over."""
    aside = previous_folder(out_dir)
    if not (aside / "fit.json").is_file() or resuming(checkpoint):
        return False
    from lpp.inference import checkpoints_from_fit

    note = aside / PREVIOUS_NOTE
    noted = json.loads(note.read_text()).get("data_digest") if note.is_file() else None
    trusted = noted is not None and noted == _data_digest(data_dir)
    try:
        checkpoints_from_fit(aside, make_chain, checkpoint, burn_in=burn_in, thin=thin,
                             trust_data=trusted)
    except ValueError as exc:
        raise ValueError(f"{exc}; delete {aside} to start the stage's chains over") from None
    return True


def clear(out_dir) -> None:
    """Remove the fit's checkpoints and any fit set aside for it (its output is saved)."""
    shutil.rmtree(folder(out_dir), ignore_errors=True)
    shutil.rmtree(previous_folder(out_dir), ignore_errors=True)
