"""The package's front door: a docstring that maps it, and the installed version."""
from importlib.metadata import PackageNotFoundError, version

import pytest

import lpp


def test_package_docstring_and_version():
    assert lpp.__doc__ and "lpp.inference" in lpp.__doc__
    try:
        expect = version("lpp")
    except PackageNotFoundError:
        expect = "0+unknown"
    assert isinstance(lpp.__version__, str) and lpp.__version__ == expect


def test_the_front_door_lists_the_submodules_and_nothing_borrowed():
    public = {name.split(".")[1] for name in _modules()
              if name.count(".") == 1 and not name.split(".")[1].startswith("_")}
    names = set(dir(lpp))
    assert "__version__" in names and public and public <= names
    assert not {"version", "PackageNotFoundError", "import_module", "iter_modules"} & names
    assert "_numba_cache" not in names and not hasattr(lpp, "version")
    with pytest.raises(AttributeError, match="no_such_module"):
        lpp.no_such_module


def test_submodules_load_on_first_use_and_import_lpp_loads_none():
    code = textwrap.dedent("""
        import sys
        import lpp
        loaded = sorted(m for m in sys.modules if m.startswith("lpp."))
        assert loaded == ["lpp._numba_cache"], loaded
        assert callable(lpp.inference.fit_private) and callable(lpp.mechanism.privatize)
        assert "lpp.inference" in sys.modules and "lpp.vi" not in sys.modules
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


# ---------------------------------------------------------------- the import graph
import ast  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: the compendium's own packages beside lpp in the repository (study, data_prep, bench, ...),
#: which the distribution does not hold
COMPENDIUM = tuple(sorted(p.parent.name for p in ROOT.glob("*/__init__.py")
                          if p.parent.name != "lpp"))
#: what `pip install lpp` does not bring: the extras and the compendium (numba_cuda and the
#: CUDA Python packages, ``cuda.*``: lpp[gpu])
EXTRAS = ("tqdm", "dask", "distributed", "arviz", "xarray", "gensim", "papermill", "ipykernel",
          "nbformat", "matplotlib", "seaborn", "pandas", "yaml", "dvc", "numba_cuda",
          "cuda") + COMPENDIUM
#: the GPU backend: the one module that imports an extra at its top, numba.cuda (numba-cuda),
#: imported only when a chain asks for ``device="cuda"``
GPU_DOOR = "lpp.inference.engines.cuda.device"


def _modules(package="lpp", root=ROOT):
    """{module name: path} of every module of ``package`` under ``root``."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
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


def _graph(root=ROOT, packages=("lpp",)):
    """{module: the modules its imports run}, and {module: path}, over the modules of
    ``packages``.

    Importing ``a.b.c`` runs the ``__init__`` of ``a.b`` too, so an edge to a module is also
    an edge to each package above it — except the importer's own packages, which Python has
    already started to run when the importer runs."""
    modules = {}
    for package in packages:
        modules.update(_modules(package, root))
    graph = {}
    for name, path in modules.items():
        edges = set()
        for target in _imports(name, path, modules):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                ancestor = ".".join(parts[:i])
                if (ancestor in modules and ancestor != name
                        and not name.startswith(ancestor + ".")):
                    edges.add(ancestor)
        graph[name] = edges
    return graph, modules


def _cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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


def test_lpp_has_no_import_cycles():
    graph, _ = _graph()
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_cycle_check_counts_the_edges_through_a_package_init(tmp_path):
    """A module that imports ``pkg.sub`` runs ``pkg/__init__.py``, whose re-exports may import
    the module back: a cycle, though no two modules import each other by name."""
    files = {"lpp/__init__.py": "",
             "lpp/pkg/__init__.py": "from lpp.pkg.entry import run\n",
             "lpp/pkg/entry.py": "from lpp.pkg.leaf import leaf\n",
             "lpp/pkg/leaf.py": "def leaf():\n    from lpp.upper import up\n",
             "lpp/upper.py": "from lpp.pkg.leaf import leaf\n\ndef up():\n    pass\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph, _ = _graph(tmp_path)
    assert _cycles(graph) == [["lpp.pkg", "lpp.pkg.entry", "lpp.pkg.leaf", "lpp.upper"]]


#: the package's layers, bottom first: a module imports modules of its own layer or of the
#: layers below it, never above (docs/design.md, *Layers*)
LAYERS = (
    ("foundation", ("lpp", "lpp._numba_cache", "lpp.randomness", "lpp.validation",
                    "lpp.progress")),
    ("distributions and mechanism", ("lpp.distributions", "lpp.mechanism", "lpp.simulate")),
    ("formats", ("lpp.formats",)),
    ("metrics", ("lpp.metrics",)),
    ("inference", ("lpp.inference",)),
    ("on chains", ("lpp.vi", "lpp.diagnostics", "lpp.evaluation", "lpp.testing")),
    ("central model", ("lpp.central",)),
    ("estimators", ("lpp.estimators",)),
)


def _layer(module: str) -> int:
    best = None
    for level, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "lpp" and module.startswith(prefix + ".")):
                best = level
    if best is None:
        raise AssertionError(f"{module} is in no layer of LAYERS: place it")
    return best


def _upward_imports(graph):
    return sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs if _layer(b) > _layer(a))


def test_imports_point_down_the_layers():
    graph, _ = _graph()
    assert _upward_imports(graph) == []


