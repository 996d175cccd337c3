"""Editing the models keys (providers, the default model) through ConfigDocument: in
mcp.toml a provider is a [models.providers.NAME] table and keeps its comments; in
config.yaml a block under models.providers; every byte not edited stays; the result
loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.config import models_edit
from portico.config.document import ConfigDocument, EditError
from portico.config.load import parse_text
from portico.config.model import Scope

TOML = """\
# my servers and models
default_model = "cloud/gpt-4.1"  # the one I use

# the cloud
[models.providers.cloud]  # paid
kind = "openai"
api_key = "${keyring:cloud-api-key}"
models = ["gpt-4.1"]

# servers follow
[mcp.files]
command = ["npx", "-y", "server-filesystem"]
"""

YAML = """\
# mine
mcp_servers:
  files: {command: npx}
models:
  providers:
    cloud:  # paid
      kind: openai
      api_key: "${keyring:cloud-api-key}"
      models: [gpt-4.1]
  default: cloud/gpt-4.1  # the one I use
"""

LOCAL = {"kind": "openai", "base_url": "http://127.0.0.1:11434/v1", "models": ["qwen3"]}


def _doc(text: str, name: str, tmp_path: Path) -> ConfigDocument:
    return ConfigDocument.from_text(text, tmp_path / name)


def _loads(doc: ConfigDocument) -> list[str]:
    config = parse_text(doc.text(), doc.path, Scope.GLOBAL, doc.dialect)
    return [p.name for p in config.models.providers]


def test_toml_add_goes_after_the_providers_and_keeps_the_next_comment(tmp_path: Path) -> None:
    doc = _doc(TOML, "mcp.toml", tmp_path)
    models_edit.add_provider(doc, "local", LOCAL)
    assert doc.text() == TOML.replace(
        'models = ["gpt-4.1"]\n\n# servers follow\n',
        'models = ["gpt-4.1"]\n\n[models.providers.local]\nkind = "openai"\n'
        'base_url = "http://127.0.0.1:11434/v1"\nmodels = ["qwen3"]\n\n# servers follow\n',
    )
    assert _loads(doc) == ["cloud", "local"]


def test_toml_edit_one_key_and_the_default(tmp_path: Path) -> None:
    doc = _doc(TOML, "mcp.toml", tmp_path)
    models_edit.set_provider_key(doc, "cloud", "models", ["gpt-4.1", "gpt-4.1-mini"])
    models_edit.set_default_model(doc, "cloud/gpt-4.1-mini")
    assert doc.text() == TOML.replace(
        'models = ["gpt-4.1"]', 'models = ["gpt-4.1", "gpt-4.1-mini"]'
    ).replace('"cloud/gpt-4.1"  #', '"cloud/gpt-4.1-mini"  #')
    models_edit.set_provider_key(doc, "cloud", "api_key", None)
    assert "api_key" not in doc.text()


def test_toml_remove_takes_its_comments_and_the_default_naming_it(tmp_path: Path) -> None:
    doc = _doc(TOML, "mcp.toml", tmp_path)
    assert models_edit.remove_provider(doc, "cloud") is True
    assert doc.text() == (
        "# my servers and models\n\n"
        '# servers follow\n[mcp.files]\ncommand = ["npx", "-y", "server-filesystem"]\n'
    )
    assert doc.get_setting(("models",)) is None


def test_toml_new_file_and_inline_providers(tmp_path: Path) -> None:
    doc = _doc('[mcp.a]\nurl = "http://h/mcp"\n', "mcp.toml", tmp_path)
    models_edit.add_provider(doc, "local", {"kind": "openai", "base_url": "http://x/v1"})
    models_edit.set_default_model(doc, "local/m")
    assert doc.text() == (
        'default_model = "local/m"\n\n[mcp.a]\nurl = "http://h/mcp"\n\n'
        '[models.providers.local]\nkind = "openai"\nbase_url = "http://x/v1"\n'
    )
    inline = _doc('[models]\nproviders = { a = { kind = "openai" } }\n', "mcp.toml", tmp_path)
    models_edit.add_provider(inline, "b", {"kind": "anthropic"})
    assert inline.text() == (
        '[models]\nproviders = { a = { kind = "openai" }, b = { kind = "anthropic" } }\n'
    )


def test_yaml_add_edit_remove(tmp_path: Path) -> None:
    doc = _doc(YAML, "config.yaml", tmp_path)
    models_edit.add_provider(doc, "local", LOCAL)
    assert doc.text() == YAML.replace(
        "      models: [gpt-4.1]\n",
        "      models: [gpt-4.1]\n    local:\n      kind: openai\n"
        "      base_url: http://127.0.0.1:11434/v1\n      models: [qwen3]\n",
    )
    models_edit.set_default_model(doc, "local/qwen3")
    assert "  default: local/qwen3  # the one I use\n" in doc.text()
    assert models_edit.remove_provider(doc, "local") is True
    assert doc.text() == YAML.replace("  default: cloud/gpt-4.1  # the one I use\n", "")
    assert _loads(doc) == ["cloud"]


def test_refusals_name_the_file_and_key(tmp_path: Path) -> None:
    doc = _doc(TOML, "mcp.toml", tmp_path)
    with pytest.raises(EditError, match=r"mcp.toml: a provider named 'cloud' already exists"):
        models_edit.add_provider(doc, "cloud", LOCAL)
    with pytest.raises(EditError, match=r"provider name"):
        models_edit.add_provider(doc, "bad name", LOCAL)
    with pytest.raises(EditError, match=r"models.providers.cloud.base_ur: not a key.*base_url"):
        models_edit.set_provider_key(doc, "cloud", "base_ur", "http://x")
    with pytest.raises(EditError, match=r"no provider named 'nope' \(providers here: cloud\)"):
        models_edit.remove_provider(doc, "nope")
    assert doc.text() == TOML


def test_put_provider_refills_an_existing_one_in_place(tmp_path: Path) -> None:
    doc = _doc(TOML, "mcp.toml", tmp_path)
    models_edit.put_provider(doc, "cloud", {"kind": "openai", "models": ["gpt-5"]})
    assert doc.text() == TOML.replace('api_key = "${keyring:cloud-api-key}"\n', "").replace(
        '["gpt-4.1"]', '["gpt-5"]'
    )
    models_edit.put_provider(doc, "local", LOCAL)
    assert models_edit.provider(doc, "local") == LOCAL
