import numpy as np
import pytest

from lpp.formats.fits import DATA_FILE, load_fit, save_fit
from lpp.inference import fit_private


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(0)
    y_tilde = rng.poisson(2.0, (12, 9)) - rng.poisson(0.5, (12, 9))
    return fit_private(y_tilde, 0.4, "topics", n_components=2, n_iter=12, burn_in=4, thin=4,
                       rng=5, save_counts=True, progress=False)


def test_round_trip(tmp_path, result):
    save_fit(result, tmp_path, data="somewhere", extra={"epsilon_over_n": 1.0})
    back = load_fit(tmp_path)
    assert np.array_equal(back.mu_hat, result.mu_hat)
    assert np.array_equal(back.log_joint, result.log_joint)
    assert set(back.samples) == {"theta", "phi"}  # sampled counts are not kept
    assert back.samples["phi"].shape == (2, 2, 9)
    assert back.meta["seed"] == result.seed and back.meta["extra"]["epsilon_over_n"] == 1.0
    assert back.method == "collapsed" and back.meta["n_saved"] == 2


def test_same_fit_same_bytes(tmp_path, result):
    save_fit(result, tmp_path / "a", data="x")
    save_fit(result, tmp_path / "b", data="x")
    assert (tmp_path / "a" / DATA_FILE).read_bytes() == (tmp_path / "b" / DATA_FILE).read_bytes()


def test_corrupt_file_is_refused(tmp_path, result):
    save_fit(result, tmp_path, data="x")
    path = tmp_path / DATA_FILE
    payload = bytearray(path.read_bytes())
    payload[len(payload) // 2] ^= 0xFF
    path.write_bytes(bytes(payload))
    with pytest.raises(ValueError, match="sha256"):
        load_fit(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_fit(tmp_path / "nowhere")
