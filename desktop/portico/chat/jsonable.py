"""Events as JSON-ready data (``portico chat --json``; one object per line)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from portico.runtime.results import ToolResult


def _plain(value: Any) -> Any:
    if isinstance(value, ToolResult):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def event_json(event: Any) -> dict[str, Any]:
    data = _plain(event)
    assert isinstance(data, dict)
    return {"type": type(event).__name__, **data}
