"""Each canvas component's script (live_common.js + its own, as ui.components.live_component joins them) parses."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UI = ROOT / "ui"
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("script", [UI / "live_view.js", UI / "live_plots.js", ROOT / "labs/gpu/memsim_view.js"],
                         ids=lambda p: p.name)
def test_component_script_parses(script, tmp_path):
    module = tmp_path / f"{script.name}.mjs"  # the component is an ES module (export default)
    module.write_text('const STYLE = "";\n' + (UI / "live_common.js").read_text() + "\n" + script.read_text())
    result = subprocess.run([NODE, "--check", str(module)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
