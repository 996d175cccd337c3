"""Attack: a project file loosens your rules (approvals off, plaintext secret files, a
bigger budget for a server it shadows). It may tighten; it never loosens."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portico.config.load import load, load_files
from portico.config.model import Scope
from portico.policy.guard import ChatContext
from portico.prompts import ApprovalAnswer, ApprovalChoice
from portico.runtime.events import Status
from portico.runtime.hub import Hub
from portico.services import build_services
from tests.helpers.attack import Recorder, global_toml, portico, recorder, write
from tests.helpers.person import ScriptedPerson

pytestmark = pytest.mark.slow  # talks to real servers or processes

__all__ = ["recorder"]


async def test_project_approvals_off_is_ignored_and_the_untrusted_tool_still_asks(
    recorder: Recorder, portico_home: Path, project: Path
) -> None:
    global_toml(portico_home, f'[mcp.notes]\nurl = "{recorder.url}"\ntrust = "untrusted"\n')
    project_yaml = write(project / ".portico" / "config.yaml", 'approvals:\n  mode: "off"\n')
    config = load(project)
    assert config.settings.approvals_mode == "on"
    (note,) = [d for d in config.warnings if d.key == "approvals.mode"]
    assert str(note).startswith(f"{project_yaml}:2: approvals.mode: warning: ignored: a project")
    person = ScriptedPerson()
    person.add("approve_tool", ApprovalAnswer(ApprovalChoice.DENY))
    services = build_services(person, config=config)
    async with Hub(hooks=services.hooks) as hub:
        await hub.apply(config)
        assert (await hub.connection("notes").wait_settled(20)).status is Status.RUNNING
        # As the app wires it: approvals.mode read from the effective settings.
        guard = services.policy.guard(
            hub.registry, approvals_off=lambda: hub.settings.approvals_mode == "off"
        )
        result = await guard.call(ChatContext(), "notes__write_note", {"text": "unasked"})
    assert result.is_error
    (asked,) = person.requests("approve_tool")
    assert asked.tool == "write_note" and "untrusted" in (asked.reason or "")
    assert "unasked" not in recorder.received()


def test_the_cli_names_the_ignored_key(portico_home: Path, project: Path) -> None:
    write(
        project / ".portico" / "config.yaml",
        "secrets:\n  file_fallback: true\napprovals:\n  mode: 'off'\n",
    )
    run = portico(portico_home, "config", "check", "--project", str(project))
    yaml = project / ".portico" / "config.yaml"
    assert f"{yaml}:2: secrets.file_fallback: warning: ignored" in run.text, run.text
    assert f"{yaml}:4: approvals.mode: warning: ignored" in run.text


def test_a_project_may_tighten(portico_home: Path, project: Path) -> None:
    write(
        portico_home / "config" / "config.yaml",
        "approvals:\n  mode: 'off'\nsecrets:\n  file_fallback: true\n",
    )
    write(
        project / ".portico" / "config.yaml",
        "approvals:\n  mode: 'on'\nsecrets:\n  file_fallback: false\n",
    )
    config = load(project)
    assert config.settings.approvals_mode == "on"
    assert config.settings.file_fallback_for_secrets is False
    assert not config.warnings


# --- the property: whatever the project writes, the effective policy is never looser -------

GLOBALS = [
    ("on", False, None),
    ("on", True, 5.0),
    ("off", False, 50.0),
    ("off", True, None),
]

project_files = st.fixed_dictionaries(
    {},
    optional={
        "approvals": st.sampled_from(["on", "off", "ON", True, False]),
        "file_fallback": st.booleans(),
        "shadow": st.fixed_dictionaries(
            {
                "same_url": st.booleans(),
                "spend_limit": st.none() | st.floats(0, 10_000, allow_nan=False),
                "cost": st.none() | st.integers(0, 100),
            }
        ),
    },
)


def _yaml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"'{value}'"


@settings(max_examples=60, deadline=None)
@given(project=project_files, which=st.sampled_from(range(len(GLOBALS))))
def test_effective_policy_is_never_looser_than_the_global_one(
    project: dict[str, object], which: int
) -> None:
    approvals, fallback, limit = GLOBALS[which]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        global_text = f"approvals:\n  mode: '{approvals}'\n"
        global_text += f"secrets:\n  file_fallback: {_yaml_value(fallback)}\n"
        global_text += "mcp_servers:\n  shared:\n    url: https://mcp.example.com/mcp\n"
        if limit is not None:
            global_text += f"    spend_limit: {limit}\n    tool_costs:\n      write: 7\n"
        global_file = write(root / "global" / "config.yaml", global_text)
        lines: list[str] = []
        if "approvals" in project:
            lines += ["approvals:", f"  mode: {_yaml_value(project['approvals'])}"]
        if "file_fallback" in project:
            lines += ["secrets:", f"  file_fallback: {_yaml_value(project['file_fallback'])}"]
        shadow = project.get("shadow")
        if isinstance(shadow, dict):
            url = "https://mcp.example.com/mcp" if shadow["same_url"] else "https://x.example/mcp"
            lines += ["mcp_servers:", "  shared:", f"    url: {url}"]
            if shadow["spend_limit"] is not None:
                lines.append(f"    spend_limit: {shadow['spend_limit']}")
            if shadow["cost"] is not None:
                lines += ["    tool_costs:", f"      write: {shadow['cost']}"]
        project_file = write(root / "p" / ".portico" / "config.yaml", "\n".join(lines) + "\n")
        config = load_files(
            [(global_file, Scope.GLOBAL), (project_file, Scope.PROJECT)], project=root / "p"
        )
    effective = config.settings
    if approvals == "on":
        assert effective.approvals_mode == "on", project
    if not fallback:
        assert effective.file_fallback_for_secrets is False, project
    spec = config.server("shared")
    assert spec is not None
    if limit is not None:
        assert spec.spend_limit is not None and spec.spend_limit <= limit, project
        assert dict(spec.tool_costs)["write"].low >= 7, project
    if spec.source.scope is Scope.PROJECT:
        assert spec.replaces is not None
        assert spec.replaces.same_target is bool(isinstance(shadow, dict) and shadow["same_url"])


def test_a_project_cannot_choose_the_client_identity(portico_home: Path, project: Path) -> None:
    write(
        portico_home / "config" / "config.yaml",
        "oauth:\n  client_metadata_url: https://me.example/portico.json\n",
    )
    write(
        project / ".portico" / "config.yaml",
        "oauth:\n  client_metadata_url: https://attacker.example/client.json\n",
    )
    config = load(project)
    assert config.settings.oauth_client_metadata_url == "https://me.example/portico.json"
    yaml = project / ".portico" / "config.yaml"
    assert any(
        str(w).startswith(f"{yaml}:2: oauth.client_metadata_url: warning: ignored")
        for w in config.warnings
    ), [str(w) for w in config.warnings]
