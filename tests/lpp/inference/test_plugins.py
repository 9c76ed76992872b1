"""The two kinds of plug-in: models and privacy steps stand apart, users can write either, and
fused engines are chosen by declared capabilities."""
import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lpp.inference
from lpp.inference import (
    CollapsedPrivacy,
    GibbsSampler,
    PoissonFactorization,
    PrivacyStep,
    TopicModel,
    fit_nonprivate,
    fit_private,
    make_privacy_step,
)
from lpp.inference import RunOptions
from lpp.testing.geweke import geweke_simulations
from lpp.distributions import gamma_rate_np
from lpp.testing import geweke_test

PACKAGE = Path(lpp.inference.__file__).parent


def _imports(path: Path, root: Path) -> set[str]:
    """Absolute names of the modules a source file imports (relative imports resolved against
    its package, ``root`` being the folder that holds ``lpp``)."""
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
    return names


def _reaches(sources, forbidden, root=PACKAGE.parent.parent) -> list[str]:
    return [f"{path.name} imports {name}" for path in sources
            for name in sorted(_imports(path, root))
            if any(name == f or name.startswith(f + ".") for f in forbidden)]


def test_models_and_privacy_steps_never_import_each_other():
    models = sorted((PACKAGE / "models").rglob("*.py"))
    privacy = sorted((PACKAGE / "privacy").glob("*.py"))
    assert models and privacy[0].exists()
    above = ["lpp.inference.chain", "lpp.inference.fit", "lpp.inference.count_sources",
             "lpp.testing.geweke", "lpp.inference.engines"]
    assert _reaches(models, ["lpp.inference.privacy", *above]) == []
    assert _reaches(privacy, ["lpp.inference.models", *above]) == []


def test_each_model_folder_imports_no_other_model():
    """A built-in model's folder builds on the interface and the shared kernels alone, so a
    model is added or changed in its folder and its registration (docs/library.md, *Adding a
    model*)."""
    folders = sorted(p.parent for p in (PACKAGE / "models").glob("*/__init__.py"))
    assert {f.name for f in folders} >= {"topics", "communities", "cp"}
    for folder in folders:
        others = [f"lpp.inference.models.{f.name}" for f in folders if f != folder]
        assert _reaches(sorted(folder.rglob("*.py")), others) == []


def test_the_import_check_sees_a_forbidden_import(tmp_path):
    bad = PACKAGE / "models" / "topics" / "model.py"
    fake = tmp_path / "lpp" / "inference" / "models" / "fake.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(bad.read_text() + "\nfrom lpp.inference.privacy import NoiseLevels\n"
                    "from ..engines import sparse_topics\n")
    found = _reaches([fake], ["lpp.inference.privacy", "lpp.inference.engines"], root=tmp_path)
    assert any("privacy" in f for f in found) and any("engines" in f for f in found)


# --- a privacy step written by a user --------------------------------------------------------

class EnumeratedPrivacy(PrivacyStep):
    """The exact conditional of each count by enumeration over a wide support (NumPy only)."""

    name = "enumerated"

    def sample(self, y_tilde, noise, mu, observed, state, seed, iteration):
        rng = np.random.default_rng([seed, iteration])
        alpha = noise.full()
        y = np.zeros(y_tilde.shape, dtype=np.int64)
        for i in np.flatnonzero(observed):
            yt, a, m = y_tilde.flat[i], alpha.flat[i], mu.flat[i]
            support = np.arange(int(max(yt, 0) + m + 30 * np.sqrt(m + 1) + 40))
            log_w = (support * np.log(m) - np.cumsum(np.log(np.maximum(support, 1)))
                     + np.abs(yt - support) * np.log(a))
            w = np.exp(log_w - log_w.max())
            y.flat[i] = rng.choice(support, p=w / w.sum())
        return y, {}


def test_a_user_privacy_step_runs_through_fit_private(topic_data):
    _, _, y_tilde, alpha = topic_data
    a = fit_private(y_tilde, alpha, TopicModel(3), method=EnumeratedPrivacy(),
                    run=RunOptions(n_iter=4, thin=2, progress=False), rng=3)
    b = fit_private(y_tilde, alpha, TopicModel(3), method=EnumeratedPrivacy(),
                    run=RunOptions(n_iter=4, thin=2, progress=False), rng=3)
    assert a.method == "enumerated" and a.engine == "dense"
    assert np.array_equal(a.mu_hat, b.mu_hat) and np.all(np.isfinite(a.log_joint))


