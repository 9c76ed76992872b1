"""Where numba keeps the machine code it compiles for lpp: one folder per version of the source.

Every pipeline stage is a fresh process, and compiling the samplers' kernels costs tens of
seconds in each, so the kernels are compiled with ``cache=True``. numba's own cache goes stale
when a jitted helper in *another* module changes (it checks only the caller's file), which in
a pipeline would run old machine code on new inputs. Keying the cache folder by a hash of
every source file of the package makes any change start a fresh cache. A ``NUMBA_CACHE_DIR``
set by the user is respected as it is.

The first fit on a machine (or after lpp changes) spends most of its time compiling:
:func:`compile_notice` says so, in one line, the moment numba starts compiling one of the
kernels a fit needs (numba signals a compilation only when its cache has no machine code for
the call), with where the code will be kept.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def source_digest(package: Path = _PACKAGE) -> str:
    """SHA-256 over the relative paths and contents of the package's Python files."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "lpp" / "numba"


def configure() -> str | None:
    """Point numba's cache at this source version's folder; returns it (None: left as it was)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    folder = cache_root() / source_digest()[:16]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:  # an unwritable home: numba then compiles in every process, as without cache
        return None
    os.environ["NUMBA_CACHE_DIR"] = str(folder)  # inherited by kernels and Dask workers
    if "numba" in sys.modules:  # numba read its settings at import
        sys.modules["numba"].config.CACHE_DIR = str(folder)
    return str(folder)


_told = False


def _tell(stream) -> None:
    global _told
    if not _told:
        _told = True
        where = os.environ.get("NUMBA_CACHE_DIR") or "numba's default cache"
        print(f"lpp: compiling the sampler's kernels for this machine and version of lpp (about "
              f"a minute, once; kept in {where})", file=stream, flush=True)


@contextlib.contextmanager
def compile_notice(show: bool | None, stream=None):
    """Print one line when numba starts compiling inside the block, once per process.

    ``show``: True prints it, False stays silent, None prints it where ``stream`` (standard
    error by default) is a terminal, as the progress bars do.
    """
    stream = sys.stderr if stream is None else stream
    if show is None:
        show = bool(getattr(stream, "isatty", lambda: False)())
    if not show or _told:
        yield
        return
    # imported here: configure() must set the cache folder before numba is first imported
    from numba.core import event

    class FirstCompile(event.Listener):
        def on_start(self, _):
            _tell(stream)

        def on_end(self, _):
            pass

    with event.install_listener("numba:compile", FirstCompile()):
        yield
