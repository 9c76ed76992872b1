"""The CUDA kernels themselves (lpp.inference.engines.cuda.device), in numba-cuda's simulator
(tests/conftest.py sets ``NUMBA_ENABLE_CUDASIM=1`` unless a run asks for the GPU): they draw
what the host emulation draws, bit for bit, for every launch configuration, and again on rerun.

On a real GPU (``NUMBA_ENABLE_CUDASIM=0``) the reference is the GPU's own run at the default
launch configuration instead: the CUDA compiler may fuse multiply-adds, so the GPU and the CPU
agree in distribution only (test_engine.py), while any launch configuration and any rerun on
one GPU must give the same chain. Tiny data, one block, three sweeps: each test takes about a
second in the simulator.
"""
import numpy as np
import pytest

pytest.importorskip("numba_cuda", reason="numba-cuda (lpp[gpu]) is not installed; CI installs it")

from numba import config as numba_config
from numba import cuda

from lpp.inference import TopicModel, fit_nonprivate, fit_private
from lpp.inference.engines.cuda import DEFAULT_THREADS_PER_BLOCK, launch_settings
from lpp.mechanism import privatize

SIMULATOR = bool(numba_config.ENABLE_CUDASIM)
if not SIMULATOR and not cuda.is_available():
    pytest.skip("numba-cuda's simulator is off in numba's config (NUMBA_ENABLE_CUDASIM=0, or set "
                "only after numba was imported) and numba.cuda finds no usable GPU",
                allow_module_level=True)

pytestmark = [
    pytest.mark.cuda,
    # on a real GPU numba-cuda warns (NumbaPerformanceWarning, its own class) that a grid of
    # fewer than 128 blocks under-uses it: these grids are tiny on purpose
    pytest.mark.filterwarnings("ignore:Grid size .* low occupancy"),
]

KINDS = ("collapsed", "naive", "nonprivate")
ENGINE_OF = {"collapsed": "cuda-sparse", "naive": "cuda-known", "nonprivate": "cuda-known"}


@pytest.fixture(scope="module")
def data():
    """``(y, y_tilde)`` of shape (6, 8) with a row of positive privatized counts only, a row
    of non-positive ones only, and mixed rows."""
    rng = np.random.default_rng(0)
    y = rng.poisson(rng.gamma(1.0, 1.0, (6, 2)) @ rng.gamma(1.0, 1.0, (2, 8)))
    y_tilde = privatize(y, 0.5, rng=rng)
    y_tilde[0] = np.arange(1, 9)
    y_tilde[1] = -(np.arange(8) % 3)
    return y, y_tilde


def _fit(kind, data, **settings):
    """Three sweeps of ``kind`` on ``data`` with device='cuda' under ``launch_settings``."""
    y, y_tilde = data
    kw = dict(n_iter=3, rng=1, device="cuda", save_counts=True, progress=False)
    with launch_settings(**settings):
        if kind == "nonprivate":
            return fit_nonprivate(y, TopicModel(2), **kw)
        return fit_private(y_tilde, 0.5 if kind == "collapsed" else None, TopicModel(2),
                           method=kind, **kw)


@pytest.fixture(scope="module")
def reference(data):
    """``{kind: fit}`` to compare with: the host emulation in the simulator, the GPU's own run
    at the default launch configuration on a GPU."""
    settings = {"emulate": True} if SIMULATOR else {}
    return {kind: _fit(kind, data, **settings) for kind in KINDS}


def _assert_same_draws(got, want):
    """The same chain: every saved draw and the rates' mean bit for bit, the log joint to 1e-10
    (the simulator's lgamma is CPython's, the emulation's numba's)."""
    assert got.samples.keys() == want.samples.keys() == {"theta", "phi", "y"}
    for name in want.samples:
        assert np.array_equal(got.samples[name], want.samples[name]), name
    for name in want.state:
        assert np.array_equal(got.state[name], want.state[name]), name
    assert np.array_equal(got.mu_hat, want.mu_hat)
    np.testing.assert_allclose(got.log_joint, want.log_joint, rtol=1e-10, atol=0)


def test_the_chains_run_on_the_kernels(data):
    got = _fit("collapsed", data)
    assert got.engine == "cuda-sparse" and "host emulation" not in got.device
    assert ("simulator" in got.device) == SIMULATOR
    assert got.n_saved == 3 and np.all(np.isfinite(got.log_joint))


@pytest.mark.parametrize("threads_per_block", [1, 7, 32, 128])
@pytest.mark.parametrize("kind", KINDS)
def test_any_launch_configuration_draws_the_reference_chain(reference, data, kind,
                                                            threads_per_block):
    got = _fit(kind, data, threads_per_block=threads_per_block)
    assert got.engine == ENGINE_OF[kind]
    _assert_same_draws(got, reference[kind])


def test_a_rerun_repeats_the_chain_bit_for_bit(data):
    first, again = _fit("collapsed", data), _fit("collapsed", data)
    _assert_same_draws(again, first)
    assert np.array_equal(again.log_joint, first.log_joint)


def test_the_default_launch_configuration():
    assert DEFAULT_THREADS_PER_BLOCK == 128
