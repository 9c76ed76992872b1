"""The distributed sparse topic chain: the same chain as in-process, bit for bit.

The cluster tests share one LocalCluster with 2 worker processes (module fixture); they are
marked slow because each fresh worker process compiles the engine's kernels.
"""
import contextlib
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import textwrap
import time
from itertools import pairwise
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from lpp.inference import CommunityModel, RunOptions, TopicModel, fit_private
from lpp.inference import distributed as dist
from lpp.inference.distributed import (
    DistributedChain,
    NoWorkersError,
    fit_private_distributed,
)
from lpp.inference.kernels import product_kernel
from lpp.formats.privatized_blocks import privatize_blocks

D, V, K = 120, 130, 4  # under the serial threshold: the workers compile the serial kernels only
N_ITER, BURN_IN, SEED = 6, 2, 123
# taller than two expectation blocks and narrow (still serial): init="em" passes its running
# topic-word sum from one worker's rows to the next
TALL_D, TALL_V = 1100, 12


def test_rates_of_a_row_block_are_the_rows_of_the_rates():
    rng = np.random.default_rng(1)
    theta, phi = rng.gamma(0.3, size=(301, 50)), rng.gamma(0.3, size=(50, 299))
    full = product_kernel(theta, phi)
    np.testing.assert_allclose(full, theta @ phi, rtol=1e-12)
    for lo, hi in [(0, 41), (41, 300), (300, 301), (7, 8)]:
        assert np.array_equal(product_kernel(theta[lo:hi], phi), full[lo:hi])


def test_refuses_what_it_cannot_run(tmp_path):
    with pytest.raises(TypeError, match="row blocks"):
        fit_private_distributed(np.zeros((3, 3), dtype=int), TopicModel(2))
    with pytest.raises(ValueError, match="no meta.json"):
        fit_private_distributed(tmp_path, TopicModel(2))
    data = privatize_blocks([np.ones((3, 4), dtype=int)], tmp_path / "blocks", n_cols=4,
                            epsilon=1.0, N=1.0, simulation=True, seed=0, source="toy",
                            column_ids=list("abcd"), row_ids=["0", "1", "2"])
    # every refusal comes before a cluster is started
    for kwargs, run, error, match in [
        ({"mechanism": 0.5}, {}, ValueError, "carries alpha"),
        ({"method": "bessel"}, {}, ValueError, "collapsed privacy step only"),
        ({}, {"sparse": False}, ValueError, "sparse=False"),
        ({}, {"save_counts": True}, ValueError, "save_counts"),
        ({}, {"save_latents": False}, ValueError, "save_latents"),
        ({}, {"init": "mode"}, ValueError, "init must be"),
        ({}, {"burn_in": 2}, ValueError, "burn_in"),
    ]:
        kwargs = {"mechanism": None, **kwargs}
        with pytest.raises(error, match=match):
            fit_private(data, model=TopicModel(2), run=RunOptions(n_iter=2, **run),
                        cluster=True, **kwargs)
    with pytest.raises(ValueError, match="shape"):
        data.with_mask(np.zeros((3, 5), dtype=bool))
    with pytest.raises(TypeError, match="topic model"):
        fit_private(data, None, CommunityModel(2), cluster=True)
    with pytest.raises(ValueError, match="collapse_theta"):
        fit_private(data, None, TopicModel(2, collapse_theta=True), run=RunOptions(n_iter=2),
                    cluster=True)
    with pytest.raises(TypeError, match="on a cluster"):
        fit_private(data, None, TopicModel(2))
    with pytest.raises(TypeError, match="on a cluster"):
        fit_private(str(data.path), None, TopicModel(2))


