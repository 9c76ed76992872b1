"""Atomic, byte-reproducible file writing shared by data_prep, the pipeline and bench, and the
checks that every reader applies to what it finds on disk.

The on-disk formats (:mod:`lpp.formats.counts`, :mod:`lpp.formats.privatized`, :mod:`lpp.formats.fits`) are all a data
file plus JSON metadata that records its sha256, written by :func:`write_verified` and read
back by :func:`read_verified`; checkpoints stream into :func:`atomic_writer`, whose temporary
files a killed writer leaves behind are removed by :func:`remove_stale_temporaries`.

A reader never sees a half-written file: everything is written to a temporary file in the
target's directory and renamed into place. ``npz_bytes`` fixes the zip timestamps so the same
arrays always give the same bytes (DVC hashes them). A folder that must never mix two writes
(a privatized data set: stale noisy copies of the same counts would average the noise away)
is built whole beside its target by :func:`atomic_folder` and swapped in by a rename.

Nothing read from disk is trusted: a sha256 guards against damage, not against a file forged
with its digest recomputed. The readers check every field they use (:func:`read_json_object`,
:func:`meta_field`, :func:`confined_file`, :func:`read_npz`, :func:`integer_member`,
:func:`finite_member`) and refuse with a :class:`FormatError` (a ``ValueError``) that names the
file and the field.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import math
import numbers
import os
import re
import secrets
import shutil
import tempfile
import zipfile
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; leftovers are then cleaned by their own folder's writes
    fcntl = None

import numpy as np

log = logging.getLogger(__name__)

_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
#: the temporary file of a write of ``name`` is ``.name.<random, no dot>.tmp``, beside it
_TMP_SUFFIX = ".tmp"
#: a folder being replaced by :func:`atomic_folder` waits as ``.name.<random, no dot>.old``
_OLD_SUFFIX = ".old"


class FormatError(ValueError):
    """A file that lpp cannot use: damaged, forged, or not of the format asked for.

    The message names the file and, where one is at fault, the field (a metadata key or an
    array of the data file).
    """


class MissingFileError(FormatError, FileNotFoundError):
    """A file or folder that is not there (also a ``FileNotFoundError``)."""


def _tmp_prefix(path: Path) -> str:
    return f".{path.name}."


_LEFTOVER = re.compile(r"\.(.+)\.[^./]+\.(tmp|old)")


def is_leftover(name: str) -> bool:
    """Whether ``name`` is a temporary name of this module's writes: ``.NAME.<random>.tmp`` (a
    file or folder being written) or ``.NAME.<random>.old`` (a folder being replaced). What
    such a name holds is either unfinished or superseded, so no reader takes it."""
    return _LEFTOVER.fullmatch(name) is not None


def _is_temporary(name: str, prefix: str, suffix: str) -> bool:
    # the random middle has no dot, so the temporaries of "name.x" are not taken for "name"'s
    middle = name[len(prefix):-len(suffix)]
    return name.startswith(prefix) and name.endswith(suffix) and bool(middle) and "." not in middle


@contextlib.contextmanager
def atomic_writer(path):
    """Open a temporary file beside ``path`` for writing; on a clean exit it is flushed,
    synced and renamed onto ``path``, on an exception (Ctrl-C included) it is removed.
    ``path``'s folder is created if missing.

    For outputs too large to build in memory first (checkpoints stream ``numpy.savez`` into it).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(dir=path.parent, prefix=_tmp_prefix(path),
                                         suffix=_TMP_SUFFIX, delete=False)
    try:
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, 0o644)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def remove_stale_temporaries(path) -> list[Path]:
    """Remove the temporary files of :func:`atomic_writer` beside ``path`` (its removed paths).

    A writer killed mid-write (SIGKILL, power loss) cannot remove its temporary file; call this
    before writing ``path`` again when no other process writes it at the same time (it would
    remove that writer's file too).
    """
    path = Path(path)
    prefix = _tmp_prefix(path)
    if not path.parent.is_dir():
        return []
    removed = []
    for entry in path.parent.iterdir():
        if _is_temporary(entry.name, prefix, _TMP_SUFFIX) and entry.is_file():
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


