"""Connecting to a Dask cluster, or starting a local one, without leaving a default client or a
half-built one behind.
"""
from __future__ import annotations

import contextlib

import numpy as np

from lpp.validation import positive_int

#: environment of the local cluster's single-threaded workers: one numba thread each (numba
#: would otherwise start a thread per core in every worker process, so W workers on one
#: machine would run W times more threads than it has cores)
WORKER_ENV = {"NUMBA_NUM_THREADS": "1"}
#: preload of the local cluster's workers: numba, when the spawn imported it (with the user's
#: script) before the nanny applied :data:`WORKER_ENV`, is made to follow it before any task
#: (:mod:`lpp.inference.distributed.worker_setup`)
WORKER_PRELOAD = "lpp.inference.distributed.worker_setup"
#: workers of the LocalCluster started when no cluster is given
DEFAULT_WORKERS = 2
#: seconds to connect to a scheduler address before a distributed fit gives up
CONNECT_SECONDS = 5

def _connect(cluster, n_workers: int):
    """``(client, owned)``: a Client for ``cluster`` and what this call opened (closed by the
    caller at the end of the fit, in order).

    The clients opened here are never made dask's default (``set_as_default=False``): a fit
    leaves the process's dask configuration as it found it, failed or not, and whatever it
    opened before a failure is closed.
    """
    from dask.distributed import Client, LocalCluster

    if isinstance(cluster, Client):
        return cluster, []
    local = cluster is None or cluster is True or (isinstance(cluster, (int, np.integer))
                                                   and not isinstance(cluster, bool))
    if not (local or isinstance(cluster, str) or hasattr(cluster, "scheduler_address")):
        raise TypeError("cluster must be True or a number of local workers, a scheduler "
                        f"address, a dask Client or a Cluster, got {type(cluster).__name__}")
    owned = []
    try:
        if local:
            workers = n_workers if cluster is None or cluster is True else positive_int(
                cluster, "cluster (a number of local workers)")
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", env=WORKER_ENV,
                                   preload=[WORKER_PRELOAD])
            owned.append(cluster)
        owned.insert(0, _client(cluster))
        return owned[0], owned
    except BaseException:
        for opened in owned:
            with contextlib.suppress(Exception):  # the first failure is the one to report
                opened.close()
        raise


def _client(cluster):
    """A Client of a scheduler address or a Cluster, connected within :data:`CONNECT_SECONDS`."""
    from dask.distributed import Client

    address = cluster if isinstance(cluster, str) else cluster.scheduler_address
    try:
        return Client(cluster, timeout=CONNECT_SECONDS, set_as_default=False)
    except ValueError as exc:
        _close_unborn(exc)
        raise ValueError(f"cluster={address!r} is not a Dask scheduler address such as "
                         f"'tcp://host:8786' ({exc})") from None
    except Exception as exc:  # refused, timed out, not a Dask scheduler that answered
        _close_unborn(exc)
        raise ConnectionError(f"no Dask scheduler answered at {address!r} within "
                              f"{CONNECT_SECONDS} s ({type(exc).__name__}: {exc}); start one "
                              f"there, or pass cluster=True for a local cluster") from None


def _close_unborn(exc: BaseException) -> None:
    """Close the Client whose constructor raised ``exc``: it is not returned to anyone, and
    left to the garbage collector it stalls for seconds and prints a traceback."""
    from dask.distributed import Client

    tb = exc.__traceback__
    while tb is not None:
        unborn = tb.tb_frame.f_locals.get("self")
        if isinstance(unborn, Client):
            unborn.close(timeout=1)
            return
        tb = tb.tb_next
