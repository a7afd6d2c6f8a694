"""Home: what the simulator is, and a card per lab."""
import streamlit as st

from labs import LABS
from ui.i18n import t

st.title(t("home.title"))
st.markdown(t("home.intro"))
cols = st.columns(3)
for i, lab in enumerate(LABS):
    with cols[i % 3].container(border=True):
        st.subheader(f"{lab.icon} {t(f'nav.{lab.stem}')}")
        st.write(t(f"home.card.{lab.stem}"))
        st.page_link(lab.file, label=t("home.open"), icon=":material/arrow_forward:")
st.caption(t("home.howto"))