def atomic_write_bytes(path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` through a temporary file and an atomic rename."""
    with atomic_writer(path) as handle:
        handle.write(payload)


# ----- whole folders -------------------------------------------------------------------------

def remove_stale_folders(path) -> list[Path]:
    """Clean up, beside ``path``, after :func:`atomic_folder` writes that were killed; return
    what was removed or restored.

    Every folder of ``path``'s parent that bears a temporary name (:func:`is_leftover`) and
    whose writer is gone is removed: a temporary folder (``.NAME.<random>.tmp``) of a killed
    write, and a folder being replaced (``.NAME.<random>.old``) — unless the write was killed
    between its two renames and ``NAME`` is missing: then the previous folder is put back (it
    was complete). A write in progress holds a lock on its folders (``flock``, released by the
    operating system when its process dies, SIGKILL included), so another process's write
    beside it is left alone. Where the platform has no ``flock`` (Windows), only the leftovers
    of ``path`` itself are cleaned, and no other process may write it at the same time.
    """
    path = Path(path)
    parent = path.parent
    if not parent.is_dir():
        return []
    done = []
    for entry in sorted(parent.iterdir()):
        match = _LEFTOVER.fullmatch(entry.name)
        if match is None or entry.is_symlink() or not entry.is_dir():
            continue
        if fcntl is None and match.group(1) != path.name:
            continue  # without locks another process's write cannot be told from a dead one
        with _lock_if_abandoned(entry) as abandoned:
            if not abandoned:
                continue
            target = parent / match.group(1)
            if match.group(2) == "old" and not os.path.lexists(target):
                os.rename(entry, target)
                log.warning("restored %s from %s, left by a write that was killed", target,
                            entry)
            else:
                shutil.rmtree(entry, ignore_errors=True)
        done.append(entry)
    return done


@contextlib.contextmanager
def _lock_if_abandoned(folder: Path):
    """Yield whether no live writer holds ``folder``'s lock, holding it meanwhile if so (so
    that its writer, were it only starting, finds its folder gone and starts again)."""
    if fcntl is None:
        yield True
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # gone already, or not ours to open
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _hold(folder: Path) -> int | None:
    """Lock ``folder`` for this process until the returned descriptor is closed (None where
    there is no ``flock``); raises FileNotFoundError when a cleaner removed it first."""
    if fcntl is None:
        return None
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits out a cleaner's look at it
        if not os.path.samestat(os.fstat(fd), os.stat(folder)):
            raise FileNotFoundError(folder)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def _new_temporary_folder(path: Path) -> tuple[Path, int | None]:
    """A new ``.NAME.<random>.tmp`` folder beside ``path``, locked by this process."""
    for _ in range(100):
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=_tmp_prefix(path),
                                    suffix=_TMP_SUFFIX))
        try:
            return tmp, _hold(tmp)
        except FileNotFoundError:  # another write's cleaner took it for a dead one's
            continue
    raise OSError(f"could not keep a temporary folder beside {path}: another process keeps "
                  "removing them")


def _check_replaceable(path: Path, owns) -> None:
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir():
        raise FormatError(f"{path} exists and is not a folder (or is a symbolic link): refusing "
                          "to replace it; remove it or write elsewhere")
    foreign = sorted(e.name for e in path.iterdir()
                     if not (owns(e.name) or (e.name.startswith(".")
                                              and e.name.endswith(_TMP_SUFFIX))))
    if foreign:
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise FormatError(f"{path} holds {len(foreign)} file(s) that this format does not write "
                          f"({shown}); the folder is replaced whole, so it is left alone: write "
                          "to a new folder, or empty this one")


def _fsync_folder(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a platform that cannot open folders: the renames are still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_folder(path, *, owns):
    """Build the folder ``path`` whole under a temporary sibling and swap it in on a clean exit.

    Yields the temporary folder (``.name.<random>.tmp`` beside ``path``) to write into. On a
    clean exit it replaces ``path``: the previous folder is renamed aside
    (``.name.<random>.old``), the new one renamed to ``path``, and then the previous one is
    removed; so the previous folder stays complete until the new one is, and nothing of it
    survives into the new one. On an exception (Ctrl-C included) the temporary folder is
    removed and ``path`` is left as it was. The temporary folder, and the previous one while
    it waits aside, are locked by this process; the leftovers of killed writes of any folder
    beside ``path`` are cleaned up first (:func:`remove_stale_folders`), and no reader of lpp's
    formats takes a folder under such a name in the meantime (:func:`read_meta`), so a killed
    write never leaves a second copy that loads.

    ``owns(name)`` says whether a file name is one this format writes: an existing ``path``
    that holds anything else is not replaced (a :class:`FormatError`), so a mistyped output
    folder cannot wipe out someone's files.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for entry in remove_stale_folders(path):
        log.warning("cleaned up %s, left by a write beside %s that was killed", entry, path)
    _check_replaceable(path, owns)
    tmp, tmp_lock = _new_temporary_folder(path)
    old_lock = None
    try:
        yield tmp
        os.chmod(tmp, 0o755)
        _fsync_folder(tmp)
        _check_replaceable(path, owns)
        if os.path.lexists(path):
            old_lock = _hold(path)  # aside, it is still a live write's until it is removed
            old = path.parent / f"{_tmp_prefix(path)}{secrets.token_hex(8)}{_OLD_SUFFIX}"
            os.rename(path, old)
            try:
                os.rename(tmp, path)
            except BaseException:
                os.rename(old, path)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, path)
        _fsync_folder(path.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        _release(old_lock)
        _release(tmp_lock)


# ----- canonical bytes -----------------------------------------------------------------------

def json_bytes(obj) -> bytes:
    """Canonical JSON bytes (key order as given, 1-space indent, ASCII, trailing newline)."""
    return (json.dumps(obj, indent=1, ensure_ascii=True, allow_nan=False) + "\n").encode()


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """A compressed ``.npz`` whose bytes depend only on the arrays (fixed zip timestamps)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o644 << 16
            archive.writestr(info, _npy_bytes(array), compresslevel=6)
    return buffer.getvalue()


def write_json(path, obj) -> Path:
    """Write ``obj`` as canonical JSON to ``path`` atomically; returns the path."""
    path = Path(path)
    atomic_write_bytes(path, json_bytes(obj))
    return path


# ----- reading what is on disk, trusting nothing ----------------------------------------------

def _refuse_constant(name):
    raise ValueError(f"{name} is not a JSON number")


#: the deepest nesting of objects and lists a metadata file may have (every format writes 4 at
#: most); deeper JSON is refused before it is parsed, since Python's parser recurses once per
#: level and a file nested a few thousand deep would end in a RecursionError
MAX_JSON_DEPTH = 32
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_depth(text: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in the JSON ``text``, brackets inside strings
    not counted (a regular expression drops the strings; numpy adds up the rest)."""
    code = np.frombuffer(_JSON_STRING.sub(b"", text), dtype=np.uint8)
    step = ((code == ord("[")) | (code == ord("{"))).astype(np.int32) \
        - ((code == ord("]")) | (code == ord("}"))).astype(np.int32)
    return int(np.cumsum(step).max(initial=0))


def read_json_object(path) -> dict:
    """The JSON object in the file ``path``; a :class:`FormatError` naming the file otherwise
    (not UTF-8, not JSON, NaN or Infinity, nested deeper than :data:`MAX_JSON_DEPTH`, or not
    an object)."""
    path = Path(path)
    try:
        text = path.read_bytes()
        # a text with few opening brackets in all is at most that deep: counting them spares
        # the scan for strings of every metadata file lpp writes
        opening = text.count(b"[") + text.count(b"{")
        if opening > MAX_JSON_DEPTH and json_depth(text) > MAX_JSON_DEPTH:
            raise FormatError(f"{path}: nested deeper than {MAX_JSON_DEPTH} levels of objects "
                              "and lists: not a file lpp writes")
        obj = json.loads(text.decode("utf-8"), parse_constant=_refuse_constant)
    except FileNotFoundError:
        raise MissingFileError(f"{path}: no such file") from None
    except FormatError:
        raise
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise FormatError(f"{path}: not a readable JSON file ({type(exc).__name__}: {exc})") \
            from None
    if not isinstance(obj, dict):
        raise FormatError(f"{path}: holds a JSON {type(obj).__name__}, not an object of fields")
    return obj


def folder_format(path, meta_file: str) -> str | None:
    """The ``format`` that the metadata file ``meta_file`` of the folder ``path`` names; None
    when ``path`` is not such a folder or its metadata is not a readable JSON object (for a
    caller that tells apart what it was handed, before the format's own reader checks it)."""
    if not isinstance(path, (str, Path)) or not (Path(path) / meta_file).is_file():
        return None
    try:
        meta = read_json_object(Path(path) / meta_file)
    except (FormatError, MissingFileError):
        return None
    return meta.get("format")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def meta_field(meta: dict, key: str, path, kind: str = "any", *, length: int | None = None,
          choices=None):
    """``meta[key]`` checked for ``kind``; a :class:`FormatError` naming ``path`` and ``key``.

    Kinds: ``"any"``, ``"str"``, ``"bool"``, ``"int"`` (a non-negative integer, never a bool),
    ``"number"`` (a finite real > 0), ``"dict"``, ``"str_list"`` and ``"int_list"`` (lists of
    them; ``length`` fixes the length). ``choices`` restricts the value.
    """
    if key not in meta:
        raise FormatError(f"{path}: field {key!r} is missing")
    value = meta[key]

    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    ok = {
        "any": lambda v: True,
        "str": lambda v: isinstance(v, str),
        "bool": lambda v: isinstance(v, bool),
        "int": is_int,
        "number": lambda v: (isinstance(v, numbers.Real) and not isinstance(v, bool)
                             and math.isfinite(v) and v > 0),
        "dict": lambda v: isinstance(v, dict),
        "str_list": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "int_list": lambda v: isinstance(v, list) and all(is_int(x) for x in v),
    }[kind]
    expected = {"any": "a value", "str": "a string", "bool": "true or false",
                "int": "a non-negative integer", "number": "a finite number > 0",
                "dict": "an object", "str_list": "a list of strings",
                "int_list": "a list of non-negative integers"}[kind]
    if not ok(value):
        raise FormatError(f"{path}: field {key!r} must be {expected}, got {_shown(value)}")
    if length is not None and len(value) != length:
        raise FormatError(f"{path}: field {key!r} has {len(value)} entries, expected {length}")
    if choices is not None and value not in choices:
        raise FormatError(f"{path}: field {key!r} must be one of {tuple(choices)}, got "
                          f"{_shown(value)}")
    return value


def known_fields(meta: dict, path, known) -> None:
    """Refuse a field of ``meta`` (read from ``path``) that the format never writes: a forged
    field (a ``y_sum`` beside the noised counts, say) must not travel with the data as if the
    format vouched for it. A :class:`FormatError` naming the file and the field."""
    unknown = sorted(set(meta) - set(known))
    if unknown:
        raise FormatError(f"{path}: field {unknown[0]!r:.60} is not part of this format")


def confined_file(folder, name, path, key: str) -> Path:
    """The file ``name`` of ``folder``, which the metadata ``path`` names under ``key``.

    ``name`` must be a plain file name (no folder part, no ``..``, not absolute), and the file
    a regular file that resolves inside ``folder`` (a symbolic link out of it is refused: a
    folder must not hand a reader some other data set). A :class:`FormatError` (a
    :class:`MissingFileError` if it is not there) names ``path`` and ``key`` otherwise.
    """
    folder = Path(folder)
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name \
            or "\0" in name or os.path.isabs(name):
        raise FormatError(f"{path}: field {key!r} must name a file inside {folder} (no folder "
                          f"part, no '..', not absolute), got {_shown(name)}")
    target = folder / name
    if not os.path.lexists(target):
        raise MissingFileError(f"{target}, which {path} names under {key!r}, does not exist")
    resolved, home = target.resolve(), folder.resolve()
    if home not in resolved.parents:
        raise FormatError(f"{target} ({path}, field {key!r}) is a link to {resolved}, outside "
                          f"its folder {folder}: refused")
    if not resolved.is_file():
        raise FormatError(f"{target} ({path}, field {key!r}) is not a regular file")
    return target


def read_bytes(path) -> bytes:
    """The bytes of ``path``; a :class:`FormatError` naming it when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise MissingFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise FormatError(f"{path}: cannot be read ({type(exc).__name__}: {exc})") from None


def read_npz(payload: bytes, path, *, required=(), optional=(), prefixes=(),
             expect: dict | None = None) -> dict:
    """The arrays of the ``.npz`` ``payload`` (read from ``path``), checked before they are read.

    Every member's ``.npy`` header is read first, and nothing else until all of them pass: a
    member must be named ``NAME.npy`` (once), hold no Python objects, and declare in the zip
    exactly the uncompressed size its header implies (the zip reader stops at the declared
    size, so a forged member that inflates to more than its shape is refused, not
    decompressed). Every name of ``required`` must be there; any name not in ``required`` or
    ``optional`` and not starting with one of ``prefixes`` is refused (a forged file must not
    smuggle in data the format never holds). ``expect`` maps a name to ``(kinds, shapes)``:
    the dtype kinds its header may give (``"iu"`` for integers, as ``numpy.dtype.kind``) and
    the shapes it may have (None: any), checked against the header before the data are read.
    Only then are the arrays read, into memory. A :class:`FormatError` naming ``path`` (and
    the array) otherwise.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as archive, contextlib.ExitStack() as opened:
            headers = {}
            for info in archive.infolist():
                member = opened.enter_context(archive.open(info))
                name, header = _member_header(member, info, path)
                if name in headers:
                    raise FormatError(f"{path}: array {name!r} appears twice")
                headers[name] = (member, *header)
            _check_members(headers, path, required, optional, prefixes, expect or {})
            # each member is read on from the end of its header: exactly the bytes the header
            # implies, which is where the zip's declared size ends (so its CRC is checked)
            arrays = {name: _member_data(member, dtype, shape, fortran)
                      for name, (member, dtype, shape, fortran) in headers.items()}
    except FormatError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged zip fails in many ways (BadZipFile,
        # EOFError, ValueError, zlib.error, a CRC mismatch, NotImplementedError, ...)
        raise FormatError(f"{path}: not a readable .npz file of arrays "
                          f"({type(exc).__name__}: {exc})") from None
    return arrays


def _member_header(member, info, path) -> tuple[str, tuple]:
    """The array name of the zip member ``info`` (opened as ``member``, left just past its
    ``.npy`` header) and the header: ``(dtype, shape, fortran order)``, after checking that
    its declared size is the header's plus the data the header implies."""
    if info.is_dir() or not info.filename.endswith(".npy") or info.filename == ".npy":
        raise FormatError(f"{path}: member {info.filename!r:.60} is not an array (NAME.npy)")
    name = info.filename[:-len(".npy")]
    try:
        version = np.lib.format.read_magic(member)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read_header is None:
            raise ValueError(f"npy format version {version} is not read")
        shape, fortran, dtype = read_header(member)
        header_bytes = member.tell()
    except Exception as exc:  # noqa: BLE001 - numpy's header parser raises several kinds
        raise FormatError(f"{path}: array {name!r:.60} has no readable .npy header "
                          f"({type(exc).__name__}: {exc})") from None
    if dtype.hasobject:
        raise FormatError(f"{path}: array {name!r} holds Python objects, never loaded")
    implied = header_bytes + dtype.itemsize * math.prod(shape)
    if info.file_size != implied:
        raise FormatError(f"{path}: array {name!r} declares {info.file_size} bytes uncompressed, "
                          f"but its header ({dtype}, shape {shape}) implies {implied}")
    return name, (dtype, shape, fortran)


def _member_data(member, dtype, shape, fortran: bool) -> np.ndarray:
    """The array whose header :func:`_member_header` read from ``member``: its data read into
    a new (writable) array."""
    flat = np.empty(math.prod(shape), dtype=dtype)
    view, done = memoryview(flat).cast("B"), 0
    while done < len(view):  # in pieces the decompressor keeps in cache (as numpy reads)
        got = member.readinto(view[done:done + _READ_PIECE])
        if not got:
            raise EOFError(f"the data end after {done} of {len(view)} bytes")
        done += got
    return flat.reshape(shape, order="F" if fortran else "C")


_READ_PIECE = 1 << 18


def _check_members(headers: dict, path, required, optional, prefixes, expect: dict) -> None:
    missing = [name for name in required if name not in headers]
    if missing:
        raise FormatError(f"{path}: array {missing[0]!r} is missing (it holds "
                          f"{sorted(headers)})")
    known = set(required) | set(optional)
    unknown = sorted(name for name in headers if name not in known
                     and not any(name.startswith(p) for p in prefixes))
    if unknown:
        raise FormatError(f"{path}: array {unknown[0]!r:.60} is not part of this format")
    for name, (kinds, shapes) in expect.items():
        if name not in headers:
            continue
        _, dtype, shape, _ = headers[name]
        if dtype.kind not in kinds:
            raise FormatError(f"{path}: array {name!r} has dtype {dtype}, expected "
                              f"{_KIND_WORDS.get(kinds, 'kinds ' + kinds)} (read from its "
                              "header; never cast)")
        if shapes is not None and tuple(shape) not in [tuple(s) for s in shapes]:
            wanted = " or ".join(str(tuple(s)) for s in shapes)
            raise FormatError(f"{path}: array {name!r} has shape {tuple(shape)}, expected "
                              f"{wanted} (read from its header, before its data)")


_KIND_WORDS = {"iu": "integers", "b": "booleans", "iuf": "real numbers", "f": "floats"}


def integer_member(arrays: dict, name: str, path, *, ndim: int | None = None,
                   shape=None) -> np.ndarray:
    """``arrays[name]`` as int64: its dtype must be an integer type (never a float, which a cast
    would truncate or wrap, nor a bool), its values within int64, its shape ``shape``."""
    a = arrays[name]
    if a.dtype.kind not in "iu":
        raise FormatError(f"{path}: array {name!r} has dtype {a.dtype}, expected integers (a "
                          "float or other payload is refused, never cast)")
    if a.dtype == np.uint64 and a.size and int(a.max()) > np.iinfo(np.int64).max:
        raise FormatError(f"{path}: array {name!r} holds values beyond int64")
    _check_shape(a, name, path, ndim, shape)
    return a.astype(np.int64)


def finite_member(arrays: dict, name: str, path, *, ndim: int | None = None, shape=None,
                  allow_nan: bool = False) -> np.ndarray:
    """``arrays[name]``, whose dtype must be a real number type (not a bool) and whose values
    must all be finite (NaN also allowed with ``allow_nan``), of shape ``shape``."""
    a = arrays[name]
    if a.dtype.kind not in "iuf":
        raise FormatError(f"{path}: array {name!r} has dtype {a.dtype}, expected real numbers")
    _check_shape(a, name, path, ndim, shape)
    bad = ~np.isfinite(a)
    if allow_nan:
        bad &= ~np.isnan(a)
    if np.any(bad):
        what = "infinite" if allow_nan else "NaN or infinite"
        raise FormatError(f"{path}: array {name!r} holds {what} values")
    return a


def _check_shape(a, name, path, ndim, shape):
    if ndim is not None and a.ndim != ndim:
        raise FormatError(f"{path}: array {name!r} has {a.ndim} dimension(s), expected {ndim}")
    if shape is not None and a.shape != tuple(shape):
        raise FormatError(f"{path}: array {name!r} has shape {a.shape}, expected {tuple(shape)}")


# ----- verified outputs ----------------------------------------------------------------------

def write_verified(out_dir, payload: bytes, meta: dict, *, meta_file: str, file_key: str,
                   sha_key: str, extra_files: dict[str, bytes] | None = None) -> Path:
    """Write a versioned output that :func:`read_verified` reads back: a data file, optional
    extra files, then the JSON metadata that vouches for the data.

    ``meta`` names the data file under ``file_key`` (and carries ``format`` and
    ``format_version``); its ``sha_key`` entry is set to the data's sha256, in place if the
    key is already there (so the caller's key order is kept). Everything is serialised before
    the first file is touched and each file is replaced atomically, the metadata last; a
    rewrite that fails part way (an exception, Ctrl-C) puts the previous files back
    (:func:`_keep_previous`). So ``out_dir`` holds the previous output or the new one, never
    metadata that vouches for a data file it does not describe. The folder is updated in
    place, not replaced whole: it may hold files of others (DVC keeps a ``.gitignore`` beside
    the prepared counts).
    """
    for key in ("format", "format_version", file_key):
        if key not in meta:
            raise ValueError(f"the metadata of a verified output needs {key!r}")
    meta = dict(meta)
    meta[sha_key] = hashlib.sha256(payload).hexdigest()
    meta_payload = json_bytes(meta)
    out_dir = Path(out_dir)
    meta_path = out_dir / meta_file
    files = {meta[file_key]: payload, **(extra_files or {})}
    kept = _keep_previous(out_dir, files)
    try:
        for name, content in files.items():
            atomic_write_bytes(out_dir / name, content)
        _fsync_folder(out_dir)  # the data's renames reach the disk before the metadata's
        atomic_write_bytes(meta_path, meta_payload)
    except BaseException:
        # put the previous files back unless the new metadata made it into place (read off the
        # disk: Ctrl-C may strike just after its rename), so that the metadata on disk always
        # vouches for the data beside it
        if not _holds(meta_path, meta_payload):
            _put_back(out_dir, files, kept)
        raise
    finally:
        for backup in kept.values():
            backup.unlink(missing_ok=True)
    return out_dir


def _keep_previous(folder: Path, names) -> dict[str, Path]:
    """Keep the files ``names`` of ``folder`` that exist as ``.name.<random>.old`` beside them
    (a hard link: the file is never missing, and nothing is copied), by name.

    :func:`write_verified` renames them back when a rewrite fails part way. A writer killed
    (SIGKILL, power loss) between its renames leaves them behind, with the previous data.
    """
    kept = {}
    try:
        for name in names:
            target = folder / name
            if os.path.lexists(target):
                backup = target.with_name(
                    f"{_tmp_prefix(target)}{secrets.token_hex(8)}{_OLD_SUFFIX}")
                try:
                    os.link(target, backup, follow_symlinks=False)
                except (OSError, NotImplementedError):  # a file system without hard links
                    shutil.copy2(target, backup, follow_symlinks=False)
                kept[name] = backup
    except BaseException:
        for backup in kept.values():
            backup.unlink(missing_ok=True)
        raise
    return kept


def _put_back(folder: Path, names, kept: dict) -> None:
    """Undo a part-way rewrite of the files ``names`` of ``folder``: each one replaced is
    renamed back from its kept file (:func:`_keep_previous`; taken out of ``kept``, so that a
    failed rename back leaves it on disk rather than deleted), each one new is removed."""
    for name in names:
        target, backup = folder / name, kept.get(name)
        if backup is None:  # new in this write: the previous output had no such file
            target.unlink(missing_ok=True)
        elif not _same_file(backup, target):  # replaced already
            del kept[name]
            os.replace(backup, target)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _holds(path: Path, payload: bytes) -> bool:
    """Whether the file ``path`` holds exactly ``payload``."""
    try:
        return path.read_bytes() == payload
    except OSError:
        return False


def read_meta(path, *, meta_file: str, format_name: str, format_version) -> tuple[dict, Path]:
    """The metadata of the output at ``path`` (its folder or its metadata file) and its path,
    checked for its ``format`` and ``format_version`` (an int, or a tuple of those read).

    Raises :class:`MissingFileError` when there is no metadata file, :class:`FormatError`
    naming the file when it is unreadable, of another format or of another version, or when it
    or its folder bears the temporary name of an unfinished or replaced write
    (:func:`is_leftover`).
    """
    path = Path(path)
    meta_path = path / meta_file if path.is_dir() else path
    if not meta_path.is_file():
        raise MissingFileError(f"no {meta_file} at {path}")
    for part in (meta_path.name, meta_path.absolute().parent.name):
        if is_leftover(part):
            raise FormatError(f"{meta_path}: {part!r} is the temporary name of a write that did "
                              "not finish, or of a folder it replaced: refused (a private one "
                              "would be a second copy of the same counts); the next write beside "
                              "it removes it")
    if meta_path.parent.resolve() not in meta_path.resolve().parents:
        raise FormatError(f"{meta_path} is a link to {meta_path.resolve()}, outside its folder: "
                          "refused")
    meta = read_json_object(meta_path)
    if meta.get("format") != format_name:
        raise FormatError(f"{meta_path}: not an {format_name} file "
                          f"(format={_shown(meta.get('format'))})")
    versions = (format_version,) if isinstance(format_version, int) else tuple(format_version)
    version = meta.get("format_version")
    if isinstance(version, bool) or version not in versions:
        raise FormatError(f"{meta_path}: format version {_shown(version)} is not supported "
                          f"(this code reads version {' or '.join(map(str, versions))})")
    return meta, meta_path


def read_verified(path, *, meta_file: str, format_name: str, format_version,
                  file_key: str, sha_key: str) -> tuple[dict, Path, bytes]:
    """Read a versioned output: its JSON metadata and the data file the metadata vouches for.

    ``path`` is the output directory or its metadata file. The metadata must name
    ``format_name`` and ``format_version`` (an int, or a tuple of the versions read);
    ``meta[file_key]`` is the data file, a plain file name inside the metadata's folder
    (:func:`confined_file`), whose sha256 must equal ``meta[sha_key]``. Returns (meta, data
    path, bytes). Raises :class:`MissingFileError` (also a ``FileNotFoundError``) or a
    :class:`FormatError` (a ``ValueError``) that names the file, the field and the problem.
    The sha256 catches damage, not forgery: the caller still checks the content.
    """
    meta, meta_path = read_meta(path, meta_file=meta_file, format_name=format_name,
                                format_version=format_version)
    data_path = confined_file(meta_path.parent, meta_field(meta, file_key, meta_path), meta_path,
                              file_key)
    expected = meta_field(meta, sha_key, meta_path, "str")
    payload = read_bytes(data_path)
    if hashlib.sha256(payload).hexdigest() != expected:
        raise FormatError(f"{data_path} does not match the sha256 recorded in {meta_path}")
    return meta, data_path, payload
