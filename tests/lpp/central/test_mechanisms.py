"""Central-model mechanisms: sensitivities, the exact discrete Laplace noise and its scale,
projections, OPS sensitivity and temperature on hand-computed cases, Gibbs-scan costs, clear
errors."""
import math
from fractions import Fraction

import numpy as np
import pytest

from lpp.central import mechanisms as m
from lpp.distributions import two_sided_geometric_logpmf
from lpp.testing import chisquare_gof


# ---------------------------------------------------------------- sensitivities, T, costs


def test_count_sensitivity_per_relation():
    assert m.count_sensitivity("replace") == 2
    assert m.count_sensitivity("add_remove") == 1
    assert m.count_sensitivity("replace", n_fields=5) == 10
    assert m.count_sensitivity("add_remove", n_fields=5) == 5


def test_ops_temperature_of_the_papers_figure_1():
    # a0 = 0.2: Delta = -log 0.2 + log 0.8 = log 4; T = 2 log 4 / 1 = 2.77 (printed "2.7")
    delta = m.ops_sensitivity_beta(0.2)
    assert delta == pytest.approx(math.log(4.0), rel=1e-15)
    t = m.ops_temperature(1.0, delta)
    assert t == pytest.approx(2.0 * math.log(4.0), rel=1e-15)
    assert math.floor(10 * t) / 10 == 2.7
    # Figure 2's setting: a0 = 0.05, epsilon = 0.1 -> T = 20 log 19
    assert m.ops_temperature(0.1, m.ops_sensitivity_beta(0.05)) == pytest.approx(
        20 * math.log(19.0))


def test_ops_dirichlet_sensitivity_hand_cases():
    assert m.ops_sensitivity_dirichlet(0.2, 2) == pytest.approx(m.ops_sensitivity_beta(0.2))
    # K = 3, a0 = 0.1: extreme point (0.8, 0.1, 0.1) -> log 8
    assert m.ops_sensitivity_dirichlet(0.1, 3) == pytest.approx(math.log(8.0))
    # a0 = 1/(M K) with M = 10, K = 4: log((1 - 3/40) / (1/40)) = log 37
    assert m.ops_sensitivity_dirichlet(1 / 40, 4) == pytest.approx(math.log(37.0))


def test_ops_temperature_cap_and_inverse():
    assert m.ops_temperature(10.0, 1.0) == 1.0
    assert m.ops_temperature(10.0, 1.0, cap=False) == pytest.approx(0.2)
    assert m.ops_epsilon(m.ops_temperature(0.5, 2.0), 2.0) == pytest.approx(0.5)


def test_gibbs_scan_costs():
    assert m.gibbs_scan_epsilon(1.5) == 3.0
    assert m.gibbs_scan_epsilon(1.5, "random", n_updates=10, n_variables=100) == \
        pytest.approx(4 * 1.5 * 10 / 100)
    assert m.gibbs_chain_epsilon(m.gibbs_scan_epsilon(0.5), 200) == pytest.approx(200.0)


