"""The local cluster's workers run the numba threads lpp means them to (``WORKER_ENV``), also
when the user's script imports lpp at its top level: a spawned worker imports that script
(and numba with it) before its nanny applies the worker's environment.

Each test runs a script in a fresh process with a fresh numba cache, as a user would.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lpp.inference.distributed.cluster import WORKER_ENV

ROOT = Path(__import__("lpp").__file__).parents[1]


def _run(script: Path, tmp_path: Path, env: dict, *args) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           **env}
    env = {k: v for k, v in env.items() if v is not None}
    out = subprocess.run([sys.executable, str(script), *args], check=False, capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


_IMPORTED_BEFORE_ITS_ENVIRONMENT = textwrap.dedent("""
    import json, os
    import numba  # as a spawned worker: numba read NUMBA_NUM_THREADS=2 at its import
    from numba.np.ufunc import parallel

    if __name__ == "__main__":
        launched = os.environ.pop("LAUNCH_FIRST", None) is not None
        if launched:
            numba.get_num_threads()  # the pool is launched with 2 threads
        os.environ["NUMBA_NUM_THREADS"] = "1"  # what the nanny does after the spawn
        from lpp.inference.distributed.worker_setup import match_numba_threads
        pool = match_numba_threads()
        assert numba.njit(lambda x: x + 1)(1) == 2  # a compilation rereads the environment
        print(json.dumps({"pool": pool, "active": numba.get_num_threads(),
                          "config": numba.config.NUMBA_NUM_THREADS}))
""")


@pytest.mark.parametrize("launch_first", [False, True])
def test_the_worker_setup_makes_an_imported_numba_follow_the_environment(tmp_path,
                                                                        launch_first):
    script = tmp_path / "worker.py"
    script.write_text(_IMPORTED_BEFORE_ITS_ENVIRONMENT)
    got = _run(script, tmp_path, {"NUMBA_NUM_THREADS": "2",
                                  "LAUNCH_FIRST": "1" if launch_first else None})
    if launch_first:  # a launched pool keeps its size, and compiling still works
        assert got == {"pool": 2, "active": 2, "config": 2}
    else:
        assert got == {"pool": 1, "active": 1, "config": 1}


# a user's script as README.md writes it: lpp imported at the top level, outside the guard
_FIT_ON_A_LOCAL_CLUSTER = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    from dataclasses import replace
    from lpp.inference import RunOptions, TopicModel, fit_private
    from lpp.formats.privatized_blocks import privatize_blocks


    def numba_threads():
        import numba
        return {"active": numba.get_num_threads(), "config": numba.config.NUMBA_NUM_THREADS,
                "env": os.environ.get("NUMBA_NUM_THREADS")}


    if __name__ == "__main__":
        rng = np.random.default_rng(0)
        counts = rng.poisson(0.7, size=(40, 30))
        data = privatize_blocks([counts[:25], counts[25:]], sys.argv[1], n_cols=30,
                                epsilon=2.0, N=1.0, simulation=True, seed=5, source="toy",
                                column_ids=[str(i) for i in range(30)],
                                row_ids=[str(r) for r in range(40)])
        run = RunOptions(n_iter=4, burn_in=2, progress=False)
        reference = fit_private(*data.to_dense(), TopicModel(3), rng=7,
                                run=replace(run, sparse=True))
        seen = {}

        def threads_of_each_worker(chain):  # in the tasks' thread, after each sweep's kernels
            for w in chain.client.scheduler_info()["workers"]:
                seen[w] = chain.client.submit(numba_threads, pure=False, workers=[w]).result()

        result = fit_private(data, None, TopicModel(3), cluster=True, rng=7,
                             run=replace(run, callback=threads_of_each_worker))
        same = all(np.array_equal(result.samples[n], reference.samples[n])
                   for n in ("theta", "phi")) and np.array_equal(result.log_joint,
                                                                 reference.log_joint)
        print(json.dumps({"same": bool(same), "workers": list(seen.values())}))
""")


@pytest.mark.slow
def test_a_script_importing_lpp_at_top_level_fits_on_a_local_cluster(tmp_path):
    """A fresh numba cache: the workers compile kernels after their first parallel one ran."""
    pytest.importorskip("dask.distributed")
    script = tmp_path / "fit.py"
    script.write_text(_FIT_ON_A_LOCAL_CLUSTER)
    # numba's default (a thread per core) must differ from the workers' one thread
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    got = _run(script, tmp_path, {"NUMBA_NUM_THREADS": None if (cores or 1) > 1 else "2"},
               str(tmp_path / "blocks"))
    wanted = int(WORKER_ENV["NUMBA_NUM_THREADS"])
    assert got["same"]
    assert len(got["workers"]) == 2
    for worker in got["workers"]:
        assert worker == {"active": wanted, "config": wanted, "env": str(wanted)}
