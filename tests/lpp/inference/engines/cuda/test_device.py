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
from numba import cuda, int64

from lpp.inference import RunOptions, TopicModel, fit_nonprivate, fit_private
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
    with launch_settings(**settings):
        if kind == "nonprivate":
            return fit_nonprivate(y, TopicModel(2),
                                  run=RunOptions(n_iter=3, save_counts=True, progress=False),
                                  rng=1, device="cuda")
        return fit_private(y_tilde, 0.5 if kind == "collapsed" else None, TopicModel(2),
                           method=kind, run=RunOptions(n_iter=3, save_counts=True, progress=False),
                           rng=1, device="cuda")


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


# --- counts too large to split token by token ----------------------------------------------------

from scipy import stats  # noqa: E402

from lpp.inference import GibbsSampler  # noqa: E402
from lpp.inference.engines.cuda.functions import build_functions  # noqa: E402
from lpp.testing import FALSE_ALARM  # noqa: E402

_G = build_functions(cuda.jit(device=True))
_binomial, _split_bulk = _G.binomial, _G.split_bulk
KEY = (np.uint64(0x1234ABCD), np.uint64(0x0BADF00D))
HUGE = 10**12


@cuda.jit
def _binomial_kernel(n_items, n, p, k0, k1, out):
    i = cuda.grid(1)
    if i < n_items:
        out[i], _ = _binomial(n, p, k0, k1, i, 0, 0)


@cuda.jit
def _split_kernel(n_items, count, cum, k0, k1, out):
    i = cuda.grid(1)
    if i < n_items:
        hits = cuda.local.array(3, int64)
        _split_bulk(count, cum, hits, k0, k1, i, 0, 0)
        for k in range(3):
            out[i, k] = hits[k]


def _binomial_gof(draws, n, p, bins=20):
    """Chi-square of ``Binom(n, p)`` draws on cells of about equal probability."""
    law = stats.binom(n, p)
    edges = np.unique(law.ppf(np.linspace(0.0, 1.0, bins + 1)[1:-1]))
    edges = edges[law.cdf(edges) < 1.0]
    probs = np.diff(np.concatenate(([0.0], law.cdf(edges), [1.0])))
    observed = np.bincount(np.searchsorted(edges, draws, side="left"), minlength=probs.size)
    return stats.chisquare(observed, probs * draws.size).pvalue


@pytest.mark.parametrize("n,p", [(HUGE, 0.3), (10**15, 0.9), (60, 0.1)])
def test_the_device_binomial_draws_its_law(n, p):
    """2,000 draws on the device (order-statistic splits, and inversion at ``n p = 6``)."""
    out = cuda.device_array(2000, np.int64)
    _binomial_kernel[16, 128](out.size, n, p, *KEY, out)
    x = out.copy_to_host()
    assert np.all((x >= 0) & (x <= n))
    assert _binomial_gof(x, n, p) > FALSE_ALARM


def test_the_device_bulk_split_is_multinomial():
    """10**12 tokens over weights 1 : 0 : 3 on the device: all land, none on the empty topic,
    topic 0 gets ``Binom(10**12, 1/4)``."""
    out = cuda.device_array((2000, 3), np.int64)
    _split_kernel[16, 128](out.shape[0], HUGE, cuda.to_device(np.array([1.0, 1.0, 4.0])), *KEY,
                           out)
    hits = out.copy_to_host()
    assert np.all(hits >= 0) and np.all(hits.sum(axis=1) == HUGE) and not hits[:, 1].any()
    assert _binomial_gof(hits[:, 0], HUGE, 0.25) > FALSE_ALARM


@pytest.fixture(scope="module")
def huge_data(data):
    """The fixture's data with 10**12 in one entry, beside non-positive ones in its row."""
    y, y_tilde = (a.astype(np.int64) for a in data)
    y[3, 2] = y_tilde[3, 2] = HUGE
    y_tilde[3, 5:] = -1
    return y, y_tilde


@pytest.mark.parametrize("kind", KINDS)
def test_a_huge_count_is_split_in_bulk_on_the_device(huge_data, kind):
    """One entry of 10**12 (one uniform a token would never end): three sweeps on the device
    draw what the host emulation draws (on a GPU: what a rerun draws), and each sweep's split
    is a valid multinomial: the topic counts are non-negative and add up to the draw of y, by
    row and by column."""
    y, y_tilde = huge_data
    runs = []
    for settings in ({"emulate": True} if SIMULATOR else {}, {"threads_per_block": 32}):
        with launch_settings(**settings):
            if kind == "nonprivate":
                chain = GibbsSampler.nonprivate(y, TopicModel(2), rng=3, device="cuda")
            else:
                chain = GibbsSampler.private(y_tilde, 0.5 if kind == "collapsed" else None,
                                             TopicModel(2), method=kind, rng=3, device="cuda")
            assert chain.engine == ENGINE_OF[kind]
            draws = []
            for _ in range(3):
                chain.sweep()
                engine = chain._fused
                doc_topic = engine.backend.to_host(engine.doc_topic)
                word_topic = engine.backend.to_host(engine.word_topic)
                counts = np.asarray(chain.y if kind == "collapsed" else engine.counts)
                assert np.all(doc_topic >= 0) and np.all(word_topic >= 0)
                assert np.array_equal(doc_topic.sum(axis=1), counts.sum(axis=1))
                assert np.array_equal(word_topic.sum(axis=1), counts.sum(axis=0))
                assert counts[3, 2] > HUGE // 2
                draws.append((counts, doc_topic, word_topic, chain.state["theta"]))
            runs.append(draws)
    for first, again in zip(*runs):
        for a, b in zip(first, again):
            assert np.array_equal(a, b)
