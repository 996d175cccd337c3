"""Render the main window and every Prompter dialog offscreen to PNG files.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/ui/screenshots.py [OUT_DIR]

OUT_DIR defaults to docs/screenshots/. ``test_qt_screenshots.py`` runs it into a temp dir.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QWidget

from portico.prompts import (
    AuthorizeRequest,
    DeviceCodeRequest,
    ElicitationRequest,
    Notice,
    SamplingMessage,
    SamplingRequest,
    SpendApprovalRequest,
    StatusLine,
    ToolApprovalRequest,
    TrustRequest,
)
from portico.runtime.events import LogLine, ServerState, Status
from portico.ui.dialogs.approval_dialog import ApprovalDialog, SpendDialog
from portico.ui.dialogs.device_dialog import DeviceDialog
from portico.ui.dialogs.elicitation_dialog import ElicitationDialog
from portico.ui.dialogs.oauth_dialog import OAuthDialog
from portico.ui.dialogs.sampling_dialog import SamplingDialog
from portico.ui.dialogs.trust_dialog import TrustDialog
from portico.ui.loop import ensure_application
from portico.ui.main_window import MainWindow

REPO = Path(__file__).resolve().parents[2]


def main_window() -> MainWindow:
    window = MainWindow()
    model = window.model
    model.set_scopes(
        {
            "github": "global",
            "files": "project",
            "linear": "global",
            "search": "global",
            "local-db": "project",
            "images": "global",
        }
    )
    for state in (
        ServerState("github", Status.RUNNING, tool_count=26),
        ServerState("files", Status.RUNNING, tool_count=11),
        ServerState("linear", Status.NEEDS_AUTH, error="the refresh token was revoked"),
        ServerState("local-db", Status.AWAITING_TRUST, error="project server runs a command"),
        ServerState(
            "search", Status.COOLDOWN, error="connection refused", retry_at=time.time() + 24
        ),
        ServerState("images", Status.LAZY, tool_count=3),
    ):
        model.update_state(state)
    window.set_summary("6 servers: 2 running, 1 lazy, 2 need you, 1 retrying; 40 tools")
    window.post_auth_notice("linear", "the refresh token was revoked")
    window.post_notice(Notice("info", "Opened project ~/work/site (2 project servers)."))
    window.show_servers("github")  # the rail on the left, the Servers place beside it
    for text in ("starting github-mcp-server 1.4.2", "listening on stdio", "26 tools"):
        window.add_log_line(LogLine("github", text))
    window.resize(1100, 620)
    return window


ARGS = {"path": "reports/q3.md", "content": "# Q3\n\nRevenue grew 12%.", "overwrite": False}


def dialogs() -> dict[str, Callable[[], QWidget]]:
    return {
        "trust": lambda: TrustDialog(
            TrustRequest(
                server="local-db",
                source="~/work/site/.portico/mcp.toml:4",
                project="~/work/site",
                transport="stdio",
                target="uvx mcp-server-sqlite --db-path ./data/app.db",
                env_names=("DB_PASSWORD",),
                reasons=(
                    "it is a project server that runs a command on this computer",
                    "it would receive one of your secrets",
                ),
                secrets=("env DB_PASSWORD \u2190 keyring secret site-db-password",),
                costs=("spend limit: 50 credits per chat",),
            )
        ),
        "approval": lambda: ApprovalDialog(
            ToolApprovalRequest(
                server="files",
                tool="write_file",
                qualified_name="files__write_file",
                description="Create or overwrite a file.",
                arguments=ARGS,
                arguments_json=json.dumps(ARGS, indent=2),
                cost_line="Costs about 2 credits.",
                spend_line="This chat has used about 14 credits on 'files' (limit 100).",
                reason="the tool is not marked read-only",
            )
        ),
        "spend": lambda: SpendDialog(
            SpendApprovalRequest(
                server="images",
                tool="render",
                qualified_name="images__render",
                arguments_json='{\n  "prompt": "a lighthouse at dusk",\n  "size": "1024x1024"\n}',
                cost_line="Costs about 40 credits.",
                spend_line="This chat has used about 80 credits on 'images' (limit 100).",
                limit_line="This call would take the chat past the limit of 100 credits.",
            )
        ),
        "oauth": lambda: OAuthDialog(
            AuthorizeRequest(
                server="linear",
                authorize_url="https://linear.example.com/oauth/authorize?response_type=code"
                "&client_id=portico&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
                "&state=af0ifjsldkj",
                redirect_uri="http://127.0.0.1:33418/mcp/oauth/callback",
                timeout=300,
                browser_opened=True,
                reauth=True,
            )
        ),
        "device": lambda: DeviceDialog(
            DeviceCodeRequest(
                server="box",
                verification_uri="https://example.com/device",
                user_code="WDJB-MJHT",
                verification_uri_complete=None,
                expires_in=900,
                interval=5,
                status=StatusLine("Waiting for you to approve (checked 3 times, every 5 s)…"),
            )
        ),
        "elicitation": lambda: ElicitationDialog(
            ElicitationRequest(
                server="travel",
                message="Where should the booking go?",
                schema={
                    "type": "object",
                    "required": ["name", "guests"],
                    "properties": {
                        "name": {"type": "string", "title": "Full name"},
                        "guests": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
                        "budget": {"type": "number", "title": "Budget per night"},
                        "room": {
                            "type": "string",
                            "enum": ["single", "double", "suite"],
                            "default": "double",
                        },
                        "breakfast": {"type": "boolean", "default": True},
                    },
                },
            )
        ),
        "sampling": lambda: SamplingDialog(
            SamplingRequest(
                server="research",
                messages=(SamplingMessage("user", "Summarize the three notes in two sentences."),),
                system_prompt="You are a careful research assistant.",
                requested_model="claude-sonnet",
                model="gpt-4.1-mini",
                max_tokens=800,
            )
        ),
    }


def render(out: Path) -> list[Path]:
    app: QApplication = ensure_application()
    app.setQuitOnLastWindowClosed(False)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    widgets: list[tuple[str, QWidget]] = [("main-window", main_window())]
    widgets += [(f"dialog-{name}", build()) for name, build in dialogs().items()]
    for name, widget in widgets:
        widget.show()
        widget.adjustSize() if name != "main-window" else None
        app.processEvents()
        path = out / f"{name}.png"
        if not widget.grab().save(str(path)):
            raise RuntimeError(f"could not write {path}")
        written.append(path)
        widget.close()
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "screenshots"
    for path in render(target):
        print(path)
