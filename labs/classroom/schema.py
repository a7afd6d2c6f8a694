"""URL/widget schema of the "Start a class" page: which lab's questions the teacher's bank shows."""
from labs.classroom.questions import BANK_LABS
from ui.schema import Param

PAGE = "room"  # widget keys, i18n keys and session keys of this page start with "room."
SCHEMA = [
    Param("bank", "choice", BANK_LABS[0], choices=BANK_LABS),
]
