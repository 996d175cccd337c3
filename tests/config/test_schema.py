"""The key table is complete, unambiguous and agrees with the model."""

from __future__ import annotations

from dataclasses import fields

import pytest

from portico.config import schema
from portico.config.model import Dialect as D
from portico.config.model import (
    ElicitationSpec,
    OAuthSpec,
    RuntimeSettings,
    SamplingSpec,
    ServerSpec,
    ToolFilter,
)


def test_every_key_has_a_group_help_and_spellings() -> None:
    for spec in schema.KEYS:
        assert spec.group in schema.GROUPS, spec.name
        assert spec.help and "\n" not in spec.help and len(spec.help) <= 140, spec.name
        assert spec.toml and spec.yaml, spec.name
        if spec.parent is not None:
            assert schema.key(spec.parent).type == "table", spec.name
        if spec.type == "choice":
            assert spec.choices, spec.name
            assert spec.default is None or spec.default in spec.choices, spec.name


def test_every_group_has_keys() -> None:
    assert [group for group, keys in schema.by_group() if keys] == list(schema.GROUPS)


@pytest.mark.parametrize("dialect", list(D))
def test_spellings_are_unambiguous_within_a_table(dialect: D) -> None:
    for parent in {None, *(s.name for s in schema.KEYS if s.type == "table")}:
        seen: dict[str, str] = {}
        for spec in schema.children(parent):
            for spelling in spec.spellings(dialect):
                assert spelling not in seen, (parent, spelling, seen.get(spelling), spec.name)
                seen[spelling] = spec.name


def test_the_model_is_covered() -> None:
    names = {spec.name for spec in schema.KEYS}
    # transport comes from command / url / transport; replaces, loosened and
    # sandbox_by_default are set by the loader
    skip = {"name", "source", "transport", "replaces", "loosened", "sandbox_by_default"}
    for f in fields(ServerSpec):
        if f.name in skip:
            continue
        assert f.name in names, f.name
    for prefix, cls in (
        ("oauth", OAuthSpec),
        ("tools", ToolFilter),
        ("sampling", SamplingSpec),
        ("elicitation", ElicitationSpec),
    ):
        for f in fields(cls):
            assert f"{prefix}.{f.name}" in names, (prefix, f.name)
    setting_fields = {s.field for s in schema.SETTINGS if s.field}
    assert setting_fields == {f.name for f in fields(RuntimeSettings)}


def test_defaults_agree_with_the_model() -> None:
    spec = ServerSpec(name="x", source=None, transport=None)  # type: ignore[arg-type]
    for name in (
        "timeout",
        "connect_timeout",
        "enabled",
        "lazy",
        "always_load",
        "events",
        "idle_timeout_seconds",
        "max_lifetime_seconds",
        "cost_unit",
        "supports_parallel_tool_calls",
    ):
        assert schema.key(name).default == getattr(spec, name), name
    assert schema.key("protocol").default == spec.protocol.value
    assert schema.key("trust").default == spec.trust.value
    for prefix, obj in (
        ("oauth", OAuthSpec()),
        ("tools", ToolFilter()),
        ("sampling", SamplingSpec()),
        ("elicitation", ElicitationSpec()),
    ):
        for f in fields(obj):
            key = schema.key(f"{prefix}.{f.name}")
            # None in the model = "not written"; portico.auth applies the shown default
            if key.default is not None and getattr(obj, f.name) is not None:
                assert key.default == getattr(obj, f.name), key.name
    settings = RuntimeSettings()
    for s in schema.SETTINGS:
        if s.field:
            assert s.default == getattr(settings, s.field), s.name


def test_units_and_conversion() -> None:
    timeout = schema.key("timeout")
    assert timeout.unit(D.TOML) == "milliseconds" and timeout.unit(D.YAML) == "seconds"
    assert timeout.to_dialect(30.0, D.TOML) == 30000
    assert timeout.from_dialect(1500, D.TOML) == 1.5
    assert timeout.to_dialect(30.0, D.YAML) == 30.0
    assert timeout.to_dialect(timeout.max, D.TOML) == 300000
    idle = schema.key("idle_timeout_seconds")
    assert idle.unit(D.TOML) == "seconds" and idle.to_dialect(900.0, D.TOML) == 900.0
    assert schema.key("enabled").unit(D.TOML) is None


def test_lookup_and_paths() -> None:
    assert schema.lookup(D.TOML, None, "environment").name == "env"  # type: ignore[union-attr]
    assert schema.lookup(D.TOML, None, "env").name == "env"  # type: ignore[union-attr]
    assert schema.lookup(D.YAML, "oauth", "callback_hostname").name == "oauth.callback_host"  # type: ignore[union-attr]
    assert schema.lookup(D.YAML, "oauth", "timeout").name == "oauth.timeout"  # type: ignore[union-attr]
    assert schema.lookup(D.YAML, None, "nope") is None
    assert schema.key("oauth.callback_port").path(D.TOML) == ("oauth", "callback_port")
    assert schema.key("oauth.callback_port").path(D.YAML) == ("oauth", "redirect_port")
    assert schema.key("env").spelling(D.TOML) == "environment"
    assert schema.spellings(D.TOML, None)[:3] == ["command", "args", "environment"]
    assert "env" in schema.spellings(D.TOML, None)


def test_fmt() -> None:
    assert schema.fmt(300000.0) == "300000"
    assert schema.fmt(0.5) == "0.5"
    assert schema.fmt(7) == "7"
