"""Shared helpers of the model tests."""
import itertools

import numpy as np
import pytest
from scipy import stats

from lpp.testing import chisquare_gof


def split_fits_multinomial(splits, count: int, p) -> bool:
    """Whether the rows of ``splits`` (each a split of ``count`` over ``len(p)`` cells) pass
    the chi-square test against ``Mult(count, p)``, over every composition of ``count``."""
    comps = [c for c in itertools.product(range(count + 1), repeat=len(p)) if sum(c) == count]
    codes = np.array([comps.index(tuple(row)) for row in np.asarray(splits)])
    pmf = stats.multinomial(count, p).pmf(np.array(comps))
    return chisquare_gof(codes, np.arange(len(comps)), pmf)


@pytest.fixture(scope="session")
def multinomial_split():
    """:func:`split_fits_multinomial` (tests cannot import conftest under importlib mode)."""
    return split_fits_multinomial
