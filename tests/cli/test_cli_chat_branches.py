"""``portico chat --resume ID --branch N`` as a real process: it continues branch N (the
model reads that branch only), says which branch it is on, and an N out of range lists
the branches."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.chat.messages import Message
from portico.chat.store import ChatStore, StoredConversation
from portico.paths import paths
from tests.cli.test_cli_chat import run
from tests.servers.model_server import ModelServer, text

pytestmark = pytest.mark.slow


@pytest.fixture
def scripted(portico_home: Path) -> Iterator[ModelServer]:
    with ModelServer() as server:
        folder = paths().global_toml.parent
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.yaml").write_text(
            "models:\n"
            "  providers:\n"
            "    scripted:\n"
            "      kind: openai\n"
            f"      base_url: {server.openai_url}\n"
            "      models: [gpt-test]\n"
            "  default: scripted/gpt-test\n"
        )
        yield server


def _stored_chat_with_three_branches() -> None:
    """A question answered twice (a regenerate) and then edited: three branches."""

    async def write() -> None:
        store = ChatStore()
        store.save_conversation(
            StoredConversation(
                id="c0ffee00" * 4, title="Capitals", model="scripted/gpt-test", leaf_id="a3"
            )
        )
        for mid, parent, role, body in [
            ("q1", None, "user", "Capital of France?"),
            ("a1", "q1", "assistant", "Paris."),
            ("a2", "q1", "assistant", "It is Paris."),
            ("q2", None, "user", "Capital of Portugal?"),
            ("a3", "q2", "assistant", "Lisbon."),
        ]:
            store.save_message("c0ffee00" * 4, Message(mid, role, body, parent_id=parent))  # type: ignore[arg-type]
        await store.close()

    asyncio.run(write())


def test_resume_on_a_branch_continues_it(scripted: ModelServer) -> None:
    _stored_chat_with_three_branches()
    scripted.script(text("Bordeaux too."))
    out = run("chat", "--resume", "c0ffee", "--branch", "2", "-q", "Another city?")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Bordeaux too.\n"
    assert "branch 2 of 3" in out.stderr
    sent = [(m["role"], m["content"]) for m in scripted.requests[0].body["messages"][1:]]
    assert sent == [
        ("user", "Capital of France?"),
        ("assistant", "It is Paris."),
        ("user", "Another city?"),
    ]
    # the next resume opens where it left off, and an N out of range lists the branches
    bad = run("chat", "--resume", "c0ffee", "--branch", "4", "-q", "x")
    assert bad.returncode == 2
    assert "has 3 branches: pick a number from 1 to 3" in bad.stderr
    assert "  1: Capital of France? (2 messages)" in bad.stderr
    assert "* 2: Another city? (4 messages)" in bad.stderr
    assert "  3: Capital of Portugal? (2 messages)" in bad.stderr
    alone = run("chat", "--branch", "1", "-q", "x")
    assert alone.returncode == 2 and "--branch N goes with --resume ID" in alone.stderr
    assert len(scripted.requests) == 1
    helped = run("chat", "--help")
    assert "1 is the chat as first written" in " ".join(helped.stdout.split())


def test_list_ops_rename_pin_archive_delete_and_restore(scripted: ModelServer) -> None:
    _stored_chat_with_three_branches()
    scripted.script(text("Oslo."))
    asked = run("chat", "-q", "Capital of Norway?")
    assert asked.returncode == 0, asked.stderr
    assert len(scripted.requests) == 1  # the answer: no title request

    def listed(*extra: str) -> list[str]:
        out = run("chat", "--list", *extra)
        assert out.returncode == 0, out.stderr
        return [line.split("  ", 2)[2] for line in out.stdout.splitlines()]

    assert [row.split("  (")[0] for row in listed()] == ["Capital of Norway?", "Capitals"]
    assert run("chat", "--rename", "c0ffee", "Old capitals").stdout == (
        "Renamed chat c0ffee00 to 'Old capitals'.\n"
    )
    assert run("chat", "--pin", "c0ffee").returncode == 0
    assert [row.split("  (")[0] for row in listed()] == [
        "pinned  Old capitals",
        "Capital of Norway?",
    ]
    archived = run("chat", "--archive", "c0ffee")
    assert "`portico chat --list --archived` lists it" in archived.stdout
    assert [row.split("  (")[0] for row in listed()] == ["Capital of Norway?"]
    assert [row.split("  (")[0] for row in listed("--archived")] == ["pinned  Old capitals"]
    assert run("chat", "--unarchive", "c0ffee").returncode == 0
    deleted = run("chat", "--delete", "c0ffee")
    assert "Undo with `portico chat --restore c0ffee00` (within 24 hours" in deleted.stdout
    assert len(listed()) == 1
    gone = run("chat", "--resume", "c0ffee", "-q", "x")
    assert gone.returncode == 2 and "no conversation c0ffee" in gone.stderr
    assert run("chat", "--restore", "c0ffee").stdout == "Restored chat c0ffee00.\n"
    assert [row.split("  (")[0] for row in listed()] == [
        "pinned  Old capitals",
        "Capital of Norway?",
    ]
    again = run("chat", "--restore", "c0ffee")
    assert again.returncode == 1 and "no deleted conversation c0ffee" in again.stderr


def test_the_setting_lets_the_model_write_titles(scripted: ModelServer) -> None:
    config = paths().global_toml.parent / "config.yaml"
    config.write_text(config.read_text() + "chat:\n  model_titles: true\n")
    scripted.script(text("Oslo."), text("Norway's capital"))
    out = run("chat", "-q", "Capital of Norway?", "--json")
    assert out.returncode == 0, out.stderr
    assert "Write a title" in str(scripted.requests[1].body)
    assert '"title": "Norway\'s capital"' in out.stdout


def test_a_failed_turn_says_how_to_retry(scripted: ModelServer) -> None:
    from tests.servers.model_server import error

    scripted.script(
        error(429, retry_after=7), text("Paris is the capital", truncate_after=2), text("Paris.")
    )
    out = run("chat", "-q", "Capital of France?")
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    assert any(
        "is rate limited (HTTP 429" in line and "Try again in 7 s." in line for line in lines
    )
    [hint] = [line for line in lines if line.startswith("(the question is kept")]
    chat_id = hint.split("--resume ")[1].split(" ")[0]
    assert hint == (
        f"(the question is kept: wait 7 s, then retry with "
        f"`portico chat --resume {chat_id} -q /retry`)"
    )
    cut = run("chat", "--resume", chat_id, "-q", "/retry")
    assert cut.returncode == 1 and cut.stdout == "Paris is\n"
    assert "stopped before its end" in cut.stderr and "Retry to ask again" in cut.stderr
    assert f"retry with `portico chat --resume {chat_id} -q /retry`" in cut.stderr
    again = run("chat", "--resume", chat_id, "-q", "/retry")
    assert again.returncode == 0 and again.stdout == "Paris.\n"
    exported = run("chat", "--export", chat_id)
    assert exported.stdout.count("## You") == 1  # the question kept once, not asked again
    assert exported.stdout.endswith("## Assistant (scripted/gpt-test)\n\nParis.\n")


@pytest.mark.parametrize(
    ("refusal", "line"),
    [
        ({"status": 401}, "refused the API key (HTTP 401"),
        ({"context_too_long": {"tokens": 9_000, "limit": 8_000}}, "(/compact summarise)"),
        ({"local_refusal": "ollama_no_tools"}, "does not take tool calls (HTTP 400"),
    ],
    ids=["auth", "context", "no_tools"],
)
def test_each_bad_input_keeps_the_question_and_offers_the_retry(
    scripted: ModelServer, refusal: dict[str, object], line: str
) -> None:
    scripted.script(refusal, text("Paris."))
    out = run("chat", "-q", "Capital of France?")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    [said] = [x for x in out.stderr.splitlines() if line in x]
    assert said.startswith("portico: ")
    [hint] = [x for x in out.stderr.splitlines() if x.startswith("(the question is kept")]
    chat_id = hint.split("--resume ")[1].split(" ")[0]
    assert hint == f"(the question is kept: retry with `portico chat --resume {chat_id} -q /retry`)"
    again = run("chat", "--resume", chat_id, "-q", "/retry")
    assert again.returncode == 0 and again.stdout == "Paris.\n", again.stderr
