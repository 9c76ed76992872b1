"""Property tests of the data owners' entry points over arbitrary input: every call returns a
valid privatized matrix or raises a clear ValueError / TypeError within a time bound, and a
refused call writes nothing."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lpp.mechanism import exact_alpha, privatize
from lpp.formats.privatized import load_privatized, privatize_counts
from lpp.testing import time_limit

SECONDS = 5  # far above any valid call on these sizes; a hang fails, it never blocks CI


shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4)
counts = st.one_of(
    hnp.arrays(np.int64, shapes, elements=st.integers(-5, 2**63 - 1)),
    hnp.arrays(np.float64, shapes, elements=st.floats(allow_nan=True, allow_infinity=True)),
    hnp.arrays(np.bool_, shapes),
    hnp.arrays(np.uint64, shapes),
    st.lists(st.one_of(st.integers(-3, 10), st.text(max_size=2), st.none()), max_size=4),
)
reals = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 10**30),
                  st.just(0.0), st.text(max_size=3), st.none())
SMALL = dict(max_examples=150, suppress_health_check=[HealthCheck.too_slow])


def _check(y_tilde, y):
    assert isinstance(y_tilde, np.ndarray) and y_tilde.dtype == np.int64
    assert y_tilde.shape == np.shape(y)


@settings(**SMALL)
@given(y=counts, alpha=st.one_of(reals, hnp.arrays(np.float64, shapes)), exact=st.booleans())
def test_privatize_answers_or_refuses_clearly(y, alpha, exact):
    try:
        with time_limit(SECONDS):
            if exact:
                alpha = exact_alpha(alpha, 1)
            y_tilde = privatize(y, alpha, exact=exact)
    except (ValueError, TypeError):
        return
    _check(y_tilde, y)


@settings(**SMALL)
@given(y=counts, epsilon=reals, N=reals, exact=st.booleans())
def test_privatize_counts_answers_or_writes_nothing(tmp_path_factory, y, epsilon, N, exact):
    out = tmp_path_factory.mktemp("p") / "private"
    shape = np.shape(y)
    ids = dict(row_ids=[str(i) for i in range(shape[0] if len(shape) > 0 else 0)],
               column_ids=[str(j) for j in range(shape[1] if len(shape) > 1 else 0)])
    try:
        with time_limit(SECONDS):
            data = privatize_counts(y, out, epsilon=epsilon, N=N, source="x", exact=exact, **ids)
    except (ValueError, TypeError):
        assert not out.exists() or not any(out.iterdir()), "a refused call left files behind"
        return
    _check(data.y_tilde, y)
    assert np.array_equal(load_privatized(out).y_tilde, data.y_tilde)
