"""The recipe for adding a model (docs/library.md, *Adding a model*): its example model fits
through both fit functions, meets the contract, finds the topic model's posterior (the same
model, fitted by other code), and its registration makes it a model by name."""
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from lpp.inference import MODELS, RunOptions, TopicModel, fit_nonprivate, fit_private
from lpp.inference import make_model, model_from_params
from lpp.mechanism import privatize
from lpp.testing import check_model

PAGE = Path(__file__).resolve().parents[4] / "docs" / "library.md"


@pytest.fixture(scope="module")
def recipe_model():
    """The model class that the recipe's example defines, from the page itself."""
    text = PAGE.read_text()
    section = text[text.index("## Adding a model"):]
    section = section[:section.index("\n## ", 1)]
    code = textwrap.dedent(re.search(r"```python\n(.*?)```", section, re.S)[1])
    defined = code[:code.index("\ny = ")]  # the class, without the page's own small fits
    namespace = {}
    exec(compile(defined, str(PAGE), "exec"), namespace)
    return namespace["NumpyFactorization"]


def test_the_recipe_model_runs_through_fit_private_and_fit_nonprivate(recipe_model):
    y = np.random.default_rng(5).poisson(2.0, (10, 7))
    run = RunOptions(n_iter=8, burn_in=4, progress=False)
    for fit in (fit_private(privatize(y, 0.5, rng=6), 0.5, recipe_model(2), method="collapsed",
                            run=run, rng=1),
                fit_nonprivate(y, recipe_model(2), run=run, rng=1)):
        assert fit.engine == "dense" and fit.model["model"] == "numpy_factorization"
        assert fit.samples["theta"].shape == (4, 10, 2) and fit.mu_hat.shape == y.shape
        assert np.isfinite(fit.log_joint).all()


@pytest.mark.slow
def test_the_recipe_model_meets_the_contract(recipe_model):
    check_model(recipe_model(2, a0=3.0, b0=3.0), rng=11)


def test_the_recipe_model_finds_the_topic_models_posterior(recipe_model):
    """Its likelihood and prior are the topic model's: the posterior means of the rates agree
    with TopicModel's (compiled kernels, other streams) within Monte Carlo error."""
    truth = np.random.default_rng(7)
    y = truth.poisson(truth.gamma(2.0, 1.0, (10, 2)) @ truth.gamma(2.0, 1.0, (2, 8)))
    run = RunOptions(n_iter=1500, burn_in=300, thin=2, save_latents=False, progress=False)
    ours = fit_nonprivate(y, recipe_model(2, a0=1.0), run=run, rng=2).mu_hat
    reference = fit_nonprivate(y, TopicModel(2, a0=1.0), run=run, rng=3).mu_hat
    # seeds 2/3, 12/13, 22/23: 0.2% to 0.6% apart in total, 3% to 5% at most in an entry; a
    # Gamma rate of theta with b0 doubled moves the total by 2.5%
    assert abs(ours.sum() / reference.sum() - 1.0) < 0.015
    assert np.abs(ours - reference).max() < 0.1 * reference.max()


def test_registering_the_recipe_model_makes_it_a_model_by_name(recipe_model, monkeypatch):
    monkeypatch.setitem(MODELS, "numpy_factorization", recipe_model)  # the registration line
    model = make_model("numpy_factorization", n_components=3, a0=0.5)
    assert type(model) is recipe_model and model.n_components == 3 and model.a0 == 0.5
    rebuilt = model_from_params(model.params())
    assert type(rebuilt) is recipe_model and rebuilt.params() == model.params()
