"""Every third-party module the package imports comes from a declared dependency (or one
of theirs): an installed build has only those, unlike a developer's venv."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "desktop" / "portico"


def _imported_top_levels() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def _requirement_name(spec: str) -> str:
    return re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].strip().lower().replace("_", "-")


def _closure(names: list[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for spec in requires:
            if "extra ==" not in spec:
                todo.append(_requirement_name(spec))
    return seen


def test_every_imported_module_is_a_declared_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    allowed = _closure([_requirement_name(d) for d in project["dependencies"]])
    providers = metadata.packages_distributions()
    platform_only = {"winreg", "_winapi", "msvcrt"}
    undeclared = []
    for module, where in _imported_top_levels().items():
        if module in sys.stdlib_module_names or module == "portico" or module in platform_only:
            continue
        dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
        if not dists & allowed:
            undeclared.append(f"{module} (imported in {where}; from {sorted(dists) or '?'})")
    assert undeclared == [], "add to [project].dependencies: " + ", ".join(undeclared)
