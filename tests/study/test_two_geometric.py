"""study.two_geometric: the Skellam mixture equals the two-sided geometric pmf, computed
independently; a wrong mixing law is caught; the figure's numbers repeat."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from lpp.distributions import skellam_logpmf
from study import two_geometric as tg


def _two_sided_geometric(k, alpha):
    """The pmf in closed form, (1 - alpha) / (1 + alpha) alpha^|k| (independent of lpp)."""
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(k)


@pytest.mark.parametrize("alpha", [0.05, 0.3, 0.7, 0.85])
def test_the_mixture_is_the_two_sided_geometric(alpha):
    k = np.arange(-40, 41)
    assert np.max(np.abs(tg.skellam_mixture_pmf(k, alpha) - _two_sided_geometric(k, alpha))) \
        < 1e-12


def test_the_mixture_agrees_with_scipy_skellam_at_fixed_nodes():
    # the library's Skellam pmf, which the mixture integrates, against scipy's

    k = np.arange(-20, 21)
    for mu1, mu2 in tg.SKELLAM_RATES:
        np.testing.assert_allclose(np.exp(skellam_logpmf(k, mu1, mu2)),
                                   stats.skellam.pmf(k, mu1, mu2), rtol=1e-10, atol=1e-300)


def test_a_wrong_mixing_law_is_caught(monkeypatch):
    # rates of mean alpha (not alpha / (1 - alpha)) give another law: the check must see it
    alpha, k = 0.5, np.arange(-10, 11)
    wrong = tg.skellam_mixture_pmf(k, alpha / (1 + alpha))  # its rates' mean is alpha
    assert np.max(np.abs(wrong - _two_sided_geometric(k, alpha))) > 1e-2
    monkeypatch.setattr(tg, "two_sided_geometric_logpmf",
                        lambda k, a: np.log(_two_sided_geometric(k, a * 0.9)))
    assert not tg.check_identity((alpha,))["holds"]


def test_the_identity_check_and_tails():
    check = tg.check_identity()
    assert check["holds"] and check["max_abs_gap_below"] <= 1e-12
    for alpha in tg.ALPHAS:
        tail = tg.tail_comparison(alpha)
        assert tail["two_sided_geometric"] > tail["skellam"] > 0


def test_bad_alpha_is_refused():
    with pytest.raises(ValueError, match="alpha"):
        tg.skellam_mixture_pmf([0], 1.0)


def test_the_numbers_repeat_and_the_figure_is_written(tmp_path, monkeypatch):
    out, png = tmp_path / "two_geometric.json", tmp_path / "fig.png"
    (tmp_path / "params.yaml").write_text("profile: test\n")
    monkeypatch.chdir(tmp_path)  # the caption reads the profile from ./params.yaml
    assert tg.main(["--out", str(out), "--figure", str(png)]) == 0
    first = out.read_bytes()
    assert tg.main(["--out", str(out), "--figure", str(png)]) == 0
    assert out.read_bytes() == first
    assert json.loads(first)["identity"]["holds"] and png.stat().st_size > 10_000
