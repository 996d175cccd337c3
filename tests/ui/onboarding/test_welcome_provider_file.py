"""The first run's Connect a model writes the provider through the models helper: in
mcp.toml a [models.providers.NAME] table after the servers and a top-level default_model;
connecting it again refills the same table in place."""

from __future__ import annotations

from pathlib import Path

from portico.ui.onboarding.setup import add_provider

TOML = '# mine\n[mcp.files]  # files\ncommand = ["npx"]\n'


def test_connect_a_model_writes_a_table_and_the_default(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(TOML)
    written = add_provider(
        "local",
        kind="openai",
        base_url="http://127.0.0.1:11434/v1",
        key_ref=None,
        models=["qwen3"],
        default_model="qwen3",
        path=path,
    )
    assert written == path
    expected = (
        '# mine\ndefault_model = "local/qwen3"\n\n[mcp.files]  # files\ncommand = ["npx"]\n\n'
        '[models.providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:11434/v1"\n'
        'models = ["qwen3"]\ndefault_model = "qwen3"\n'
    )
    assert path.read_text() == expected
    add_provider(
        "local",
        kind="openai",
        base_url="http://127.0.0.1:11434/v1",
        key_ref="${keyring:LOCAL_API_KEY}",
        models=["qwen3"],
        default_model="qwen3",
        path=path,
    )
    assert path.read_text() == expected + 'api_key = "${keyring:LOCAL_API_KEY}"\n'
