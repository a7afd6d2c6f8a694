"""The documents a newcomer reads stay honest: README.md stays short and keeps the two commands CI and a fresh
machine rely on; every lab has its notes (labs/<lab>/README.md) with the shared headings; every benchmark module is in
benchmarks/README.md; every relative link between the documents resolves (the file, and the heading a #fragment
names)."""
import re
from pathlib import Path

import pytest

from labs import LABS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BENCHMARKS = ROOT / "benchmarks"
MAX_README_LINES = 150
START = "pip install -r requirements.txt && streamlit run app.py"
TEST = "pip install -r requirements-dev.txt && python -m pytest"  # .ci/run runs this line
# every lab's notes, in this order (CONTRIBUTING.md, "Adding a lab")
HEADINGS = ("What it teaches", "Course sections", "Sections and their URL values", "Engine modules", "Measured",
            "Left out")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def lab_folders() -> list[Path]:
    """Every lab's folder: a folder of labs/ with a page.py."""
    return sorted(p.parent for p in (ROOT / "labs").glob("*/page.py"))


def documents() -> list[Path]:
    """The Markdown documents of the project (not node_modules', nor a hidden folder's: .venv, caches)."""
    parts = lambda p: p.relative_to(ROOT).parts  # noqa: E731
    return sorted(p for p in ROOT.rglob("*.md")
                  if "node_modules" not in parts(p) and not any(x.startswith(".") for x in parts(p)))


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", doc.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_the_readme_is_short_and_keeps_its_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES
    lines = [line.strip() for line in text.splitlines()]
    assert START in lines and TEST in lines  # each a command line of its own, as written
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")  # CI runs the README's test command (pip quietly)
    assert re.search(r"^pip install (-q )?-r requirements-dev\.txt && python -m pytest$", ci, re.M)
    for req in ("requirements.txt", "requirements-dev.txt"):
        assert (ROOT / req).is_file()


def test_every_lab_has_its_notes_with_the_shared_headings():
    folders = lab_folders()
    assert {lab.name for lab in LABS} <= {p.name for p in folders}  # every lab in the menu (its folder: its name)
    readme = README.read_text(encoding="utf-8")
    for folder in folders:
        notes = folder / "README.md"
        assert notes.is_file(), f"{folder.relative_to(ROOT)} has no README.md"
        text = notes.read_text(encoding="utf-8")
        assert text.startswith("# "), f"{notes.relative_to(ROOT)}: a title first"
        found = re.findall(r"^## (.+?)\s*$", text, re.M)
        assert tuple(h for h in found if h in HEADINGS) == HEADINGS, \
            f"{notes.relative_to(ROOT)}: the shared headings in order, found {found}"
        for heading in HEADINGS:  # none left empty
            body = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
            assert body.strip(), f"{notes.relative_to(ROOT)}: '{heading}' is empty"
        assert f"(labs/{folder.name}/README.md)" in readme, f"README.md links {notes.relative_to(ROOT)}"


def test_every_benchmark_module_is_in_the_benchmarks_readme():
    from benchmarks.__main__ import OWN_OPTIONS, SUBCOMMANDS

    text = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    modules = sorted(p for p in BENCHMARKS.iterdir()
                     if p.suffix in (".py", ".sh") and not p.name.startswith("__"))
    missing = [p.name for p in modules if f"[{p.name}]({p.name})" not in text]
    assert not missing, f"benchmarks/README.md lists no row for {missing}"
    # every subcommand of python -m benchmarks is named with its command
    names = set(SUBCOMMANDS) | set(OWN_OPTIONS)
    unnamed = sorted(n for n in names if not re.search(rf"python -m benchmarks (\S+ )?{n}\b|`{n}\b", text))
    assert not unnamed, f"benchmarks/README.md never names the subcommands {unnamed}"


@pytest.mark.parametrize("doc", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    text = doc.read_text(encoding="utf-8")
    bad = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            bad.append(f"{target}: no heading #{fragment} in {dest.relative_to(ROOT)}")
    assert not bad, f"{doc.relative_to(ROOT)}: " + "; ".join(bad)
