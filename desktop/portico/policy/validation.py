"""Validate tool arguments against the tool's input schema before anybody is asked."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger(__name__)


def validation_errors(
    arguments: Any,
    schema: Mapping[str, Any] | None,
    *,
    check_formats: bool = False,
    schema_key: str | None = None,
) -> list[str]:
    """Plain-words problems of ``arguments`` against ``schema`` (empty list = valid).

    ``check_formats`` also checks ``format`` (email, uri, date...), used for answers a
    person typed into an elicitation form.

    ``schema_key``: a string that changes whenever the schema does (the tool's contract
    digest); it finds the compiled validator without serialising the schema again.

    A schema that is itself broken is the server's bug, not the model's: it is logged
    and the arguments are not rejected for it (the call still goes through approval).

    Arguments are checked first by ``jsonschema_rs`` (compiled: ~0.2 us against ~11 us
    for ``jsonschema`` on a small schema, and every tool call asks); what it accepts
    passes. What it rejects, and everything under a schema it cannot compile, goes to
    ``jsonschema``, which words the problems and has the last word on a rejection
    (``tests/policy/test_validation.py`` holds the two to the same answers).
    """
    if not isinstance(arguments, Mapping):
        return [f"arguments must be a JSON object, got {type(arguments).__name__}"]
    if not schema:
        return []
    if schema_key is not None:
        validator = _by_key(schema_key, check_formats, schema)
    else:
        validator = _validator(json.dumps(schema, sort_keys=True, default=str), check_formats)
    if validator is None:
        return []
    fast, full = validator
    if fast is not None and _passes(fast, arguments):
        return []
    from referencing.exceptions import Unresolvable

    try:
        errors = sorted(full.iter_errors(dict(arguments)), key=lambda e: list(e.path))
    except Unresolvable as exc:  # a $ref to another document: never fetched
        log.warning(
            "tool input schema has a reference that is not resolved here, arguments "
            "not validated: %s",
            exc,
        )
        return []
    problems: list[str] = []
    for error in errors:
        where = "/".join(str(p) for p in error.absolute_path)
        problems.append(f"{where}: {error.message}" if where else error.message)
    return problems


_keyed: dict[tuple[str, bool], Any] = {}
_KEYED_MAX = 1024


def _by_key(key: str, check_formats: bool, schema: Mapping[str, Any]) -> Any:
    found = _keyed.get((key, check_formats), _keyed)
    if found is _keyed:
        found = _validator(json.dumps(schema, sort_keys=True, default=str), check_formats)
        if len(_keyed) >= _KEYED_MAX:
            _keyed.pop(next(iter(_keyed)))
        _keyed[(key, check_formats)] = found
    return found


@functools.lru_cache(maxsize=1024)
def _validator(schema_json: str, check_formats: bool) -> Any:
    """One checked validator per schema: checking a schema against its meta-schema costs
    ~10 ms, far more than validating the arguments (every tool call asks). A ``$ref`` to
    another document is never fetched (a server's schema must not make Portico open a
    URL), so it stays unresolved."""
    import jsonschema
    from referencing import Registry

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        log.warning("tool input schema is invalid, arguments not validated: %s", exc.message)
        return None
    checker = cls(
        schema,
        format_checker=cls.FORMAT_CHECKER if check_formats else None,
        registry=Registry(retrieve=_no_document),  # type: ignore[call-arg]
    )
    return _compiled(schema, check_formats), checker


def _passes(fast: Any, arguments: Any) -> bool:
    try:
        return bool(fast.is_valid(arguments))
    except Exception:  # a value it cannot read (not from JSON): jsonschema decides
        return False


def _no_document(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def _refuse(uri: str) -> Any:
    raise LookupError(f"{uri}: a tool's schema may not load other documents")


def _compiled(schema: Any, check_formats: bool) -> Any:
    """``jsonschema_rs``'s validator for ``schema``, formats not checked. None when it
    cannot make one (a remote ``$ref``, which it is never allowed to fetch, or a draft it
    does not know) and for answers typed into a form (``check_formats``: the two libraries
    need not agree on every format, and a form is not a hot path)."""
    if check_formats:
        return None
    import jsonschema_rs

    try:
        return jsonschema_rs.validator_for(schema, validate_formats=False, retriever=_refuse)
    except Exception:  # jsonschema decides alone, as before
        return None
