"""The sidebar shared by every page: language switch and device banner."""
import streamlit as st

from sim.gpu.measure import DeviceInfo, device_info
from ui.i18n import LANGS, t

LANG_NAMES = {"zh": "中文", "en": "English"}


def language_switch() -> None:
    st.sidebar.segmented_control(t("sidebar.language"), LANGS, key="lang", required=True,
                                 format_func=LANG_NAMES.get)
    if st.query_params.get("lang") != st.session_state["lang"]:  # pages with a schema rewrite the rest
        st.query_params["lang"] = st.session_state["lang"]


@st.cache_resource(show_spinner=False)
def cached_device() -> DeviceInfo:
    return device_info()  # read-only, the same for every user: safe to share


def _gib(n: int | None) -> str:
    return "?" if n is None else f"{n / 2**30:.0f} GiB"


def device_banner(slot) -> None:
    d = cached_device()
    if d.kind == "cuda":
        text = t("sidebar.device_cuda", name=d.name, sms=d.cores, l2=f"{(d.l2_bytes or 0) / 2**20:.0f} MiB",
                 mem=_gib(d.memory_bytes))
    else:
        text = t("sidebar.device_cpu", name=d.name, cores=d.cores, mem=_gib(d.memory_bytes))
    slot.info(text + f"  \ntorch {d.torch_version}", icon=":material/memory:")
