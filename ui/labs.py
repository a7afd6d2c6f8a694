"""The labs, in menu order: app.py routes to them and the home page shows a card for each."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Lab:
    file: str  # page script, relative to app.py
    url_path: str  # /<url_path> in the address bar
    icon: str  # Material icon
    stem: str  # i18n: nav.<stem> is the title, home.card.<stem> the card's text


LABS = [
    Lab("labs/classification.py", "classification", ":material/scatter_plot:", "classification"),
    Lab("labs/regression.py", "regression", ":material/show_chart:", "regression"),
    Lab("labs/generalization.py", "generalization", ":material/balance:", "generalization"),
    Lab("labs/attention.py", "attention", ":material/visibility:", "attention"),
    Lab("labs/shapes.py", "shapes", ":material/account_tree:", "shapes"),
    Lab("labs/gpu.py", "gpu", ":material/memory:", "gpu"),
]
