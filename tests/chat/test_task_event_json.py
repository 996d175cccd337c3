"""A call's task as ``portico chat --json`` writes it."""

from __future__ import annotations

from portico.chat.events import ToolCallTask, event_to_json


def test_a_task_event_is_one_json_object() -> None:
    event = ToolCallTask("call-1", "tasking", "slow_compute", "t-9", "input_required", "why?")
    assert event_to_json(event) == {
        "type": "ToolCallTask",
        "id": "call-1",
        "server": "tasking",
        "tool": "slow_compute",
        "task_id": "t-9",
        "status": "input_required",
        "message": "why?",
    }
