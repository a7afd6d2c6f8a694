"""AppTest helpers shared by the page tests: open a lab with URL values, collect visible text."""
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60


def open_app(lang: str = "en") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    return at


def open_lab(file: str, lang: str = "en", **query) -> AppTest:
    """Run the app, then switch to a lab's page (e.g. "labs/classification.py") with URL values."""
    at = open_app(lang).run()  # AppTest needs one run before it can switch pages
    at.query_params.update({"lang": lang, **query})
    at.switch_page(file).run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    """Every piece of visible text of the common kinds, joined by newlines."""
    parts = [e.value for kind in ("markdown", "caption", "warning", "error", "info", "success", "title", "subheader")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)
