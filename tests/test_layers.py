"""The layer rules, checked on the source (every import, at the top of a module or inside a function):

- sim/ (the engine and figure builders) imports neither Streamlit nor ui/ nor labs/; one exception, CLI_READS: the
  command line of sim.codegen (python -m sim.codegen LAB QUERY) reads a query by the lab's schema, so it may import
  ui.schema and a labs/<lab>/schema.py (both pure: no Streamlit), nothing else of ui/ or labs/, and no other module of
  sim/ may;
- sim/plots/ imports no torch (figures are built from plain arrays);
- a lab's engine sub-package (sim/<topic>/) imports no other topic's, only sim.core (and the model packages
  BUILDS_ON names: the language lab trains sim.transformers' tiny GPT, the sequence lab also Mamba on sim.ssm's
  scan); sim.core, the shared helpers, imports no topic; sim/plots/ (figures of every topic) and sim/codegen/ (the
  code of every lab's run) may import any;
- ui/ (what every lab shares) imports no lab;
- a lab (labs/<name>/) imports no other lab;
- benchmarks/ and deploy/ import nothing from tests/ (what both need lives in deploy/local.py);
- no import cycle among the project's modules (imports under `if TYPE_CHECKING:` are for type hints and never run).

A failure names the file, the line and the import.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sim", "ui", "labs", "benchmarks", "deploy", "server")
# topic -> the other topics whose models it trains
BUILDS_ON = {"language": {"transformers"}, "sequence": {"transformers", "ssm"},
             "dedup": {"language", "transformers"}, "alignment": {"transformers"}}
# the one module of sim/ allowed to read ui/ and labs/: sim.codegen's command line parses a link's query with the
# lab's schema (it imports labs.<lab>.schema by name with importlib, which the checker cannot see, and ui.schema)
CLI_READS = "sim.codegen.__main__"
ANY_TOPIC = ("plots", "codegen")  # the sub-packages of sim/ that serve every topic: figures, and the runs' code


def cli_may_import(module: str, name: str) -> bool:
    """Whether `module` may import `name` by the CLI_READS exception: ui.schema, or a lab's schema module."""
    parts = name.split(".")
    return module == CLI_READS and (name == "ui.schema" or (len(parts) == 3 and parts[0] == "labs"
                                                            and parts[2] == "schema"))


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, imported module) of every import in the file; `from a import b` gives a.b when that is a module."""
    modules = {module_name(p, root) for pkg in PACKAGES for p in (root / pkg).rglob("*.py")}
    found = []
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.append((node.lineno, full if full in modules else node.module))
    return found


def _runtime_nodes(tree: ast.AST):
    """Every node, except what sits under `if TYPE_CHECKING:` (imports for type hints only, never run)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo += node.orelse
        else:
            todo += ast.iter_child_nodes(node)


def violations(root: Path) -> list[str]:
    """Every broken rule, as "file:line imports X (rule)"."""
    files = [p for pkg in PACKAGES for p in (root / pkg).rglob("*.py")] + sorted(root.glob("*.py"))
    test_modules = {p.stem for p in (root / "tests").glob("*.py")}  # imported by bare name (tests/ on sys.path)
    bad, graph = [], {}
    for path in files:
        mod, rel = module_name(path, root), path.relative_to(root).as_posix()
        lab = mod.split(".")[1] if mod.startswith("labs.") else None
        graph[mod] = set()
        for line, name in imports(path, root):
            top = name.split(".")[0]
            where = f"{rel}:{line} imports {name}"
            if mod.startswith("sim") and top in ("streamlit", "ui", "labs") and not cli_may_import(mod, name):
                bad.append(f"{where} (sim/ must not import Streamlit, ui/ or labs/)")
            topic, other_topic = _topic(mod), _topic(name)
            if topic not in (None, *ANY_TOPIC) and other_topic not in (None, topic, "core", *BUILDS_ON.get(topic, ())):
                bad.append(f"{where} (sim/{topic}/ may import only sim.core and itself, not sim/{other_topic}/)")
            if mod.startswith("sim.plots") and top == "torch":
                bad.append(f"{where} (sim/plots/ must not import torch)")
            if mod.startswith("ui") and top == "labs":
                bad.append(f"{where} (ui/ must not import a lab)")
            other = name.split(".")[1] if top == "labs" and name.count(".") >= 1 else None
            if lab and other and other != lab:
                bad.append(f"{where} (a lab must not import another lab)")
            if mod.split(".")[0] in ("benchmarks", "deploy") and top in test_modules:
                bad.append(f"{where} (benchmarks/ and deploy/ must not import from tests/)")
            if top in PACKAGES:
                graph[mod].add(name)
    return bad + [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]


