"""Home: what the simulator is, and a card per lab."""
import streamlit as st

from ui.i18n import t

LABS = [  # (page file, icon, i18n stem); later labs are added here by their issues
    ("labs/classification.py", ":material/scatter_plot:", "classification"),
]

st.title(t("home.title"))
st.markdown(t("home.intro"))
cols = st.columns(3)
for i, (path, icon, stem) in enumerate(LABS):
    with cols[i % 3].container(border=True):
        st.subheader(f"{icon} {t(f'nav.{stem}')}")
        st.write(t(f"home.card.{stem}"))
        st.page_link(path, label=t("home.open"), icon=":material/arrow_forward:")
st.caption(t("home.howto"))
