"""The canvas components (live_common.js: colours, panels, frame player, + the component's own script)."""
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sim.plots.palette import PALETTE
from ui.present import presenting

_HERE = Path(__file__).parent
_thread = threading.local()  # what live_run sets around a live view's show(): extra data, or a capture


def component_script(script: Path, stylesheet: Path) -> str:
    """The JS of a canvas component: the palette, its stylesheet, ui/live_common.js, then its own script.

    The stylesheet travels inside the script (the component writes it into its own <style>), which works the
    same whether or not the component is isolated in a shadow root; it reads the palette as --mlsim-<name>.
    """
    colours = ";".join(f"--mlsim-{k}:{v}" for k, v in PALETTE.items())
    style = json.dumps(f":root{{{colours}}}\n" + stylesheet.read_text(encoding="utf-8"))
    return "\n".join([f"const PALETTE = {json.dumps(PALETTE)};", f"const STYLE = {style};",
                      (_HERE / "live_common.js").read_text(encoding="utf-8"), script.read_text(encoding="utf-8")])


def live_component(name: str, script: str, stylesheet: str, folder: Path = _HERE):
    """A Streamlit v2 component from `script` and `stylesheet` (files in `folder`), see component_script.

    Its data always says whether the presenter view is on (`present`): the component then draws on a white
    card, larger (live_common.js presentCard).
    """
    # plain DOM (not a shadow root), so page-level tools and the browser tests can see the canvases
    component = st.components.v2.component(name, js=component_script(folder / script, folder / stylesheet),
                                           isolate_styles=False)

    def mount(*, data: dict, **kw):
        data = {**data, "present": presenting(), **getattr(_thread, "extra", {})}
        into = getattr(_thread, "capture", None)
        if into is not None:  # a live channel's update: the data, not a Streamlit element
            into.append(data)
            return None
        return component(data=data, **kw)

    return mount


@contextmanager
def mounting(extra: dict | None = None, capture: list | None = None) -> Iterator[None]:
    """On this thread, for the block: `extra` added to every canvas component's data (a live view's channel), and
    with `capture` a list, each component's data appended to it instead of being sent (ui.live_run's channel
    updates, drawn by the lab's own show() outside a script run)."""
    before = getattr(_thread, "extra", {}), getattr(_thread, "capture", None)
    _thread.extra, _thread.capture = extra or {}, capture
    try:
        yield
    finally:
        _thread.extra, _thread.capture = before


def in_fragment_rerun() -> bool:
    """True when only a fragment is rerunning: st.rerun(scope="fragment") raises in a full run.

    Reads Streamlit's script-run context (not a public API); the generalisation lab's folds animation
    (labs/generalization/cv_view.py) needs it to advance only on its own timer's reruns.
    """
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)
