"""The 'paradigms' section of the assistant lab. SKELETON: to be built (its parameters in PARAMS, prefixed per section)."""
from ui.schema import Param  # noqa: F401

PARAMS: list = []


def paradigms_section(state) -> None:
    raise NotImplementedError("paradigms section: not built yet")
