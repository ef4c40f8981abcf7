"""``docs/architecture.md`` stays the map of the code: every module under ``editor/`` is named in
its package tables, and the tables name no module that is gone.

A module is named when its package's row lists it in the *modules* column (``editor.graph``'s
row lists `` `dot` ``), or when a row's first column names it whole (`` `editor.store` ``). The
generated migrations are left out, as the page says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
CODE = ROOT / "editor"
NAMED = re.compile(r"`([A-Za-z_][\w.]*)`")


@dataclass
class Named:
    """What the page's package tables name."""

    packages: dict[str, set[str]] = field(default_factory=dict)
    modules: set[str] = field(default_factory=set)
    unknown: list[str] = field(default_factory=list)


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def modules_of(code: Path) -> list[str]:
    """Every module of the ``editor`` package as a dotted name, ``__init__`` standing for its
    package, the migrations left out."""
    found = []
    for path in sorted(code.rglob("*.py")):
        relative = path.relative_to(code.parent).with_suffix("")
        if "migrations" in relative.parts or "__pycache__" in relative.parts:
            continue
        found.append(".".join(relative.parts))
    return found


def named_in(text: str, existing: Iterable[str]) -> Named:
    """What the *Packages* section of ``text`` names, checked against the ``existing`` modules."""
    existing = set(existing)
    packages = {name.removesuffix(".__init__") for name in existing if name.endswith("__init__")}
    named = Named()
    lists_modules = False
    for line in _section(text, "## Packages").splitlines():
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        if cells[0] in ("package", "module"):
            lists_modules = len(cells) > 1 and cells[1] == "modules"
            continue
        if set(cells[0]) <= {"-", " "}:
            continue
        for name in NAMED.findall(cells[0]):
            if name in packages:
                listed = set(NAMED.findall(cells[1])) if lists_modules else set()
                named.packages.setdefault(name, set()).update(listed)
            elif name in existing:
                named.modules.add(name)
            else:
                named.unknown.append(name)
        if lists_modules:
            row_packages = [name for name in NAMED.findall(cells[0]) if name in packages]
            for module in NAMED.findall(cells[1]):
                if not any(f"{package}.{module}" in existing for package in row_packages):
                    named.unknown.append(f"{' or '.join(row_packages)}: {module}")
    return named


def unnamed_modules(text: str, existing: Iterable[str]) -> list[str]:
    """The modules of ``existing`` the page does not name."""
    named = named_in(text, existing)
    missing = []
    for module in existing:
        package, _, stem = module.rpartition(".")
        if stem == "__init__":
            if package != "editor" and package not in named.packages:
                missing.append(f"{package} (a row of its own)")
        elif module not in named.modules and stem not in named.packages.get(package, ()):
            missing.append(module)
    return missing


def test_every_module_under_editor_is_named_in_the_architecture_page() -> None:
    missing = unnamed_modules(PAGE.read_text("utf-8"), modules_of(CODE))

    assert not missing, (
        "docs/architecture.md does not name these modules: add each to its package's row in "
        f"*Packages* (or a row of its own): {', '.join(missing)}"
    )


def test_the_architecture_page_names_no_module_that_does_not_exist() -> None:
    unknown = named_in(PAGE.read_text("utf-8"), modules_of(CODE)).unknown

    assert not unknown, f"docs/architecture.md names modules that do not exist: {unknown}"


def test_a_new_module_without_a_line_fails_the_check() -> None:
    page = PAGE.read_text("utf-8")
    existing = [*modules_of(CODE), "editor.services.documents.stamping"]

    assert unnamed_modules(page, existing) == ["editor.services.documents.stamping"]


def test_a_new_package_without_a_row_fails_the_check() -> None:
    page = PAGE.read_text("utf-8")
    existing = [*modules_of(CODE), "editor.exports.__init__", "editor.exports.csv"]

    assert unnamed_modules(page, existing) == [
        "editor.exports (a row of its own)",
        "editor.exports.csv",
    ]
