"""Each canvas component's script, as ui.components.component_script joins it, parses and takes its colours from
the one palette (assets/palette.json)."""
import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from sim.plots.palette import CLASSES, PALETTE, rgb
from ui.components import component_script

ROOT = Path(__file__).resolve().parent.parent
UI = ROOT / "ui"
NODE = shutil.which("node")
SCRIPTS = [(ROOT / "labs/classification/live_view.js", ROOT / "labs/classification/live_view.css"),
           (UI / "live_plots.js", UI / "live_plots.css"),
           (ROOT / "labs/gpu/memsim_view.js", ROOT / "labs/gpu/memsim_view.css")]
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


@needs_node
@pytest.mark.parametrize("script,style", SCRIPTS, ids=lambda p: p.name)
def test_component_script_parses(script, style, tmp_path):
    module = tmp_path / f"{script.name}.mjs"  # the component is an ES module (export default)
    module.write_text(component_script(script, style))
    result = subprocess.run([NODE, "--check", str(module)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


@needs_node
def test_the_components_colours_are_the_palettes(tmp_path):
    module = tmp_path / "colours.mjs"
    module.write_text("globalThis.window = {};\n" + component_script(*SCRIPTS[0])
                      + "\nconsole.log(JSON.stringify({ORANGE, BLUE, WHITE, CLASS, STYLE}));\n")
    result = subprocess.run([NODE, str(module)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got["ORANGE"] == list(rgb(PALETTE["orange"])) and got["BLUE"] == list(rgb(PALETTE["blue"]))
    assert got["WHITE"] == [255, 255, 255]
    assert got["CLASS"] == [list(rgb(c)) for c in CLASSES]
    assert f"--mlsim-blue:{PALETTE['blue']}" in got["STYLE"]


def test_no_colour_is_written_out_elsewhere():
    """Figures, components and their stylesheets name palette entries; only the palette spells colours."""
    import re

    hexes = re.compile(r"#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?\b")  # #rrggbb and #rgb
    files = [*ROOT.glob("sim/**/*.py"), *ROOT.glob("ui/*.js"), *ROOT.glob("ui/*.css"), *ROOT.glob("ui/*.py"),
             *ROOT.glob("labs/**/*.js"),
             *ROOT.glob("labs/**/*.css"), *ROOT.glob("labs/**/*.py")]
    found = [f"{p.relative_to(ROOT)}: {m}" for p in files for m in hexes.findall(p.read_text(encoding="utf-8"))]
    assert found == []


def test_the_theme_is_the_palettes():
    theme = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())["theme"]
    assert theme["primaryColor"] == PALETTE["blue"]


@needs_node
@pytest.mark.parametrize("name", ["present_keys.js", "chart_download.js", "classroom_keeper.js"])
def test_the_small_components_scripts_parse(tmp_path, name):
    module = tmp_path / f"{name}.mjs"  # a components.v2 script: an ES module like the canvas components
    module.write_text((UI / name).read_text("utf-8"))
    result = subprocess.run([NODE, "--check", str(module)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
