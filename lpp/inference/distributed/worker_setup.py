"""Set up each worker process of the LocalCluster a fit starts (a Dask worker preload), before
the worker's first task: numba's thread pool gets the size the worker's environment asks for.

The nanny spawns a worker process and only then applies the worker's environment
(:data:`~lpp.inference.distributed.cluster.WORKER_ENV`, ``NUMBA_NUM_THREADS=1``). Before that,
multiprocessing's spawn has already imported the user's script as ``__mp_main__``: a script that
imports lpp at its top level (outside ``if __name__ == "__main__":``) has imported numba, which
read ``NUMBA_NUM_THREADS`` then, unset (one thread per core). Left so, the worker launches that
many threads at its first parallel kernel, and its first compilation afterwards (numba reloads
its settings from the environment then) fails with "Cannot set NUMBA_NUM_THREADS to a different
value once the threads have been launched". Setting the variable before the spawn instead
(``distributed.nanny.pre-spawn-environ``) would set it in the client's own process, whose numba
fails the same way at its next compilation.

So the worker, after its environment is applied and before any kernel runs, has numba read its
settings again (:func:`numba.core.config.reload_config`, what every compilation does) and
sizes the pool that has not been launched yet to match.
"""
from __future__ import annotations

import logging
import os
import sys

logger = logging.getLogger(__name__)


def match_numba_threads() -> int | None:
    """Make the numba already imported in this process use the ``NUMBA_NUM_THREADS`` of the
    environment; returns the size of numba's thread pool (None: numba is not imported yet, and
    will read the variable at its import)."""
    if "numba" not in sys.modules:
        return None
    from numba.core import config
    from numba.np.ufunc import parallel

    wanted = os.environ.get("NUMBA_NUM_THREADS")
    if getattr(parallel, "_is_initialized", False):  # launched: its size can no longer change
        launched = int(parallel.NUM_THREADS)
        if wanted is not None and wanted != str(launched):
            logger.warning("numba launched %d threads in this worker before its environment "
                           "asked for NUMBA_NUM_THREADS=%s; it keeps %d", launched, wanted,
                           launched)
            # numba's next compilation compares the environment with its settings: no failure
            os.environ["NUMBA_NUM_THREADS"] = str(config.NUMBA_NUM_THREADS)
            config.reload_config()
        return launched
    config.reload_config()  # raises on an invalid value, as numba's own import would
    parallel.NUM_THREADS = parallel.get_thread_count()  # the size the pool is launched with
    return int(parallel.NUM_THREADS)


def dask_setup(worker=None) -> None:
    """The preload's entry point: run by each worker as it starts, before it takes tasks."""
    match_numba_threads()
