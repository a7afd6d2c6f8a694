"""The URL/widget schema of each page (name, kind, default, range or choices), one module per lab.

Each module defines PAGE (the prefix of the page's widget, session and i18n keys) and SCHEMA.
"""
import importlib
import pkgutil

from ui.schema import Param


def all_schemas() -> list[tuple[str, list[Param]]]:
    """(PAGE, SCHEMA) of every lab, for tests that check all of them."""
    mods = [importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)]
    return [(m.PAGE, m.SCHEMA) for m in mods]
