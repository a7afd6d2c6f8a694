"""PLACEHOLDER: being written by a helper; replace this whole file."""
import streamlit as st

from ui.i18n import t

st.title(t("nav.regression"))
