"""The mapping of a fit's keywords of earlier releases onto its options object."""
import dataclasses

import pytest

from lpp.validation import moved_keywords, warn_moved


@dataclasses.dataclass(frozen=True)
class _Options:
    steps: int = 10
    quiet: bool = False


def _fit(run=None, **deprecated):
    """A fit that took ``steps=`` and ``quiet=`` (and ``mask=``) as keywords before."""
    run, rest = moved_keywords("fit", deprecated, _Options, run, public="pkg.Options",
                               others=("mask",))
    if deprecated:
        warn_moved("fit", deprecated, "give them as run=Options(...)", stacklevel=2)
    return run, rest


def test_fields_become_the_options_and_the_rest_comes_back():
    assert _fit() == (None, {})
    assert _fit(run=_Options(steps=3)) == (_Options(steps=3), {})
    with pytest.warns(FutureWarning, match=r"^fit\(mask=, steps=\) is deprecated and will be "
                                           r"removed: give them as run=Options\(\.\.\.\)$") \
            as notices:
        assert _fit(mask="m", steps=3) == (_Options(steps=3), {"mask": "m"})
    assert notices[0].filename == __file__  # the caller's line, not the fit's
    with pytest.warns(FutureWarning):
        assert _fit(mask=None) == (None, {"mask": None})


@pytest.mark.parametrize("kwargs,match", [
    ({"run": {"steps": 3}}, "run must be a pkg.Options, got dict"),
    ({"run": _Options(), "steps": 3}, r"give \['steps'\] in run=_Options\(\.\.\.\), not beside"),
    ({"n_steps": 3, "steps": 2}, r"fit\(\) got an unexpected keyword argument 'n_steps'"),
])
def test_what_cannot_be_mapped_is_refused(kwargs, match):
    with pytest.raises(TypeError, match=match):
        _fit(**kwargs)