@pytest.mark.slow
def test_a_user_privacy_step_gets_it_right():
    forward, chain = geweke_simulations(TopicModel(2, a0=3.0, b0=3.0), (3, 4),
                                        method=EnumeratedPrivacy(), alpha=0.7, n_forward=4000,
                                        n_chain=4000, rng=5)
    result = geweke_test(forward, chain)
    assert result, f"\n{result}"


def test_overriding_a_vouched_method_drops_the_capability(topic_data):
    _, _, y_tilde, alpha = topic_data

    class Wrapped(CollapsedPrivacy):
        def sample(self, *args):
            return super().sample(*args)

    class Renewed(Wrapped):
        capabilities = frozenset({"exact_conditional"})

    class Renamed(CollapsedPrivacy):
        name = "renamed"

    assert "exact_conditional" in CollapsedPrivacy.capabilities
    assert Wrapped.capabilities == frozenset()
    assert "exact_conditional" in Renamed.capabilities
    engine = {cls: GibbsSampler.private(y_tilde, alpha, TopicModel(3), method=cls(), rng=1).engine
              for cls in (CollapsedPrivacy, Wrapped, Renewed, Renamed)}
    assert engine == {CollapsedPrivacy: "sparse", Wrapped: "dense", Renewed: "sparse",
                      Renamed: "sparse"}


def test_privacy_steps_by_name_or_instance():
    step = CollapsedPrivacy()
    assert make_privacy_step(step) is step
    assert type(make_privacy_step("bessel")).__name__ == "BesselPrivacy"
    with pytest.raises(ValueError, match="collapsed"):
        make_privacy_step("laplace")
    with pytest.raises(TypeError, match="PrivacyStep"):
        make_privacy_step(CollapsedPrivacy)


# --- a model written by a user ---------------------------------------------------------------

class RowRates(PoissonFactorization):
    """Each row has one rate shared by its entries: ``mu[d, v] = r[d]``."""

    name = "row-rates"

    def latent_shapes(self, shape):
        return {"r": (shape[0], 1)}

    def rate(self, state):
        return np.repeat(state["r"], self._n_cols, axis=1)

    def check_shape(self, shape):
        super().check_shape(shape)
        self._n_cols = shape[1]

    def allocate(self, state, y, observed, seed, iteration):
        return {"row": np.where(observed.is_observed, y, 0).sum(axis=1, keepdims=True)}

    def update_latents(self, state, stats, observed, seed, iteration):
        rng = np.random.default_rng([seed, iteration])
        shape = self.a0 + stats["row"]
        rate = self.b0 + observed.weights.sum(axis=1, keepdims=True)
        return {"r": gamma_rate_np(rng, shape, rate, shape.shape)}


def test_a_user_model_runs_through_fit_private_and_fit_nonprivate(topic_data):
    _, y, y_tilde, alpha = topic_data
    model = RowRates(1, a0=1.0)
    res = fit_private(y_tilde, alpha, model,
                      run=RunOptions(n_iter=200, burn_in=100, progress=False), rng=2)
    assert res.engine == "dense" and res.samples["r"].shape == (100, y.shape[0], 1)
    # the private posterior means of the row rates follow the rows' true mean counts
    rows = res.samples["r"].mean(axis=0)[:, 0]
    assert np.corrcoef(rows, y.mean(axis=1))[0, 1] > 0.8
    # given the true counts the posterior is conjugate: Gamma(a0 + row sum, b0 + V)
    ref = fit_nonprivate(y, model, run=RunOptions(n_iter=2000, burn_in=0, progress=False), rng=3)
    draws = ref.samples["r"][:, :, 0]
    exact_mean = (1.0 + y.sum(axis=1)) / (1.0 + y.shape[1])
    exact_sd = np.sqrt(1.0 + y.sum(axis=1)) / (1.0 + y.shape[1])
    z = (draws.mean(axis=0) - exact_mean) / (exact_sd / np.sqrt(draws.shape[0]))
    assert np.abs(z).max() < 4.0  # 30 rows, independent draws: a false alarm about 2e-3


def test_the_package_imports_under_python_OO():
    code = "import lpp, lpp.inference, lpp.metrics, lpp.distributions, lpp.testing"
    run = subprocess.run([sys.executable, "-OO", "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