def test_the_in_process_path_imports_no_dask():
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from lpp.inference import RunOptions, TopicModel, fit_private
        fit_private(np.array([[1, -2], [0, 3]]), 0.5, TopicModel(1), rng=0,
                    run=RunOptions(n_iter=1, progress=False, init="prior", sparse=False))
        loaded = [m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")
                  or m == "lpp.inference.distributed"]
        print(loaded)
    """)
    root = Path(__import__("lpp").__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=root, env=env)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------------------------------
# on a LocalCluster with 2 worker processes
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = np.random.default_rng(0)
    counts = rng.poisson(0.5, size=(D, V))
    path = tmp_path_factory.mktemp("blocks")
    # blocks of unequal sizes, none aligned to anything
    data = privatize_blocks([counts[:50], counts[50:80], counts[80:]], path, n_cols=V,
                            epsilon=2.0, N=1.0, simulation=True, seed=5, source="toy",
                            column_ids=[str(i) for i in range(V)],
                            row_ids=[str(r) for r in range(D)])
    y_tilde, alpha = data.to_dense()
    reference = fit_private(y_tilde, alpha, TopicModel(K),
                            run=RunOptions(n_iter=N_ITER, burn_in=BURN_IN, init="prior",
                                           sparse=True, progress=False),
                            rng=SEED)
    return data, counts, reference


@pytest.fixture(scope="module")
def tall_corpus(tmp_path_factory):
    rng = np.random.default_rng(1)
    counts = rng.poisson(1.0, size=(TALL_D, TALL_V))
    path = tmp_path_factory.mktemp("tall")
    cuts = [0, 300, 700, TALL_D]  # the second worker's rows start inside an expectation block
    data = privatize_blocks([counts[a:b] for a, b in pairwise(cuts)], path,
                            n_cols=TALL_V, epsilon=1.0, N=1.0, simulation=True, seed=6,
                            source="toy", column_ids=[str(i) for i in range(TALL_V)],
                            row_ids=[str(r) for r in range(TALL_D)])
    mask = rng.random((TALL_D, TALL_V)) < 0.1
    return data, mask


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _assert_same_chain(result, reference, upto=None):
    n = reference.n_saved if upto is None else upto
    assert result.engine == "sparse-distributed" and result.seed == reference.seed
    assert np.array_equal(result.saved_iterations, reference.saved_iterations[:n])
    for name in ("theta", "phi"):
        assert np.array_equal(result.samples[name], reference.samples[name][:n]), name
    assert np.array_equal(result.log_joint, reference.log_joint[:n])


@pytest.mark.slow
def test_same_chain_as_in_process_bit_for_bit(client, corpus):
    data, _, reference = corpus
    result = fit_private(data, None, TopicModel(K),
                         run=RunOptions(n_iter=N_ITER, burn_in=BURN_IN, init="prior",
                                        progress=False),
                         rng=SEED, cluster=client)
    _assert_same_chain(result, reference)
    assert np.array_equal(np.asarray(result.mu_hat), reference.mu_hat)
    for name in ("theta", "phi"):
        assert np.array_equal(result.state[name], reference.state[name])
    # the workers run this checkout's lpp, each with its own blocks
    files = client.run(lambda: __import__("lpp").__file__)
    assert len(files) == 2 and all(f == __import__("lpp").__file__ for f in files.values())


@pytest.mark.slow
def test_workers_hold_only_privatized_blocks(client, corpus):
    data, counts, _ = corpus
    seen = []
    fit_private_distributed(data, TopicModel(K), n_iter=1, rng=SEED, init="prior",
                            cluster=client, progress=False,
                            callback=lambda chain: seen.append(chain))
    chain = seen[0]
    held = client.gather([client.submit(lambda blk: blk.y_tilde, f) for f in chain.blocks])
    y_tilde, _ = data.to_dense()
    assert np.array_equal(np.concatenate(held), y_tilde)
    assert not np.array_equal(y_tilde, counts)


@pytest.mark.slow
def test_interrupt_and_resume_from_checkpoint(client, corpus, tmp_path):
    data, _, reference = corpus
    ckpt = tmp_path / "chain.npz"

    def interrupt(chain):
        if chain.iteration == 4:
            raise KeyboardInterrupt

    common = {"n_iter": N_ITER, "burn_in": BURN_IN, "rng": SEED, "init": "prior",
              "cluster": client, "progress": False, "checkpoint": ckpt}
    partial = fit_private_distributed(data, TopicModel(K), callback=interrupt, **common)
    assert partial.interrupted and partial.iterations_done == 4
    _assert_same_chain(partial, reference, upto=2)
    resumed = fit_private_distributed(data, TopicModel(K), resume=True, **common)
    assert not resumed.interrupted and resumed.iterations_done == N_ITER
    _assert_same_chain(resumed, reference)
    assert np.array_equal(np.asarray(resumed.mu_hat), reference.mu_hat)


@pytest.mark.slow
def test_a_killed_worker_leaves_the_same_chain(client, corpus):
    data, _, reference = corpus
    killed = []

    def kill_one(chain):
        if chain.iteration == 3 and not killed:
            victim = chain.placement[0]
            killed.append(victim)
            with contextlib.suppress(Exception):  # the worker dies while answering
                client.run(os._exit, 1, workers=[victim])

    result = fit_private_distributed(data, TopicModel(K), n_iter=N_ITER,
                                     burn_in=BURN_IN, rng=SEED, init="prior", cluster=client,
                                     progress=False, callback=kill_one)
    assert killed and killed[0] not in client.scheduler_info()["workers"]  # it did die
    _assert_same_chain(result, reference)
    assert np.array_equal(np.asarray(result.mu_hat), reference.mu_hat)


@pytest.mark.slow
@pytest.mark.parametrize("init", ["data", "em"])
def test_mask_and_init_as_in_process_bit_for_bit(client, tall_corpus, init):
    data, mask = tall_corpus
    y_tilde, alpha = data.to_dense()
    run = RunOptions(n_iter=4, burn_in=1, init=init, progress=False)
    reference = fit_private(np.ma.masked_array(y_tilde, mask), alpha, TopicModel(K),
                            run=replace(run, sparse=True), rng=SEED)
    result = fit_private(data.with_mask(mask), None, TopicModel(K), run=run, rng=SEED,
                         cluster=client)
    _assert_same_chain(result, reference)
    assert np.array_equal(np.asarray(result.mu_hat), reference.mu_hat)
    # the masked entries changed the chain: the mask did reach the workers
    unmasked = fit_private(data, None, TopicModel(K), run=run, rng=SEED, cluster=client)
    assert not np.array_equal(unmasked.log_joint, result.log_joint)


# ---------------------------------------------------------------------------------------------
# faults: lost workers, bad addresses; each guarded by a time limit (they used to hang)
# ---------------------------------------------------------------------------------------------

class _TooLong(Exception):
    pass


@contextlib.contextmanager
def _within(seconds):
    """Fail with _TooLong when the block runs past ``seconds`` (SIGALRM reaches the main
    thread while it waits on Dask)."""
    def expire(*_):
        raise _TooLong(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_failed_connection_leaves_no_client_or_config_behind(tmp_path):
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    data = privatize_blocks([np.ones((3, 4), dtype=int)], tmp_path / "blocks", n_cols=4,
                            epsilon=1.0, N=1.0, simulation=True, seed=0, source="toy", column_ids=list("abcd"),
                            row_ids=["0", "1", "2"])
    before = (dask.config.get("scheduler", None), distributed.client._get_global_client())
    with pytest.raises(ValueError, match="cluster='garbage' is not a Dask scheduler address"):
        fit_private(data, None, TopicModel(2), run=RunOptions(n_iter=2), cluster="garbage")
    # a later fit's lazy mu_hat computes with the scheduler the process had
    assert (dask.config.get("scheduler", None), distributed.client._get_global_client()) == before


def test_an_unreachable_scheduler_fails_fast_naming_it(tmp_path):
    pytest.importorskip("distributed")
    data = privatize_blocks([np.ones((3, 4), dtype=int)], tmp_path / "blocks", n_cols=4,
                            epsilon=1.0, N=1.0, simulation=True, seed=0, source="toy", column_ids=list("abcd"),
                            row_ids=["0", "1", "2"])
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    start = time.monotonic()
    with _within(dist.CONNECT_SECONDS + 20), pytest.raises(
            ConnectionError, match=f"no Dask scheduler answered at '{address}' within "
                                   f"{dist.CONNECT_SECONDS} s"):
        fit_private(data, None, TopicModel(2), run=RunOptions(n_iter=2), cluster=address)
    assert time.monotonic() - start < dist.CONNECT_SECONDS + 3


@pytest.mark.slow
def test_the_only_worker_restarted_leaves_the_same_chain(corpus):
    data, _, reference = corpus
    killed = []

    def kill_it(chain):
        if chain.iteration == 3 and not killed:
            killed.append(chain.placement[0])
            with contextlib.suppress(Exception):  # it dies while answering; its nanny restarts it
                chain.client.run(os._exit, 1)

    with _within(240):
        result = fit_private_distributed(data, TopicModel(K), n_iter=N_ITER,
                                         burn_in=BURN_IN, rng=SEED, init="prior", cluster=1,
                                         progress=False, callback=kill_it)
    assert killed
    _assert_same_chain(result, reference)
    assert np.array_equal(np.asarray(result.mu_hat), reference.mu_hat)


@pytest.mark.slow
def test_losing_every_worker_fails_in_bounded_time_and_resumes(client, corpus, tmp_path,
                                                                monkeypatch):
    data, _, reference = corpus
    monkeypatch.setattr(dist.chain, "NO_WORKER_SECONDS", 3)
    real_sweep, lost = DistributedChain.sweep, []

    def sweep_then_lose_the_cluster(chain):
        real_sweep(chain)
        if chain.iteration == 4:  # a saved iteration: its log joint needs the workers
            chain.client.cluster.scale(0)
            lost.append(time.monotonic())

    monkeypatch.setattr(DistributedChain, "sweep", sweep_then_lose_the_cluster)
    ckpt = tmp_path / "chain.npz"
    run = RunOptions(n_iter=N_ITER, burn_in=BURN_IN, init="prior", progress=False,
                     checkpoint=ckpt)
    with _within(240), pytest.raises(NoWorkersError, match=rf"has had no workers for 3 s.*{ckpt} "
                                                           r"holds the chain's 3 iterations"):
        fit_private(data, None, TopicModel(K), cluster=1,
                    run=run, rng=SEED)
    assert time.monotonic() - lost[0] < 3 + 10
    monkeypatch.setattr(DistributedChain, "sweep", real_sweep)
    # the client kept the chain: the checkpoint continues it on a working cluster
    resumed = fit_private(data, None, TopicModel(K), cluster=client,
                          run=replace(run, resume=True),
                          rng=SEED)
    _assert_same_chain(resumed, reference)


# ---------------------------------------------------------------------------------------------
# the same chain on any x86-64 CPU: other BLAS kernels and numba targets, emulated
# ---------------------------------------------------------------------------------------------

#: (environment, CPU flags it needs): OpenBLAS's kernel for another CPU (its AVX-512 kernels
#: sum some products in another order than its AVX2 ones) and numba's code for another target
_EMULATED_CPUS = [
    ({"OPENBLAS_CORETYPE": "SkylakeX"}, {"avx512f", "avx512cd", "avx512bw", "avx512dq",
                                         "avx512vl"}),
    ({"OPENBLAS_CORETYPE": "Haswell", "NUMBA_CPU_NAME": "generic"}, {"avx2", "fma"}),
    ({"OPENBLAS_CORETYPE": "Sandybridge", "NUMBA_CPU_NAME": "generic"}, {"avx"}),
    ({"OPENBLAS_CORETYPE": "Prescott", "NUMBA_CPU_NAME": "generic"}, set()),
]

_CHAIN_ON_THIS_CPU = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as np
    from dask.distributed import Client, LocalCluster
    from dataclasses import replace
    from lpp.inference import RunOptions, TopicModel, fit_private
    from lpp.formats.privatized_blocks import privatize_blocks

    def digest(result):
        h = hashlib.sha256()
        for a in (result.samples["theta"], result.samples["phi"], result.log_joint,
                  np.asarray(result.mu_hat)):
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        return h.hexdigest()

    if __name__ == "__main__":
        rng = np.random.default_rng(1)
        counts = rng.poisson(1.0, size=(600, 12))
        mask = rng.random(counts.shape) < 0.1
        data = privatize_blocks([counts[:250], counts[250:]], sys.argv[1], n_cols=12,
                                epsilon=1.0, N=1.0, simulation=True, seed=6, source="toy",
                                column_ids=[str(i) for i in range(12)],
                                row_ids=[str(r) for r in range(600)])
        run = RunOptions(n_iter=2, init="em", progress=False)
        y_tilde, alpha = data.to_dense()
        reference = fit_private(np.ma.masked_array(y_tilde, mask), alpha, TopicModel(9),
                                run=replace(run, sparse=True), rng=5)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            result = fit_private(data.with_mask(mask), None, TopicModel(9), run=run, rng=5,
                                 cluster=client)
        print(json.dumps({"in_process": digest(reference), "distributed": digest(result)}))
""")


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return next((set(line.split(":", 1)[1].split()) for line in text.splitlines()
                 if line.startswith("flags")), set())


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or not _cpu_flags(),
                    reason="emulates x86-64 CPUs (needs Linux's /proc/cpuinfo)")
def test_same_chain_in_process_and_distributed_on_emulated_cpus(tmp_path):
    """Under two emulated CPUs (those this CPU can run: a forced OpenBLAS kernel, numba
    compiling for another target), the distributed chain equals the in-process one bit for
    bit, and the topic chain itself is the same on both."""
    flags = _cpu_flags()
    settings = [env for env, needs in _EMULATED_CPUS if needs <= flags][:2]
    script = tmp_path / "chain.py"
    script.write_text(_CHAIN_ON_THIS_CPU)
    root = Path(__import__("lpp").__file__).parents[1]
    digests = []
    for i, setting in enumerate(settings):
        env = {**os.environ, "PYTHONPATH": str(root), "NUMBA_NUM_THREADS": "1", **setting}
        out = subprocess.run([sys.executable, str(script), str(tmp_path / f"blocks{i}")],
                             capture_output=True, text=True, cwd=root, env=env, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        digests.append(json.loads(out.stdout.strip().splitlines()[-1]))
        assert digests[-1]["distributed"] == digests[-1]["in_process"], setting
    assert len(settings) == 2 and digests[0] == digests[1], settings
