"""The data fingerprints that checkpoints and saved fits are tied to."""
import numpy as np
import pytest

from lpp.inference.count_sources import PrivateCounts, TrueCounts
from lpp.inference.models.base import Observed
from lpp.inference.privacy import make_privacy_step, noise_levels

Y_TILDE = np.arange(-5, 7).reshape(3, 4)
OBSERVED = np.array([[1, 1, 0, 1], [1, 1, 1, 1], [0, 1, 1, 1]], dtype=bool)
ROW_ALPHA = np.array([0.3, 0.5, 0.7])[:, None] * np.ones((3, 4))


def _sources():
    return {
        "per-row alpha": PrivateCounts(Y_TILDE, noise_levels(ROW_ALPHA, (3, 4)),
                                       make_privacy_step("collapsed")),
        "scalar alpha": PrivateCounts(Y_TILDE, noise_levels(0.5, (3, 4)),
                                      make_privacy_step("collapsed")),
        "naive": PrivateCounts(Y_TILDE, None, make_privacy_step("naive")),
        "true counts": TrueCounts(np.abs(Y_TILDE)),
    }


# Digests written by earlier releases (which hashed bytes() copies of the arrays): a fit or a
# checkpoint saved then must still be recognised as made from the same data.
@pytest.mark.parametrize("name, digest", [
    ("per-row alpha", "06f0b79105f4b8c6b41fb1242c070995968973561ef1b05af1821870a826f2ac"),
    ("scalar alpha", "b39e7eca3ae78074aa5e7e764fa568655c5aae259a69071fee0e769b6a1d54ea"),
    ("naive", "794434c3ffb44e97a8a62513117b15744a33e7988dd17275ca9fb7c90c6807d9"),
    ("true counts", "8bb2ea731842ef739a7c0fd51fa91e60e187e88e0cdc3c09fc11eed344e55fde"),
])
def test_fingerprints_are_those_earlier_releases_wrote(name, digest):
    assert _sources()[name].fingerprint(Observed(OBSERVED)) == digest


def test_the_fingerprint_follows_the_values_not_the_memory_layout():
    observed = Observed(OBSERVED)
    fortran = PrivateCounts(np.asfortranarray(Y_TILDE), noise_levels(0.5, (3, 4)),
                            make_privacy_step("collapsed"))
    assert fortran.fingerprint(observed) == _sources()["scalar alpha"].fingerprint(observed)


def test_the_fingerprint_sees_every_part_of_the_data():
    base = _sources()["per-row alpha"].fingerprint(Observed(OBSERVED))
    changed_count = Y_TILDE.copy()
    changed_count[2, 3] += 1
    changed_mask = OBSERVED.copy()
    changed_mask[0, 0] = False
    others = [
        PrivateCounts(changed_count, noise_levels(ROW_ALPHA, (3, 4)),
                      make_privacy_step("collapsed")).fingerprint(Observed(OBSERVED)),
        PrivateCounts(Y_TILDE, noise_levels(ROW_ALPHA * 1.01, (3, 4)),
                      make_privacy_step("collapsed")).fingerprint(Observed(OBSERVED)),
        _sources()["per-row alpha"].fingerprint(Observed(changed_mask)),
    ]
    assert base not in others and len(set(others)) == 3
