"""A page for tests/test_safety_browser.py: every catalogue text that takes params, in both languages, filled by t()
with one hostile value (?v=<index into HOSTILE>; without it the harmless "x") and shown by st.markdown, the
renderer of every message, caption and label."""
import streamlit as st
from hostile import HOSTILE, filled, param_texts

from ui.i18n import LANGS, catalogue, language, t

v = st.query_params.get("v")
value = "x" if v is None else HOSTILE[int(v)]
for lang in LANGS:
    with language(lang):
        for key, fields in param_texts(catalogue(lang)).items():
            st.markdown(t(key, **filled(fields, value)))
st.container(key="done").write("done")
