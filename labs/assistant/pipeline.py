"""The 'pipeline' section of the assistant lab. SKELETON: to be built (its parameters in PARAMS, prefixed per section)."""
from ui.schema import Param  # noqa: F401

PARAMS: list = []


def pipeline_section(state) -> None:
    raise NotImplementedError("pipeline section: not built yet")
