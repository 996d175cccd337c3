"""Parse limits for every config read: a file that is too big, a YAML alias bomb, a
nesting too deep to walk. Checked before a dialect reader builds its tree, so a hostile
file (a cloned project's ``.portico/config.yaml``) is refused in well under a second
with a line that says why, instead of growing to gigabytes.

A YAML alias is a reference, cheap to parse but expanded by everything that walks the
values (validation, masking, digests): 9 levels of 10 aliases are 10^9 nodes from 553
bytes. The check counts what the document holds *after* expansion from the parser's
events (libyaml, no tree is built), so its cost is linear in the file, not in the bomb.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_FILE_BYTES = 8 * 1024 * 1024
# A 400-server config holds ~10,000 nodes; a hundred times that is still a config.
MAX_YAML_NODES = 1_000_000
MAX_DEPTH = 64

_MIB = 1024 * 1024


@dataclass(frozen=True)
class LimitProblem:
    """Why a file is refused, and the line where it went over (None: the whole file)."""

    message: str
    line: int | None = None


def size_problem(size: int) -> LimitProblem | None:
    if size <= MAX_FILE_BYTES:
        return None
    return LimitProblem(
        f"is {size / _MIB:.1f} MiB; a config file may hold at most "
        f"{MAX_FILE_BYTES // _MIB} MiB: split it or remove what is not config"
    )


def yaml_problem(text: str) -> LimitProblem | None:
    """A YAML text whose expanded size or depth is over the limits, else None.

    A syntax error is not this function's business (None): the round-trip reader reports
    it with its line and column.
    """
    if len(text) > MAX_FILE_BYTES:
        return size_problem(len(text.encode("utf-8")))
    if "*" not in text and ("[" * MAX_DEPTH) not in text and _max_indent(text) < MAX_DEPTH:
        return None  # no alias and no deep nesting: nothing to expand (the common case)
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        return None
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]  # [anchor, expanded nodes so far]
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent):
                stack[-1][1] += sizes.get(event.anchor or "", 1)
            elif isinstance(event, yaml.ScalarEvent):
                stack[-1][1] += 1
                if event.anchor:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.CollectionStartEvent):
                stack.append([event.anchor, 1])
                if len(stack) > MAX_DEPTH:
                    return LimitProblem(
                        f"nests deeper than {MAX_DEPTH} levels: flatten it",
                        _line(event),
                    )
                continue
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, size = stack.pop()
                if anchor:
                    sizes[anchor] = size
                stack[-1][1] += size
            else:
                continue
            if stack[-1][1] > MAX_YAML_NODES:
                return LimitProblem(
                    f"expands to more than {MAX_YAML_NODES:,} values through its aliases "
                    "(*name): a config needs few aliases; write the values out or remove "
                    "the aliases",
                    _line(event),
                )
    except yaml.YAMLError as exc:
        if "nesting depth" in str(getattr(exc, "problem", "")):  # libyaml's own limit
            mark = getattr(exc, "problem_mark", None)
            line = None if mark is None else int(mark.line) + 1
            return LimitProblem(f"nests deeper than {MAX_DEPTH} levels: flatten it", line)
        return None
    return None


def _line(event: Any) -> int | None:
    mark = event.start_mark
    return None if mark is None else int(mark.line) + 1


def _max_indent(text: str) -> int:
    """A cheap upper bound of block nesting: the deepest indentation, in steps of 2."""
    deepest = 0
    for line in text.splitlines():
        stripped = len(line) - len(line.lstrip(" "))
        if stripped > deepest:
            deepest = stripped
    return deepest // 2
