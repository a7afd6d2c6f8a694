"""URL/widget schema of the "Start a class" page: the teacher's view (the class's page, or the class at a glance) and
which lab's questions the teacher's bank shows."""
from labs.classroom.questions import BANK_LABS
from ui.schema import Param

PAGE = "room"  # widget keys, i18n keys and session keys of this page start with "room."
SCHEMA = [
    Param("view", "choice", "class", choices=("class", "board"), widget="segmented"),
    Param("bank", "choice", BANK_LABS[0], choices=BANK_LABS),
]
QUIET = ("view", "board")  # the teacher's own view: looking at the class at a glance does not move the class here