# ---------------------------------------------------------------- clear errors


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        m.laplace_mechanism([1, 2], eps, 2)
    with pytest.raises(ValueError, match="epsilon"):
        m.ops_temperature(eps, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        m.privatize_counts([1, 2], eps)


def test_epsilon_type():
    with pytest.raises(TypeError):
        m.check_epsilon("1")
    with pytest.raises(TypeError):
        m.check_epsilon(True)


@pytest.mark.parametrize("a0", [0.0, 0.5, -0.1, 0.7, 1.0])
def test_bad_a0_beta(a0):
    with pytest.raises(ValueError, match="a0"):
        m.ops_sensitivity_beta(a0)


def test_bad_a0_dirichlet_and_categories():
    with pytest.raises(ValueError, match="a0"):
        m.ops_sensitivity_dirichlet(0.25, 4)
    with pytest.raises(ValueError, match="n_categories"):
        m.ops_sensitivity_dirichlet(0.1, 1)


def test_statistics_outside_support():
    with pytest.raises(ValueError, match="non-negative"):
        m.privatize_counts([3, -1], 1.0)
    with pytest.raises(ValueError, match="integers"):
        m.privatize_counts([3, 1.5], 1.0)
    with pytest.raises(ValueError, match="integers"):
        m.laplace_mechanism([0.5], 1.0, 1)
    with pytest.raises(ValueError, match="NaN"):
        m.laplace_mechanism([np.nan], 1.0, 1)


def test_shapes_that_disagree():
    with pytest.raises(ValueError, match="total"):
        m.project_counts(np.zeros((3, 2)), total=np.ones(2))
    with pytest.raises(ValueError, match="category axis"):
        m.privatize_counts(5, 1.0, relation="replace")


def test_bad_options():
    with pytest.raises(ValueError, match="relation"):
        m.count_sensitivity("swap")
    with pytest.raises(ValueError, match="project"):
        m.privatize_counts([1, 2], 1.0, project="yes")
    with pytest.raises(ValueError, match="sensitivity"):
        m.laplace_mechanism([1], 1.0, 0.0)
    with pytest.raises(ValueError, match="scan"):
        m.gibbs_scan_epsilon(1.0, "block")
    with pytest.raises(ValueError, match="exceeds"):
        m.gibbs_scan_epsilon(1.0, "random", n_updates=5, n_variables=4)
    with pytest.raises(TypeError, match="n_variables"):  # required with scan="random"
        m.gibbs_scan_epsilon(1.0, "random", n_updates=5)
    with pytest.raises(TypeError, match="n_categories"):
        m.ops_sensitivity_dirichlet(0.1, 2.5)
    with pytest.raises(ValueError, match="n_fields"):
        m.count_sensitivity("replace", n_fields=0)
    with pytest.raises(ValueError, match="system"):
        m.laplace_mechanism([1], 1.0, 1, rng="urandom")


# ---------------------------------------------------------------- noise laws


def _pmf(alpha, support):
    pmf = np.exp(two_sided_geometric_logpmf(support, alpha))
    pmf[-1] += 1 - pmf.sum()
    return pmf


@pytest.mark.parametrize("eps, delta", [(1.0, 2), (0.5, 1), (Fraction(1, 10), 2)])
def test_central_noise_is_the_exact_discrete_laplace_and_the_test_has_power(eps, delta):
    """The noise fits the pmf of the two-sided geometric with alpha = exp(-eps / delta); the
    same test rejects a sampler whose scale is 10% off, and the float Laplace rounded to
    integers (a different law: too few zeros)."""
    n = 20_000
    noise = m.laplace_mechanism(np.zeros(n, dtype=np.int64), eps, delta, rng=12)
    assert noise.dtype == np.int64
    alpha = math.exp(-float(eps) / delta)
    scale = delta / float(eps)
    support = np.arange(-int(60 * scale) - 10, int(60 * scale) + 11)
    assert chisquare_gof(noise, support, _pmf(alpha, support))
    wider = m.laplace_mechanism(np.zeros(n, dtype=np.int64), eps, 1.1 * delta, rng=12)
    assert not chisquare_gof(wider, support, _pmf(alpha, support))
    narrower = m.laplace_mechanism(np.zeros(n, dtype=np.int64), eps, delta / 1.1, rng=12)
    assert not chisquare_gof(narrower, support, _pmf(alpha, support))
    if scale <= 2:  # the rounded float Laplace differs most where the scale is small
        rounded = np.round(np.random.default_rng(12).laplace(0.0, scale, n)).astype(np.int64)
        assert not chisquare_gof(rounded, support, _pmf(alpha, support))


def test_laplace_scale_and_geometric_alpha_map_onto_each_other():
    """Laplace scale b = delta / eps; the discrete Laplace's alpha = exp(-eps / delta) =
    exp(-1 / b), held exactly; its variance 2 alpha / (1 - alpha)^2 approaches the Laplace's
    2 b^2 as b grows, and the sampler's variance is that of its alpha."""
    assert m.laplace_scale(0.5, 2) == 4.0
    alpha = m.discrete_laplace_alpha(0.5, 2)
    assert alpha.epsilon_over_n == Fraction(1, 4)
    assert float(alpha) == pytest.approx(math.exp(-1 / m.laplace_scale(0.5, 2)), rel=1e-15)
    assert m.discrete_laplace_alpha(Fraction(1, 10), 2).epsilon_over_n == Fraction(1, 20)
    assert m.discrete_laplace_alpha(0.1, 2).epsilon_over_n == Fraction(0.1) / 2  # binary value
    for b in (4.0, 40.0, 400.0):
        a = math.exp(-1 / b)
        assert 2 * a / (1 - a) ** 2 == pytest.approx(2 * b * b, rel=1 / (2 * b))
    noise = m.laplace_mechanism(np.zeros(40_000, dtype=np.int64), 0.5, 2, rng=3)
    a = float(alpha)
    var = 2 * a / (1 - a) ** 2
    # the sample variance's standard error: sqrt((kurtosis - 1) / n) var, kurtosis about 6
    assert noise.var() == pytest.approx(var, rel=5 * math.sqrt(5 / 40_000))
    with pytest.raises(ValueError, match="sensitivity"):
        m.laplace_scale(1.0, 0)
    with pytest.raises(ValueError, match="epsilon"):
        m.discrete_laplace_alpha(0.0, 1)


def test_a_count_of_2_56_is_refused_with_the_limit_named():
    """Float Laplace noise at a count of 2**56 rounded away (the output equalled the input for
    every seed); the exact route refuses statistics beyond 2**53, where float64 (the
    projections' and posteriors' type) stops holding every integer."""
    for big in ([2**56], np.array([2**56], dtype=np.uint64), [2.0**56], [-(2**56)],
                [2**53 + 1]):
        with pytest.raises(ValueError, match=r"MAX_STATISTIC = 2\*\*53"):
            m.laplace_mechanism(big, 1.0, 1, rng=1)
    with pytest.raises(ValueError, match=r"counts beyond MAX_STATISTIC = 2\*\*53"):
        m.privatize_counts([[2**56, 3]], 1.0, rng=1)
    assert m.MAX_STATISTIC == 2**53


def test_counts_at_the_limit_are_noised_exactly():
    """At 2**53 - 100 the noise is added in integers and clipping keeps them: the released
    minus the true counts is the discrete Laplace, entry for entry."""
    n, top = 20_000, 2**53 - 100
    raw = m.privatize_counts(np.full((n, 1), top), 1.0, relation="add_remove", project="none",
                             rng=5)
    noise = raw - top
    support = np.arange(-40, 41)
    assert chisquare_gof(noise.ravel(), support, _pmf(math.exp(-1.0), support))
    clipped = m.privatize_counts(np.full((n, 1), top), 1.0, relation="add_remove",
                                 project="clip", rng=5)
    assert clipped.dtype == np.int64
    np.testing.assert_array_equal(clipped, raw)
    assert (clipped != top).mean() > 0.5  # P(noise != 0) = 2 alpha / (1 + alpha) = 0.54


def _as_ints(a):
    """Every entry of ``a`` as a Python int, so a comparison cannot round."""
    return [int(v) for v in np.ravel(a)]


def test_a_row_total_beyond_2_53_is_released_exactly():
    """Rows of (2**53, 1) total 2**53 + 1: the clipped release is exactly max(count + noise,
    0) per entry, the noise read off the unclipped release drawn with the same seed, all
    compared as Python ints."""
    counts = np.tile([2**53, 1], (200, 1))
    raw = m.privatize_counts(counts, 1.0, project="none", rng=7)
    noise = [r - c for r, c in zip(_as_ints(raw), _as_ints(counts))]
    assert set(noise) != {0}
    clipped = m.privatize_counts(counts, 1.0, project="clip", rng=7)
    want = [max(c + t, 0) for c, t in zip(_as_ints(counts), noise)]
    assert _as_ints(clipped) == want
    assert any(v > 2**53 and v % 2 for v in want)  # values float64 cannot hold were released
    for row, true_row, noise_row in zip(clipped, counts, np.reshape(noise, counts.shape)):
        if min(row) > 0:  # nothing clipped: the row adds up to its true total plus its noise
            assert sum(_as_ints(row)) == 2**53 + 1 + sum(int(t) for t in noise_row)


def test_1024_counts_of_2_53_are_refused_for_the_projection_and_released_exactly_clipped():
    """1,024 counts of 2**53 add up to 2**63, one past int64: the projection onto that
    total refuses it, naming the caller's counts and the exact total (not a wrapped
    negative); clipping releases every count exactly."""
    counts = np.full(1024, 2**53)
    with pytest.raises(ValueError, match=r"^row totals of counts beyond MAX_STATISTIC = 2\*\*53 "
                                         r"are refused \(e\.g\. 9223372036854775808\)"):
        m.privatize_counts(counts, 1.0, rng=1)
    raw = m.privatize_counts(counts, 1.0, project="none", rng=2)
    clipped = m.privatize_counts(counts, 1.0, project="clip", rng=2)
    assert _as_ints(clipped) == _as_ints(raw)
    assert sum(_as_ints(clipped)) == 1024 * 2**53 + sum(int(v) - 2**53 for v in raw)
    assert m.exact_sum(np.full((1023, 2), 2**53), axis=0).tolist() == [1023 * 2**53] * 2
    with pytest.raises(ValueError, match=r"^rows add up to 9223372036854775808 along axis 0, "
                                         r"beyond int64"):
        m.exact_sum(np.full((1024, 2), 2**53), "rows", axis=0)


def test_a_too_small_epsilon_is_named_as_the_caller_wrote_it():
    """The exact sampler refuses epsilon / sensitivity below 1e-15 in its own terms
    (``epsilon/N``); the release says it in the caller's."""
    with pytest.raises(ValueError, match=r"^epsilon / 2 \(the count sensitivity under "
                                         r"relation='replace'\) = 5e-17"):
        m.privatize_counts([1, 2], 1e-16)
    with pytest.raises(ValueError, match=r"^epsilon / sensitivity = 1e-16"):
        m.laplace_mechanism([1], 1e-16, 1)


@pytest.mark.parametrize("values", [
    np.array([3, 4], dtype="timedelta64[s]"), np.array([3], dtype="timedelta64[D]"),
    np.array(["2020-01-01"], dtype="datetime64[D]"), [True, 2], [[1, 2], [False, 3]],
    np.array([True, False]), True, np.array([1, 2], dtype=object), [2**70, 1]],
    ids=["timedelta_s", "timedelta_D", "datetime", "bool_in_list", "bool_in_nested_list",
         "bool_array", "bool", "object", "beyond_int64"])
def test_durations_dates_bools_and_objects_are_not_statistics(values):
    with pytest.raises(TypeError, match=r"^statistics must "):
        m.laplace_mechanism(values, 1.0, 1, rng=1)
    with pytest.raises(TypeError, match=r"^counts must "):
        m.privatize_counts(values, 1.0, project="none", rng=1)
    with pytest.raises(TypeError, match=r"^totals\[0\] must "):
        m.privatize_counts(values, 1.0, project="none", rng=1, name="totals[0]")


def test_whole_floats_are_read_exactly_and_others_refused_never_truncated():
    out = m.privatize_counts([3.0, 2.0**53], 1.0, project="none", rng=3)
    ref = m.privatize_counts([3, 2**53], 1.0, project="none", rng=3)
    assert out.dtype == np.int64 and _as_ints(out) == _as_ints(ref)
    for bad in ([3.0, 2.5], [2.0**53 + 2.0]):
        with pytest.raises(ValueError, match=r"^counts "):
            m.privatize_counts(bad, 1.0, rng=3)


def test_a_real_valued_release_is_refused():
    with pytest.raises(ValueError, match="real-valued release"):
        m.laplace_mechanism([0.5, 2.0], 1.0, 1)
    with pytest.raises(ValueError, match="real-valued release"):
        m.privatize_counts([[0.5, 2.0]], 1.0)


def test_system_randomness_by_default_and_seeds_reproduce():
    a, b = (m.laplace_mechanism(np.zeros(200, dtype=np.int64), 1.0, 1) for _ in range(2))
    assert not np.array_equal(a, b)  # the OS CSPRNG: equal with probability ~0.46**200
    c = m.privatize_counts([[3, 7], [1, 1]], 1.0, rng=5)
    d = m.privatize_counts([[3, 7], [1, 1]], 1.0, rng=5)
    np.testing.assert_array_equal(c, d)
    e = m.privatize_counts([3, 7], 1.0, rng=5, project="none")
    assert e.dtype == np.int64
    np.testing.assert_array_equal(e, m.privatize_counts([3, 7], 1.0, rng=5, project="none"))


def test_a_budget_split_over_fields_composes_to_it_exactly():
    share = m.split_epsilon(0.1, 3)
    assert 3 * share == Fraction(0.1)
    assert m.release_source(None) == "system" and m.release_source("system") == "system"
    gen = m.release_source(4)
    assert m.release_source(gen) is gen


# ---------------------------------------------------------------- projections


def test_clip_projection():
    np.testing.assert_array_equal(m.project_counts([-1.5, 2.0, 0.0]), [0.0, 2.0, 0.0])


def _simplex_by_bisection(v, total):
    lo, hi = v.min() - total - 1, v.max() + 1
    for _ in range(200):
        mid = (lo + hi) / 2
        if np.maximum(v - mid, 0).sum() > total:
            lo = mid
        else:
            hi = mid
    return np.maximum(v - (lo + hi) / 2, 0)


def test_total_projection_is_the_euclidean_projection():
    rng = np.random.default_rng(3)
    v = rng.normal(5, 8, size=(200, 6))
    total = rng.integers(0, 40, size=200).astype(float)
    out = m.project_counts(v, total)
    assert np.all(out >= 0)
    np.testing.assert_allclose(out.sum(axis=1), total, atol=1e-9)
    ref = np.array([_simplex_by_bisection(r, t) for r, t in zip(v, total)])
    np.testing.assert_allclose(out, ref, atol=1e-8)


def test_privatize_counts_projections_per_relation():
    y = np.array([[30, 10, 0], [0, 0, 5]])
    out = m.privatize_counts(y, 0.5, relation="replace", rng=1)
    np.testing.assert_allclose(out.sum(axis=1), y.sum(axis=1))
    assert np.all(out >= 0)
    out = m.privatize_counts(y, 0.5, relation="add_remove", rng=1)
    assert np.all(out >= 0)
    raw = m.privatize_counts(y, 0.5, relation="add_remove", project="none", rng=1)
    np.testing.assert_array_equal(out, np.maximum(raw, 0))
