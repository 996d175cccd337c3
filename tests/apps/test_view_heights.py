"""The views' remembered heights: within the limits, kept across instances, a bad file
named in a warning and replaced, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from portico.apps.heights import MAX_HEIGHT, MIN_HEIGHT, ViewHeights
from tests.helpers.logs import AllowLogs


def test_heights_are_kept_per_view_within_the_limits(tmp_path: Path) -> None:
    path = tmp_path / "state" / "view-heights.json"
    heights = ViewHeights(path)
    assert heights.get("viewer", "ui://viewer/weather") is None
    assert heights.set("viewer", "ui://viewer/weather", 333) == 333
    assert heights.set("viewer", "ui://viewer/map", 5) == MIN_HEIGHT
    assert heights.set("other", "ui://viewer/weather", 99999) == MAX_HEIGHT
    again = ViewHeights(path)
    assert again.get("viewer", "ui://viewer/weather") == 333
    assert again.get("viewer", "ui://viewer/map") == MIN_HEIGHT
    assert again.get("other", "ui://viewer/weather") == MAX_HEIGHT


def test_a_bad_heights_file_is_named_and_replaced(tmp_path: Path, allow_logs: AllowLogs) -> None:
    allow_logs(r"view-heights\.json: the views' heights cannot be read")
    path = tmp_path / "view-heights.json"
    path.write_text("{not json")
    heights = ViewHeights(path)
    assert heights.get("viewer", "ui://viewer/weather") is None
    heights.set("viewer", "ui://viewer/weather", 200)
    assert json.loads(path.read_text()) == {'["viewer", "ui://viewer/weather"]': 200}
    path.write_text(json.dumps({'["a", "ui://b"]': "tall", '["c", "ui://d"]': 150}))
    assert ViewHeights(path).get("a", "ui://b") is None
    assert ViewHeights(path).get("c", "ui://d") == 150
