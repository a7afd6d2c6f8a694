"""What the tests of the generated scripts (tests/test_codegen.py, tests/test_codegen_models.py) share: the page's
values of a link, running a file with `python -I`, comparing losses, and the short-plain-clean check."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import sim.codegen as codegen
from ui.schema import read_query, write_query

ROOT = Path(__file__).resolve().parent.parent


def page_values(lab: str, query: str) -> tuple[dict, str]:
    """The page's values for a link's query (the lab's schema, ui.schema's rules) and the page's link: every value
    written out, as PageState.link writes it (a long line in the file's header)."""
    schema = import_module(f"labs.{lab}.schema").SCHEMA
    raw = dict(parse_qsl(query))
    values, rejected = read_query(schema, raw)
    assert not rejected, rejected
    query = urlencode({"lang": raw.get("lang", "en"), **write_query(schema, values)}, safe=",")
    return values, f"http://localhost:8501/{lab}?{query}"


def run_file(path: Path, steps: int, *extra: str) -> list[dict]:
    out = subprocess.run([sys.executable, "-I", str(path), "--steps", str(steps), *extra], capture_output=True,
                         text=True, timeout=600, cwd=path.parent)
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line) for line in out.stdout.splitlines()]


def relative_error(a, b) -> float:
    if isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys(), (a, b)
        return max((relative_error(a[k], b[k]) for k in b), default=0.0)
    return abs(a - b) / max(abs(b), 1e-300)


def imports(text: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module.split(".")[0])
    return found


def assert_short_plain_clean(lab: str, queries: list[str], tmp_path: Path) -> None:
    """At the first query (the defaults): at most 150 lines, the link in its first lines, only the standard library,
    numpy and torch imported; and `ruff check` (the repository's rules) finds nothing in the file of any query."""
    v, link = page_values(lab, queries[0])
    text = codegen.script(lab, v, link)
    assert len(text.splitlines()) <= 150
    assert link in "\n".join(text.splitlines()[:3])
    assert imports(text) <= set(sys.stdlib_module_names) | {"numpy", "torch"}
    for i, q in enumerate(dict.fromkeys(queries)):
        (tmp_path / f"run_{i}.py").write_text(codegen.script(lab, *page_values(lab, q)), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
                          str(ROOT / "pyproject.toml"), str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]
