"""From pretrained model to assistant: the paradigms of AI and of learning, cleaning the data before training, and
the pipeline pretraining -> SFT -> reward model -> preference tuning (DPO, RLHF), trained live."""
from labs.assistant.data import data_section
from labs.assistant.paradigms import paradigms_section
from labs.assistant.pipeline import pipeline_section
from labs.assistant.schema import PAGE, SCHEMA
from ui.i18n import t
from ui.urlstate import PageState


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("asst.title"), t("asst.intro"), {
        "paradigms": paradigms_section, "data": data_section, "pipeline": pipeline_section}, t("asst.about"))


main()
