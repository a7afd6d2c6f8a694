"""A text widget of the attention lab whose text survives switching sections."""
import streamlit as st

ss = st.session_state


def remembered(draw, key: str, source: str, default: str, **kw) -> str:
    """Draw a text widget whose text survives switching sections and resets when its source (preset) changes."""
    if ss.get(f"{key}.source") != source:
        ss[f"{key}.source"], ss[f"{key}.kept"] = source, default
        ss.pop(key, None)
    # Streamlit drops a widget's state while it is not drawn, so the text is also kept under another key
    ss.setdefault(key, ss[f"{key}.kept"])
    ss[f"{key}.kept"] = draw(key=key, **kw)
    return ss[f"{key}.kept"]
