"""Trust decisions in the app can be undone: a rejected project server shows as Rejected
(not Disabled), Review trust… stays available, and trusting it again changes only the
person's own trust store, never the project's file. Servers left awaiting a review get
one notice with Review…."""

from __future__ import annotations

from pathlib import Path

from portico.runtime.events import Status
from portico.ui.actions import ActionId
from portico.ui.dialogs.trust_dialog import TrustDialog
from tests.ui.pages_helpers import command, running_app, select, status_of
from tests.ui.qt_helpers import gone, until


async def test_reject_then_review_trusts_again_without_touching_the_project_file(
    project: Path,
) -> None:
    toml = project / ".portico" / "mcp.toml"
    toml.write_text(f"# shared with the team\n[mcp.local]\ncommand = {command('tiny.py')}\n")
    before = toml.read_bytes()
    async with running_app(project=project) as desktop:
        dialog = await until(lambda: desktop.prompter.current, 60, "the trust review")  # type: ignore[union-attr]
        assert isinstance(dialog, TrustDialog)
        dialog.reject_button.click()
        await until(lambda: status_of(desktop, "local") is Status.REJECTED, 30, "rejected")
        window = desktop.window
        select(desktop, "local")
        row = desktop.model.index(desktop.model.row_of("local") or 0)
        assert "Rejected at trust review" in row.data()
        offered = dict(window.server_actions(window.selected_state()))  # type: ignore[arg-type]
        assert offered["Review trust…"] is True
        assert "Enable" not in offered and offered["Disable"] is False
        assert toml.read_bytes() == before  # rejecting wrote nothing into the shared file

        assert window.servers.commands.trigger(ActionId.REVIEW_TRUST)
        again = await until(
            lambda: desktop.prompter.current if desktop.prompter.current is not dialog else None,  # type: ignore[union-attr]
            30,
            "the review asked again",
        )
        assert isinstance(again, TrustDialog)
        again.trust_button.click()
        await until(lambda: status_of(desktop, "local") is Status.RUNNING, 30, "local running")
        assert gone(again)
        assert toml.read_bytes() == before  # un-rejecting changed only the trust store
        # a trusted project server can be reviewed again too
        offered = dict(window.server_actions(window.selected_state()))  # type: ignore[arg-type]
        assert offered["Review trust…"] is True


async def test_servers_awaiting_trust_get_one_notice_with_review(project: Path) -> None:
    (project / ".portico" / "mcp.toml").write_text(
        f"[mcp.one]\ncommand = {command('tiny.py')}\n\n[mcp.two]\ncommand = {command('tiny.py')}\n"
    )
    async with running_app(project=project) as desktop:
        closed: list[object] = []
        for _ in range(2):  # the person closes both reviews: both servers wait
            dialog = await until(
                lambda: next(
                    (d for d in [desktop.prompter.current] if d and d not in closed),  # type: ignore[union-attr]
                    None,
                ),
                60,
                "a trust review",
            )
            closed.append(dialog)
            dialog.close()
        await until(
            lambda: (
                {status_of(desktop, "one"), status_of(desktop, "two")} == {Status.AWAITING_TRUST}
            ),
            30,
            f"both awaiting trust (now {status_of(desktop, 'one')}, {status_of(desktop, 'two')})",
        )
        # a server shows AwaitingTrust while its review is open, too: wait for both to close
        await until(lambda: desktop.prompter.current is None, 30, "the reviews closed")  # type: ignore[union-attr]
        notices = desktop.window.notices
        rows = await until(
            lambda: [r for r in notices.rows() if "wait for your trust review" in r.label.text()],
            10,
            "the waiting notice",
        )
        assert len(rows) == 1
        assert rows[0].label.text() == "2 project servers wait for your trust review: one, two."
        assert rows[0].action_button is not None and rows[0].action_button.text() == "Review…"
        rows[0].action_button.click()
        review = await until(lambda: desktop.prompter.current, 30, "the review from the notice")  # type: ignore[union-attr]
        assert isinstance(review, TrustDialog) and review.server == "one"
        review.once_button.click()
        await until(lambda: status_of(desktop, "one") is Status.RUNNING, 30, "one running")
        await until(
            lambda: (
                [r.label.text() for r in notices.rows() if "trust review" in r.label.text()]
                == ["The project server two waits for your trust review before it starts."]
            ),
            10,
            "the notice naming the one still waiting",
        )
