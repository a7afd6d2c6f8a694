"""URL/widget schema of the 'from pretrained model to assistant' lab: one group of parameters per section, each
section's group kept in its own module (paradigms.py, data.py, pipeline.py) beside the section's view."""
from labs.assistant.data import PARAMS as DATA
from labs.assistant.paradigms import PARAMS as PARADIGMS
from labs.assistant.pipeline import PARAMS as PIPELINE
from ui.schema import Param

SECTIONS = ("paradigms", "data", "pipeline")

PAGE = "asst"  # widget keys, i18n keys and session keys of this page start with "asst."
SCHEMA = [Param("section", "choice", "paradigms", choices=SECTIONS, widget="segmented"), *PARADIGMS, *DATA, *PIPELINE]
