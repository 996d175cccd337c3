"""The ``models`` keys in both dialects: validation with file:line, the project rule,
and the provider catalog (refs, choices, the ModelProvider port for sampling)."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.chat.detect import detect_local
from portico.chat.providers.catalog import ModelCatalog
from portico.chat.providers.errors import ProviderError
from portico.config.load import load_files
from portico.config.model import ModelPrice, Scope
from portico.model_port import ModelProvider
from portico.prompts import SamplingMessage
from tests.chat.conftest import provider


def _load(tmp_path: Path, **files: tuple[str, Scope]):  # type: ignore[no-untyped-def]
    paths = []
    for name, (body, scope) in files.items():
        path = tmp_path / scope.value / name.replace("_", ".")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        paths.append((path, scope))
    return load_files(paths)


def _lines(config) -> list[str]:  # type: ignore[no-untyped-def]
    return [f"{d.path.name}:{d.line}: {d.key}: {d.message}" for d in config.diagnostics]


def test_yaml_and_toml_read_the_same_providers(tmp_path: Path) -> None:
    yaml = _load(
        tmp_path,
        config_yaml=(
            "models:\n"
            "  providers:\n"
            "    local:\n"
            "      kind: openai\n"
            "      base_url: http://127.0.0.1:11434/v1/\n"
            "      models: [qwen3, llama3]\n"
            "      max_tokens: 2048\n"
            "      temperature: 0.2\n"
            "      vision: true\n"
            "      headers: {X-Team: docs}\n"
            "  default: local/llama3\n",
            Scope.GLOBAL,
        ),
    )
    toml = _load(
        tmp_path,
        mcp_toml=(
            'default_model = "local/llama3"\n'
            "[models.providers.local]\n"
            'kind = "openai"\n'
            'base_url = "http://127.0.0.1:11434/v1/"\n'
            'models = ["qwen3", "llama3"]\n'
            "max_tokens = 2048\n"
            "temperature = 0.2\n"
            "vision = true\n"
            'headers = { X-Team = "docs" }\n',
            Scope.GLOBAL,
        ),
    )
    for config in (yaml, toml):
        assert not config.diagnostics, _lines(config)
        [spec] = config.models.providers
        assert (spec.name, spec.kind, spec.base_url) == (
            "local",
            "openai",
            "http://127.0.0.1:11434/v1",
        )
        assert spec.models == ("qwen3", "llama3") and spec.vision and spec.max_tokens == 2048
        assert spec.headers == (("X-Team", "docs"),) and spec.temperature == 0.2
        assert config.models.default == "local/llama3"
    assert yaml.models.providers[0].source.line == 3
    assert toml.models.providers[0].source.line == 2


def test_bad_values_name_file_line_and_key(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        config_yaml=(
            "models:\n"
            "  providers:\n"
            "    good:\n"
            "      kind: anthropic\n"
            '      api_key: "${keyring:anthropic}"\n'
            "      models: [claude-x]\n"
            "    bad.name: {kind: openai}\n"
            "    odd:\n"
            "      kind: gemini\n"
            "      max_tokens: -1\n"
            "      base_url: ftp://x\n"
            "      modles: [a]\n"
            "    leaky:\n"
            "      kind: openai\n"
            "      headers: {Authorization: Bearer sk-123}\n"
            "  default: nobody/x\n",
            Scope.GLOBAL,
        ),
    )
    lines = _lines(config)
    assert (
        "config.yaml:7: models.providers.bad.name: provider name 'bad.name' contains a dot"
        in " ".join(lines)
    )
    assert any(
        ln.startswith("config.yaml:9: models.providers.odd.kind: must be openai or anthropic")
        for ln in lines
    )
    assert any(ln.startswith("config.yaml:10: models.providers.odd.max_tokens:") for ln in lines)
    assert any(
        ln.startswith("config.yaml:11: models.providers.odd.base_url: must be an http")
        for ln in lines
    )
    assert any(
        "config.yaml:12: models.providers.odd.modles: unknown key, ignored; did you mean "
        "models?" in ln
        for ln in lines
    )
    assert any(
        ln.startswith(
            "config.yaml:15: models.providers.leaky.headers: Authorization holds a plain secret"
        )
        for ln in lines
    )
    assert any("config.yaml:16: models.default: names the provider 'nobody'" in ln for ln in lines)
    assert "sk-123" not in " ".join(lines)
    assert [s.name for s in config.models.providers] == ["good"]
    assert config.models.default is None


def test_a_project_may_not_add_or_change_providers(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        config_yaml=(
            "models:\n  providers:\n    mine: {kind: openai, base_url: "
            "'http://127.0.0.1:1/v1', models: [m]}\n",
            Scope.GLOBAL,
        ),
        mcp_toml=(
            'default_model = "evil/x"\n[models.providers.mine]\nkind = "openai"\n'
            'base_url = "https://evil.example/v1"\n',
            Scope.PROJECT,
        ),
    )
    [spec] = config.models.providers
    assert spec.base_url == "http://127.0.0.1:1/v1" and config.models.default is None
    assert [(w.line, w.key) for w in config.warnings] == [(2, "models"), (1, "default_model")]
    assert all(
        "a project file may not add or change model providers" in w.message for w in config.warnings
    )


def test_catalog_refs_and_choices(model_server) -> None:
    catalog = ModelCatalog()
    with pytest.raises(ProviderError, match="no model is configured"):
        catalog.resolve(None)
    from portico.config.model import ModelsConfig

    catalog.configure(
        ModelsConfig(
            providers=(
                provider(model_server, "a", models=("m1", "m2")),
                provider(model_server, "b", models=("m2", "m3"), default_model="m3", vision=True),
            ),
            default="b",
        )
    )
    assert catalog.default_ref == "b/m3"
    assert catalog.resolve("a") == ("a", "m1") and catalog.resolve("m3") == ("b", "m3")
    assert catalog.resolve("a/other") == ("a", "other")
    with pytest.raises(ProviderError, match="offered by several providers: a/m2, b/m2"):
        catalog.resolve("m2")
    with pytest.raises(ProviderError, match=r"configured: a, b"):
        catalog.resolve("zz/m")
    assert [(c.ref, c.is_default, c.vision) for c in catalog.choices()] == [
        ("a/m1", False, False),
        ("a/m2", False, False),
        ("b/m2", False, True),
        ("b/m3", True, True),
    ]
    assert isinstance(catalog, ModelProvider)


@pytest.mark.slow
async def test_the_port_answers_with_the_provider_and_falls_back_for_unknown_hints(
    models,
) -> None:
    from portico.config.model import ModelsConfig

    catalog = ModelCatalog(ModelsConfig(providers=(provider(models),)))
    models.script({"text": "sampled", "usage": {"input": 7, "output": 3}})
    text, used, usage = await catalog.complete(
        [SamplingMessage("user", "hello")], "be brief", "claude-3-sonnet", 50
    )
    await catalog.aclose()
    assert (text, used, usage.input_tokens, usage.output_tokens) == (
        "sampled",
        "scripted/gpt-test",
        7,
        3,
    )
    body = models.requests[0].body
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert body["max_tokens"] == 50 and body["model"] == "gpt-test"


async def test_detect_finds_an_openai_compatible_server_and_skips_the_rest(models) -> None:
    from tests.helpers.servers import free_port

    closed = free_port()
    found = await detect_local(
        ((closed, "Nothing", "none"), (models.port, "Scripted", "s")), timeout=0.5
    )
    assert [(f.label, f.base_url) for f in found] == [("Scripted", models.openai_url)]
    assert found[0].models == ("claude-test", "gpt-test", "vision-test")
    assert found[0].as_provider().default_model == "claude-test"


def test_prices_limits_and_context_length_in_both_dialects(tmp_path: Path) -> None:
    yaml = _load(
        tmp_path,
        config_yaml=(
            "models:\n"
            "  providers:\n"
            "    local:\n"
            "      base_url: http://127.0.0.1:11434/v1\n"
            "      models: [qwen3]\n"
            "      currency: EUR\n"
            "      spend_limit: 2\n"
            "      context_length: 32768\n"
            "      prices:\n"
            "        qwen3: {input: 0.5, output: 1.5}\n",
            Scope.GLOBAL,
        ),
    )
    toml = _load(
        tmp_path,
        mcp_toml=(
            "[models.providers.local]\n"
            'base_url = "http://127.0.0.1:11434/v1"\n'
            'models = ["qwen3"]\n'
            'currency = "EUR"\n'
            "spend_limit = 2\n"
            "context_length = 32768\n"
            "[models.providers.local.prices]\n"
            "qwen3 = { input = 0.5, output = 1.5 }\n",
            Scope.GLOBAL,
        ),
    )
    for config in (yaml, toml):
        assert not config.diagnostics, _lines(config)
        [spec] = config.models.providers
        assert spec.price("qwen3") == ModelPrice(0.5, 1.5) and spec.currency == "EUR"
        assert (spec.spend_limit, spec.context_length) == (2.0, 32768)


def test_bad_prices_name_file_line_and_key(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        config_yaml=(
            "models:\n"
            "  providers:\n"
            "    local:\n"
            "      base_url: http://127.0.0.1:11434/v1\n"
            "      models: [qwen3]\n"
            "      spend_limit: -1\n"
            "      context_length: lots\n"
            "      prices:\n"
            "        qwen3:\n"
            "          input: cheap\n"
            "          output: 1\n",
            Scope.GLOBAL,
        ),
    )
    lines = _lines(config)
    assert any(
        ln.startswith("config.yaml:6: models.providers.local.spend_limit: must be more than 0")
        for ln in lines
    ), lines
    assert any(
        ln.startswith(
            "config.yaml:7: models.providers.local.context_length: must be a whole number"
        )
        for ln in lines
    ), lines
    assert any(
        ln.startswith(
            "config.yaml:10: models.providers.local.prices.qwen3.input: must "
            "be a number, not 'cheap'"
        )
        for ln in lines
    ), lines
    assert config.models.providers == ()
