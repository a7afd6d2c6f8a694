"""No deprecated call in our code. Three nets: a Python deprecation warning that blames a module of ours is an error
(pytest.ini); what Streamlit reports as deprecated while a test runs fails that test (tests/conftest.py); and, here,
the parameters Streamlit's documentation marks deprecated, which some functions accept without a word at run time
(st.popover's use_container_width), are looked for in the source."""
import ast
import inspect
import re
import warnings
from pathlib import Path

import pytest
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "app.py", ROOT / "main.py", *(p for folder in ("labs", "ui", "sim", "server", "deploy", "benchmarks")
                              for p in (ROOT / folder).rglob("*.py"))]


def deprecated_parameters() -> dict[str, set[str]]:
    """Streamlit function name -> the parameters its docstring says are deprecated ("``name`` is deprecated")."""
    found: dict[str, set[str]] = {}
    for owner in (st, DeltaGenerator):
        for name in (n for n in dir(owner) if not n.startswith("_")):  # no getattr: reading an old name is reported
            doc = getattr(inspect.getattr_static(owner, name, None), "__doc__", None) or ""
            params = set(re.findall(r"``(\w+)`` is deprecated", doc))
            if params:
                found.setdefault(name, set()).update(params)
    return found


def deprecated_calls(source: str, path: str, deprecated: dict[str, set[str]]) -> list[str]:
    """`path:line name(param=)` for each call of a Streamlit function's name with one of its deprecated parameters."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            for kw in node.keywords:
                if kw.arg in deprecated.get(name, ()):
                    out.append(f"{path}:{node.lineno} {name}({kw.arg}=)")
    return out


def test_streamlits_documented_deprecations_are_found():
    deprecated = deprecated_parameters()
    assert "use_container_width" in deprecated["popover"] and "use_container_width" in deprecated["plotly_chart"]
    assert deprecated_calls("c.popover('x', use_container_width=True)\nst.popover('x', width='stretch')", "f.py",
                            deprecated) == ["f.py:1 popover(use_container_width=)"]


def test_no_deprecated_streamlit_parameter_in_our_code():
    deprecated = deprecated_parameters()
    found = [c for p in SOURCES for c in deprecated_calls(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)),
                                                           deprecated)]
    assert not found


@pytest.mark.parametrize("module", ["ui.present", "labs.gpu.page", "__main__", "sim.core.data"])
@pytest.mark.parametrize("category", [DeprecationWarning, FutureWarning])
def test_a_deprecation_warning_blaming_our_code_is_an_error(module, category):
    with pytest.raises(category):
        warnings.warn_explicit("old", category, f"{module}.py", 1, module=module)


def test_a_deprecation_warning_inside_a_library_is_not_ours():
    with warnings.catch_warnings(record=True):  # pytest.ini's filters stay; this only collects what they let through
        warnings.warn_explicit("old", DeprecationWarning, "x.py", 1, module="streamlit.elements.x")