def _topic(module: str) -> str | None:
    """The sim/ sub-package a module belongs to (sim.optim.race -> "optim"); None outside sim's sub-packages."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "sim" else None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules that import each other (Tarjan's algorithm)."""
    # an import of a package also runs its __init__, and an import of a.b.c imports a.b.c itself
    edges = {m: {t for t in targets if t in graph and t != m} for m, targets in graph.items()}
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group) + [sorted(group)[0]])

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_layer_rules_hold():
    assert violations(ROOT) == []


def test_each_rule_is_caught(tmp_path):
    """The checker itself: a tree that breaks every rule gets every one reported, with file and line."""
    files = {
        "sim/__init__.py": "",
        "sim/engine.py": "import numpy\nimport streamlit as st\n",
        "sim/plots/__init__.py": "",
        "sim/plots/fig.py": "def f():\n    import torch\n",
        "sim/a.py": "from sim import b\n",
        "sim/b.py": "import sim.a\n",
        "sim/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sim.d import D\n",
        "sim/d.py": "from sim import c\n",
        "sim/core/__init__.py": "",
        "sim/core/helpers.py": "import sim.nets.engine\n",
        "sim/optim/__init__.py": "",
        "sim/optim/rules.py": "from sim.core import helpers\nfrom sim.nets.engine import step\n",
        "sim/nets/__init__.py": "",
        "sim/nets/engine.py": "",
        "sim/language/__init__.py": "",
        "sim/language/lm.py": "from sim.transformers import model\n",
        "sim/transformers/__init__.py": "",
        "sim/transformers/model.py": "",
        "ui/__init__.py": "",
        "ui/shared.py": "from labs.one import page\n",
        "labs/__init__.py": "",
        "labs/one/__init__.py": "",
        "labs/one/page.py": "from labs.two.schema import SCHEMA\nfrom labs.one import schema\n",
        "labs/one/schema.py": "",
        "labs/two/__init__.py": "",
        "labs/two/schema.py": "",
        "benchmarks/__init__.py": "",
        "benchmarks/bench.py": "import sys\nfrom conftest import running_app\n",
        "tests/conftest.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = violations(tmp_path)
    assert any(v.startswith("sim/engine.py:2 imports streamlit") for v in found)
    assert any(v.startswith("sim/plots/fig.py:2 imports torch") for v in found)
    assert any(v.startswith("ui/shared.py:1 imports labs.one.page") for v in found)
    assert any(v.startswith("labs/one/page.py:1 imports labs.two.schema") for v in found)
    assert not any(v.startswith("labs/one/page.py:2") for v in found)  # its own lab is fine
    assert any(v.startswith("benchmarks/bench.py:2 imports conftest") for v in found)
    assert any(v.startswith("sim/core/helpers.py:1 imports sim.nets.engine") for v in found)
    assert any(v.startswith("sim/optim/rules.py:2 imports sim.nets.engine") for v in found)
    assert not any(v.startswith(("sim/optim/rules.py:1", "sim/nets/", "sim/language/")) for v in found)
    assert "import cycle: sim.a -> sim.b -> sim.a" in found
    assert len(found) == 8, found


def test_only_the_codegen_command_line_reads_a_schema(tmp_path):
    """CLI_READS: sim.codegen's command line may import ui.schema and a lab's schema, nothing else of ui/ or labs/;
    any other module of sim/ (sim.codegen's own included) may import neither."""
    files = {
        "sim/__init__.py": "",
        "sim/codegen/__init__.py": "from ui.schema import Param\n",
        "sim/codegen/__main__.py": ("from ui.schema import read_query\nfrom labs.one.schema import SCHEMA\n"
                                    "from ui.i18n import t\nfrom labs.one import page\nimport streamlit\n"),
        "sim/codegen/lab.py": "from labs.one.schema import SCHEMA\n",
        "sim/engine.py": "from ui.schema import Param\n",
        "ui/__init__.py": "",
        "ui/schema.py": "",
        "ui/i18n.py": "",
        "labs/__init__.py": "",
        "labs/one/__init__.py": "",
        "labs/one/schema.py": "",
        "labs/one/page.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = violations(tmp_path)
    assert not any(v.startswith(("sim/codegen/__main__.py:1 ", "sim/codegen/__main__.py:2 ")) for v in found)
    for where in ("sim/codegen/__main__.py:3 imports ui.i18n", "sim/codegen/__main__.py:4 imports labs.one.page",
                  "sim/codegen/__main__.py:5 imports streamlit", "sim/codegen/__init__.py:1 imports ui.schema",
                  "sim/codegen/lab.py:1 imports labs.one.schema", "sim/engine.py:1 imports ui.schema"):
        assert any(v.startswith(where) for v in found), (where, found)
    assert len(found) == 6, found
