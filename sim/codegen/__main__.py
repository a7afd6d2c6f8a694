"""python -m sim.codegen LAB 'QUERY': print the file the lab's Code button would download.

LAB is the lab's URL path ("classification"), QUERY its link's query string ('dataset=spiral&seed=3&hidden=6,6'),
read by the lab's schema with the page's rules (ui.schema: what a query leaves out takes its default). A lab that is
no lab, a value the page would not take, or settings without a live run print what is wrong (the page's words) and
exit with status 2, without a traceback.

The one place in sim/ that reads ui/ and labs/: the lab's schema (labs/<lab>/schema.py) and ui.schema's parsing, both
free of Streamlit (tests/test_layers.py allows exactly these two).
"""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from sim.codegen import LABS, UnknownLab, script
from ui.schema import read_query, write_query

I18N = Path(__file__).resolve().parents[2] / "assets" / "i18n" / "en"
BASE = "http://localhost:8501"  # the app's address when it runs on this machine (streamlit run app.py)
USAGE = "usage: python -m sim.codegen LAB 'QUERY'   e.g. python -m sim.codegen classification 'dataset=spiral&seed=3'"


def _texts() -> dict[str, str]:
    """The app's English texts (assets/i18n/en/*.json), for the page's own words."""
    texts: dict[str, str] = {}
    for path in sorted(I18N.glob("*.json")):
        texts.update(json.loads(path.read_text(encoding="utf-8")))
    return texts


def make(lab: str, query: str) -> str:
    """The file's text; raises SystemExit(message) on a bad lab, a bad value or settings without a live run."""
    if lab not in LABS:
        raise SystemExit(f"error: {UnknownLab(lab)}")
    schema_module = importlib.import_module(f"labs.{lab}.schema")
    raw = dict(parse_qsl(query.lstrip("?"), keep_blank_values=True))
    values, rejected = read_query(schema_module.SCHEMA, raw)
    if rejected:
        texts = _texts()
        lines = []
        for name, value in rejected:
            label = texts.get(f"{schema_module.PAGE}.{name}", name)
            lines.append("error: " + texts["url.rejected"].format(name=label, value=value).split(", so")[0] + ".")
        raise SystemExit("\n".join(lines))
    lang = raw.get("lang") if raw.get("lang") in ("zh", "en") else "en"
    link = f"{BASE}/{lab}?{urlencode({'lang': lang, **write_query(schema_module.SCHEMA, values)}, safe=',')}"
    try:
        return script(lab, values, link)
    except (LookupError, ValueError) as e:
        raise SystemExit(f"error: no file for these settings of the {lab} lab: {e}") from None


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        text = make(argv[0], argv[1] if len(argv) == 2 else "")
    except SystemExit as e:
        print(e.code, file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
