"""docs/architecture.md's code map names every package of desktop/portico/, every
top-level module of the package and every top-level module of ui/ (the face whose
flat modules a newcomer has to find); deeper modules are for the package's own prose."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "desktop" / "portico"


def _code_map() -> str:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = text.index("## Code map")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _must_be_named() -> list[str]:
    names = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        folder = init.parent.relative_to(PACKAGE).as_posix()
        if folder != ".":
            names.append(folder.rsplit("/", 1)[-1] + "/")
    for folder in (PACKAGE, PACKAGE / "ui"):
        names += [p.name for p in sorted(folder.glob("*.py")) if p.name != "__init__.py"]
    return names


def test_the_code_map_names_every_package_and_every_top_level_module() -> None:
    code_map = _code_map()
    missing = [
        name
        for name in _must_be_named()
        if not re.search(rf"`(?:[\w/]*/)?{re.escape(name)}", code_map)
    ]
    assert missing == [], f"docs/architecture.md's code map does not name: {missing}"


def test_the_check_sees_a_missing_module(tmp_path: Path) -> None:
    assert "ops.py" in _must_be_named() and "runtime_thread/" in _must_be_named()
    assert not re.search(r"`(?:[\w/]*/)?no_such\.py", _code_map())