def test_the_layer_check_finds_an_upward_import():
    graph = {"lpp.inference.chain": {"lpp.vi.starts"}, "lpp.vi.starts": {"lpp.inference"}}
    assert _upward_imports(graph) == ["lpp.inference.chain -> lpp.vi.starts"]


def test_the_layers_are_the_ones_the_design_notes_draw():
    """docs/design.md draws the layers; its picture names each layer's packages in order."""
    text = (ROOT / "docs" / "design.md").read_text()
    section = text[text.index("## Layers"):]
    section = section[:section.index("\n## ", 4)] if "\n## " in section[4:] else section
    positions = [section.index(f"`{prefixes[0]}`") for _, prefixes in LAYERS[1:]]
    assert positions == sorted(positions, reverse=True), "the picture lists the top layer first"


def test_lpp_never_imports_the_compendium():
    assert {"study", "data_prep"} <= set(COMPENDIUM)
    _, modules = _graph()
    offenders = {name: sorted(m for m in _imports(name, path, modules)
                              if m.split(".")[0] in COMPENDIUM)
                 for name, path in modules.items()}
    assert not {k: v for k, v in offenders.items() if v}


#: the repository's packages, bottom first: each imports the packages below it, never one
#: above (docs/design.md, *Layers*). The library; the corpora's preparation; the benchmarks,
#: which measure the library (and read the prepared corpora); the investigations, which use
#: the benchmarks' data generators; the study, which runs the papers' experiments and renders
#: the documentation's numbers and tables (the benchmarks' included); the profiles, scripts
#: that run the study's pipeline at other settings
REPOSITORY_LAYERS = ("lpp", "data_prep", "bench", "experiments", "study", "profiles")


def _upward_package_imports(graph):
    level = {package: i for i, package in enumerate(REPOSITORY_LAYERS)}
    return sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs
                  if level[b.split(".")[0]] > level[a.split(".")[0]])


def test_the_repository_packages_import_down_their_layers():
    """Every import of lpp and the compendium, those inside functions included, goes to the
    importer's own package or one below it; so no two packages import each other."""
    assert set(COMPENDIUM) | {"profiles"} == set(REPOSITORY_LAYERS) - {"lpp"}
    graph, _ = _graph(packages=REPOSITORY_LAYERS)
    assert _upward_package_imports(graph) == []
    assert _cycles(graph) == []


def test_no_package_below_profiles_loads_a_file_by_its_path():
    """A module loaded from its path (``importlib.util.spec_from_file_location``) is an import
    the layer check cannot see: only the scripts of ``profiles/``, which load one another, may
    do it."""
    loaders = sorted(str(path.relative_to(ROOT)) for package in REPOSITORY_LAYERS[:-1]
                     for path in (ROOT / package).rglob("*.py")
                     if "spec_from_file_location" in path.read_text())
    assert loaders == []


def test_the_package_layer_check_finds_an_import_upward_inside_a_function(tmp_path):
    files = {"bench/__init__.py": "", "study/__init__.py": "",
             "bench/vi.py": "def numbers():\n    from study.vi_benchmark import PAPER\n",
             "study/vi_benchmark.py": "from bench import vi\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph, _ = _graph(tmp_path, packages=("bench", "study"))
    assert _upward_package_imports(graph) == ["bench.vi -> study", "bench.vi -> study.vi_benchmark"]


def test_lpp_works_with_numpy_scipy_and_numba_alone():
    """Every module of the library (but the GPU backend, which exists to import numba-cuda)
    imports, and a small fit and privatization run, while the extras and the compendium are
    made unimportable."""
    library = sorted(m for m in _modules()
                     if not m.endswith(("_distributed_worker",)) and m != GPU_DOOR)
    code = textwrap.dedent(f"""
        import importlib, importlib.abc, sys
        BLOCKED = {EXTRAS!r}
        # what the interpreter loaded before the block (a .pth hook of cuda-bindings may)
        PRELOADED = set(sys.modules)
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)")
        sys.meta_path.insert(0, Block())
        for name in {library!r}:
            importlib.import_module(name)
        import numpy as np
        from lpp.mechanism import privatize
        from lpp.inference import RunOptions, TopicModel, fit_private
        from lpp.vi import VIOptions, fit_variational
        y = np.random.default_rng(0).poisson(1.0, (12, 9))
        y_tilde = privatize(y, 0.5, rng=1)
        res = fit_private(y_tilde, 0.5, TopicModel(2),
                          run=RunOptions(n_iter=4, burn_in=2, thin=1, progress=False), rng=0)
        assert res.mu_hat.shape == y.shape
        vi = fit_variational(y_tilde, 0.5, TopicModel(2), run=VIOptions(max_iter=3), rng=0)
        assert vi.mu_hat.shape == y.shape
        loaded = sorted(m for m in sys.modules
                        if m.split(".")[0] in BLOCKED and m not in PRELOADED)
        assert not loaded, loaded
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_tests_mirror_the_package_folders():
    """Every package of lpp has its tests in the same place under tests/lpp."""
    packages = sorted(p.parent.relative_to(ROOT / "lpp")
                      for p in (ROOT / "lpp").rglob("__init__.py") if p.parent != ROOT / "lpp")
    missing = [str(p) for p in packages
               if not any((ROOT / "tests" / "lpp" / p).glob("test_*.py"))]
    assert packages and missing == []
