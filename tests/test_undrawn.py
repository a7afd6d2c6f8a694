"""ui.urlstate.undrawn: a widget's change that reached the app only with a fragment's timed rerun (Streamlit 1.67 can
send a selectbox's new value that way, and no page run follows) is seen there, so the fragment reruns the page."""
from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st

    from labs.classification.schema import PAGE, SCHEMA
    from ui.urlstate import PageState, undrawn

    if st.session_state.get("timed"):  # what a fragment's timed rerun runs: not the page, only the check
        st.write(f"undrawn={undrawn()}")
    else:
        state = PageState(PAGE, SCHEMA)
        state.widget("activation")
        st.write(f"undrawn={undrawn()}")


def said(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("undrawn="))


def test_a_change_that_came_with_a_timed_fragment_rerun_only_is_undrawn(monkeypatch):
    in_fragment = {"now": False}
    monkeypatch.setattr("ui.urlstate.in_fragment_rerun", lambda: in_fragment["now"])
    at = AppTest.from_function(_page, default_timeout=30).run()
    assert said(at) == "undrawn=False"
    at.session_state.timed, in_fragment["now"] = True, True
    at.run()  # a timed rerun, no change: nothing to draw (a rerun every 0.5 s must not rerun the page)
    assert said(at) == "undrawn=False"
    at.session_state.timed, in_fragment["now"] = False, False
    at.run()
    at.selectbox(key="cls.activation").set_value("relu")
    at.session_state.timed, in_fragment["now"] = True, True
    at.run()  # the new value arrives with the timed rerun only
    assert said(at) == "undrawn=True"
