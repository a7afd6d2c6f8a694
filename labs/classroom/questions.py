"""The question bank of predict-then-reveal: per lab, a question, its options, and the lab settings whose
run shows the answer (the reveal opens that lab with them, and the class follows). Texts are i18n keys:
room.q.<id> the question, room.q.<id>.<option> each option (assets/i18n/*/classroom.json)."""
from dataclasses import dataclass


@dataclass(frozen=True)
class BankQuestion:
    id: str
    lab: str  # the lab's url_path
    options: tuple[str, ...]
    reveal: dict  # the lab's URL values that run the experiment


BANK = (
    BankQuestion("linear_deep", "classification", ("curved", "straight", "depends"),
                 {"dataset": "circle", "features": "x1,x2", "hidden": "4,4,4", "activation": "linear"}),
    BankQuestion("lr_huge", "classification", ("faster", "same", "blows_up"),
                 {"lr": "10", "activation": "relu", "speed": "10"}),
    BankQuestion("degree_train", "regression", ("lower", "same", "higher"),
                 {"dataset": "linear", "n": "30", "noise": "0.3", "degree": "12", "standardize": "1"}),
    BankQuestion("huber_outliers", "regression", ("mse", "huber", "same"),
                 {"outliers": "3", "outlier_size": "8", "loss": "huber", "panel": "outliers"}),
    BankQuestion("no_mask", "attention", ("yes", "no"), {"section": "pipeline", "mask": "none"}),
)
BANK_LABS = tuple(dict.fromkeys(q.lab for q in BANK))


def questions(lab: str) -> list[BankQuestion]:
    return [q for q in BANK if q.lab == lab]
