"""The CSV upload box every lab with "your own data" uses: an expander with the file, its errors and a Clear button."""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from sim.core.upload import MAX_BYTES, MB, UploadError
from ui.i18n import t, t_md

ss = st.session_state


def _clear(prefix: str) -> None:
    ss[f"{prefix}.upload"] = None


def upload_box(prefix: str, parse: Callable[[bytes], object], used: Callable[[object], str], *,
               context: object = None, errors: str = "upload") -> object | None:
    """The data read from the user's file (None: none in use); parse(bytes) reads it or raises UploadError.

    A file that cannot be read leaves the data in use as it was, unless that data was read for another
    `context` (e.g. the other problem type, which reads the same file differently); a change of context reads
    the file again. Labels `<prefix>.upload`, `.upload_help`, `.upload_file`, `.upload_clear`; an error's
    message is `<errors>.<code>`; used(data) says what is in use. The browser refuses a file over MAX_BYTES.
    """
    with st.expander(t(f"{prefix}.upload")):
        st.caption(t(f"{prefix}.upload_help"))
        file = st.file_uploader(t(f"{prefix}.upload_file"), type=["csv", "txt"], key=f"{prefix}.file",
                                max_upload_size=MAX_BYTES // MB)
        tag = file and (file.file_id, context)
        if file is not None and ss.get(f"{prefix}.upload_tag") != tag:
            ss[f"{prefix}.upload_tag"] = tag
            try:
                ss[f"{prefix}.upload"] = parse(file.getvalue())
            except UploadError as e:
                ss[f"{prefix}.upload_error"] = (e.code, e.params)
                if ss.get(f"{prefix}.upload_context") != context:
                    ss[f"{prefix}.upload"] = None
            else:
                ss[f"{prefix}.upload_context"] = context
                ss.pop(f"{prefix}.upload_error", None)
        if ss.get(f"{prefix}.upload_error"):
            code, params = ss[f"{prefix}.upload_error"]
            st.error(t_md(f"{errors}.{code}", **params))
        data = ss.get(f"{prefix}.upload")
        if data is not None:
            st.success(used(data))
            st.button(t(f"{prefix}.upload_clear"), on_click=_clear, args=(prefix,))
    return ss.get(f"{prefix}.upload")
