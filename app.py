"""The one start command, `streamlit run app.py`: Streamlit finds `app` below (an st.App) and serves main.py, the
app's page script, with uvicorn, beside one route of our own: the live views' channel (server/live_channel.py).

This module is imported, not run as a page: nothing here draws. AppTest and the tests run main.py; `streamlit run
main.py` also works, without the channel (the live views then pull their updates through Streamlit reruns).
"""
import streamlit as st

from server import live_channel

app = st.App("main.py", routes=live_channel.routes(), middleware=live_channel.middleware())
