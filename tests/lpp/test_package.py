"""The package's front door: a docstring that maps it, and the installed version."""
from importlib.metadata import PackageNotFoundError, version

import lpp


def test_package_docstring_and_version():
    assert lpp.__doc__ and "lpp.inference" in lpp.__doc__
    try:
        expect = version("lpp")
    except PackageNotFoundError:
        expect = "0+unknown"
    assert isinstance(lpp.__version__, str) and lpp.__version__ == expect


# ---------------------------------------------------------------- the import graph
import ast  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: what `pip install lpp` does not bring: the extras and the compendium
EXTRAS = ("tqdm", "dask", "distributed", "arviz", "xarray", "gensim", "papermill", "ipykernel",
          "nbformat", "matplotlib", "seaborn", "pandas", "yaml", "dvc", "study")


def _modules(package="lpp"):
    """{module name: path} of every module of ``package``."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name, path, modules):
    """The modules that ``name`` imports anywhere in its code (functions included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in modules else base)
    return out


def _graph():
    modules = _modules()
    return {name: {m for m in _imports(name, path, modules) if m in modules and m != name}
            for name, path in modules.items()}, modules


def _cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _is_package_init_edge(a, b):
    """A package importing its own submodule (its __init__ re-exports) is not a cycle."""
    return b.startswith(a + ".")


def test_lpp_has_no_import_cycles():
    graph, _ = _graph()
    # a submodule that imports its parent package runs that package's __init__, which may
    # import the submodule back: count those edges, drop only parent -> child re-exports
    graph = {a: {b for b in bs if not _is_package_init_edge(a, b)} for a, bs in graph.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_lpp_never_imports_the_compendium():
    _, modules = _graph()
    offenders = {name: sorted(m for m in _imports(name, path, modules)
                              if m.split(".")[0] == "study")
                 for name, path in modules.items()}
    assert not {k: v for k, v in offenders.items() if v}


def test_lpp_works_with_numpy_scipy_and_numba_alone():
    """Every module of the library imports, and a small fit and privatization run, while the
    extras and the compendium are made unimportable."""
    library = sorted(m for m in _modules() if not m.endswith(("_distributed_worker",)))
    code = textwrap.dedent(f"""
        import importlib, importlib.abc, sys
        BLOCKED = {EXTRAS!r}
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)")
        sys.meta_path.insert(0, Block())
        for name in {library!r}:
            importlib.import_module(name)
        import numpy as np
        from lpp.mechanism import privatize
        from lpp.inference import TopicModel, fit_private
        from lpp.vi import fit_variational
        y = np.random.default_rng(0).poisson(1.0, (12, 9))
        y_tilde = privatize(y, 0.5, rng=1)
        res = fit_private(y_tilde, 0.5, TopicModel(2), n_iter=4, burn_in=2, thin=1, rng=0,
                          progress=False)
        assert res.mu_hat.shape == y.shape
        vi = fit_variational(y_tilde, 0.5, TopicModel(2), rng=0, max_iter=3)
        assert vi.mu_hat.shape == y.shape
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        assert not loaded, loaded
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
