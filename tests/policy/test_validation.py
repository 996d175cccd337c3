"""Tool-argument validation: the compiled fast path and jsonschema agree, and a schema
never makes Portico fetch a document."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portico.policy import validation
from portico.policy.validation import validation_errors

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1},
        "count": {"type": "integer", "minimum": 0},
        "mode": {"enum": ["fast", "slow"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ref": {"$ref": "#/$defs/point"},
    },
    "required": ["text"],
    "additionalProperties": False,
    "$defs": {
        "point": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"],
        }
    },
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
arguments = st.dictionaries(
    st.sampled_from(["text", "count", "mode", "tags", "ref", "other"]), json_values, max_size=5
)


@settings(max_examples=300, deadline=None)
@given(arguments)
def test_the_fast_path_accepts_exactly_what_jsonschema_accepts(args: dict[str, Any]) -> None:
    import jsonschema

    expected = not list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(args))
    assert (validation_errors(args, SCHEMA, schema_key="k") == []) is expected


def test_ordinary_schemas_get_the_compiled_validator_and_jsonschema_words_problems() -> None:
    assert validation_errors({"text": "a", "count": 2}, SCHEMA, schema_key="fast-path") == []
    fast, _full = validation._keyed[("fast-path", False)]
    assert fast is not None and fast.is_valid({"text": "a"}) and not fast.is_valid({})
    problems = validation_errors({"text": "", "count": -1}, SCHEMA, schema_key="fast-path")
    assert problems == ["count: -1 is less than the minimum of 0", "text: '' should be non-empty"]


@pytest.fixture
def document_server() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 that serves a schema and records every request."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("check_formats", [False, True])
def test_a_reference_to_another_document_is_never_fetched(
    document_server: tuple[str, list[str]], allow_logs: Any, check_formats: bool
) -> None:
    url, asked = document_server
    allow_logs(r"reference that is not resolved here")
    schema = {"type": "object", "properties": {"a": {"$ref": f"{url}/schema.json"}}}
    # not rejected for the server's unresolvable schema (the call still goes to approval)
    assert validation_errors({"a": 1}, schema, check_formats=check_formats) == []
    assert validation_errors({"a": 1}, schema, check_formats=check_formats, schema_key="r") == []
    assert asked == []
    assert validation._keyed[("r", check_formats)][0] is None  # jsonschema decides alone


def test_formats_are_checked_for_form_answers_only() -> None:
    schema = {"type": "object", "properties": {"e": {"type": "string", "format": "email"}}}
    assert validation_errors({"e": "nope"}, schema) == []
    assert validation_errors({"e": "nope"}, schema, check_formats=True) == [
        "e: 'nope' is not a 'email'"
    ]
    assert validation_errors({"e": "a@b.example"}, schema, check_formats=True) == []
