"""The labs, in menu order and grouped: main.py routes to them (a menu section per group, headed nav.group.<group>)
and the home page shows a card for each.

Each lab is one folder, labs/<name>/: page.py (the Streamlit page), schema.py (PAGE, the prefix of its
widget, session and i18n keys, and SCHEMA, its URL/widget parameters), and any UI part only that lab uses.
"""
import importlib
from dataclasses import dataclass

from ui.schema import Param


@dataclass(frozen=True)
class Lab:
    name: str  # its folder, labs/<name>/
    url_path: str  # /<url_path> in the address bar
    icon: str  # Material icon
    stem: str  # i18n: nav.<stem> is the title, home.card.<stem> the card's text
    group: str  # its menu section: one of GROUPS

    @property
    def file(self) -> str:
        """The page script, relative to main.py."""
        return f"labs/{self.name}/page.py"


GROUPS = ("basics", "llm", "systems")  # the menu's sections, in order

LABS = [
    Lab("foundations", "foundations", ":material/functions:", "foundations", "basics"),
    Lab("classification", "classification", ":material/scatter_plot:", "classification", "basics"),
    Lab("regression", "regression", ":material/show_chart:", "regression", "basics"),
    Lab("generalization", "generalization", ":material/balance:", "generalization", "basics"),
    Lab("optimizers", "optimizers", ":material/moving:", "optimizers", "basics"),
    Lab("sequence", "sequence", ":material/timeline:", "sequence", "llm"),
    Lab("attention", "attention", ":material/visibility:", "attention", "llm"),
    Lab("shapes", "shapes", ":material/account_tree:", "shapes", "llm"),
    Lab("blocks", "blocks", ":material/view_agenda:", "blocks", "llm"),
    Lab("lm", "lm", ":material/text_fields:", "lm", "llm"),
    Lab("assistant", "assistant", ":material/smart_toy:", "assistant", "llm"),
    Lab("gpu", "gpu", ":material/memory:", "gpu", "systems"),
    Lab("classroom", "classroom", ":material/school:", "classroom", "systems"),
]


def all_schemas() -> list[tuple[str, list[Param]]]:
    """(PAGE, SCHEMA) of every lab, for tests that check all of them."""
    mods = [importlib.import_module(f"labs.{lab.name}.schema") for lab in LABS]
    return [(m.PAGE, m.SCHEMA) for m in mods]
