"""``portico chat``: one question (``-q``), an interactive session, or the stored chats
(``--list``, ``--search``, ``--export``, ``--resume``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from portico.chat.cost import money
from portico.cli.commands import Groups
from portico.cli.common import add_project_option, err, load_config, project_of
from portico.text import visible

if TYPE_CHECKING:
    from portico.chat.conversation import Chat
    from portico.chat.events import Event, Usage
    from portico.chat.host import ChatHost
    from portico.runtime.hub import Hub

FINISHED_OK = ("end_turn", "max_tokens", "direct", "refusal")


def register(groups: Groups) -> None:
    p = groups.top.add_parser(
        "chat",
        help="chat with a model that uses your servers' tools (or run slash commands)",
        description="Without -q on a terminal: an interactive chat (Ctrl+C stops a turn, "
        "Ctrl+D leaves). /help lists the slash commands; with no model configured they run "
        "in direct mode.",
    )
    p.add_argument(
        "-q",
        "--question",
        metavar="TEXT",
        help="ask one question (or run one slash command) and print the answer",
    )
    p.add_argument("--model", metavar="PROVIDER/MODEL", help="the model to use")
    p.add_argument(
        "--system",
        metavar="TEXT",
        help="this chat's own system prompt (added after Portico's; \"\" clears it); "
        "kept with the chat, like the settings below",
    )
    p.add_argument("--temperature", metavar="T", help='0 to 2 ("": the provider\'s)')
    p.add_argument("--max-tokens", metavar="N", help="longest answer in tokens")
    p.add_argument(
        "--reasoning-effort",
        metavar="EFFORT",
        help="minimal, low, medium or high (OpenAI-compatible providers)",
    )
    p.add_argument(
        "--thinking-budget",
        metavar="N",
        help="extended thinking tokens, at least 1024 (Anthropic providers)",
    )
    p.add_argument(
        "--show-thinking",
        action="store_true",
        help="print the model's thinking (reasoning) dimmed as it streams; without it, "
        "one dimmed line says how long it was",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the events as JSON lines (with -q), or the list as JSON (with --list)",
    )
    p.add_argument(
        "--yolo",
        action="store_true",
        help="run tool calls without asking (spend limits still apply)",
    )
    p.add_argument(
        "--list", action="store_true", help="the stored chats, pinned first, then newest first"
    )
    p.add_argument(
        "--archived", action="store_true", help="with --list: the archived chats instead"
    )
    p.add_argument("--rename", nargs=2, metavar=("ID", "TITLE"), help="give a chat a title")
    p.add_argument("--pin", metavar="ID", help="pin a chat (pinned chats are listed first)")
    p.add_argument("--unpin", metavar="ID", help="unpin a chat")
    p.add_argument(
        "--archive", metavar="ID", help="archive a chat (it leaves the list; search finds it)"
    )
    p.add_argument("--unarchive", metavar="ID", help="bring an archived chat back to the list")
    p.add_argument(
        "--delete",
        metavar="ID",
        help="delete a chat; --restore ID brings it back within a day, then it is gone",
    )
    p.add_argument("--restore", metavar="ID", help="undo the delete of a chat")
    p.add_argument("--search", metavar="WORDS", help="find stored chats by their text")
    p.add_argument("--resume", metavar="ID", help="continue a stored chat (an id prefix works)")
    p.add_argument(
        "--branch",
        metavar="N",
        type=int,
        help="with --resume: continue on branch N. Each edit of a message or regenerated "
        "answer makes a branch; they are numbered in the order they were made: 1 is the "
        "chat as first written, 2 the first edit or regenerate, and so on (a number never "
        "changes). --resume shows the branch it opens and how many there are",
    )
    p.add_argument("--export", metavar="ID", help="print a stored chat")
    p.add_argument(
        "--format", choices=("md", "json"), default="md", help="--export format (default md)"
    )
    add_project_option(p)
    p.set_defaults(handler=cmd_chat)


_LIST_OPS = ("rename", "pin", "unpin", "archive", "unarchive", "delete", "restore")


def cmd_chat(args: argparse.Namespace) -> int:
    if any(getattr(args, op) for op in _LIST_OPS):
        return asyncio.run(_list_op(args))
    if args.list or args.search or args.export:
        return asyncio.run(_stored(args))
    if args.question is None and not (sys.stdin.isatty() and sys.stdout.isatty()):
        err("no terminal to chat on: ask one question with -q TEXT (see --help)")
        return 2
    return asyncio.run(_chat(args))


# --- stored chats ------------------------------------------------------------------------


async def _list_op(args: argparse.Namespace) -> int:
    """One change to the chat list: rename, pin, archive, delete or restore."""
    from portico.chat.store import KEEP_DELETED, ChatStore, StoreError

    store = ChatStore()
    try:
        if args.rename:
            full = await store.resolve_id(args.rename[0])
            await store.rename(full, args.rename[1])
            print(f"Renamed chat {full[:8]} to {visible(args.rename[1].strip())!r}.")
        elif args.pin or args.unpin:
            full = await store.resolve_id(args.pin or args.unpin)
            await store.set_pinned(full, bool(args.pin))
            print(f"{'Pinned' if args.pin else 'Unpinned'} chat {full[:8]}.")
        elif args.archive or args.unarchive:
            full = await store.resolve_id(args.archive or args.unarchive)
            await store.set_archived(full, bool(args.archive))
            if args.archive:
                print(f"Archived chat {full[:8]} (`portico chat --list --archived` lists it).")
            else:
                print(f"Chat {full[:8]} is back in the list.")
        elif args.delete:
            full = await store.resolve_id(args.delete)
            await store.delete(full)
            hours = round(KEEP_DELETED / 3600)
            print(
                f"Deleted chat {full[:8]}. Undo with `portico chat --restore {full[:8]}` "
                f"(within {hours} hours; then it is gone for good)."
            )
        else:
            full = await store.resolve_id(args.restore, deleted=True)
            await store.restore(full)
            print(f"Restored chat {full[:8]}.")
        return 0
    except StoreError as exc:
        err(str(exc))
        return 1
    finally:
        await store.close()


async def _stored(args: argparse.Namespace) -> int:
    import time

    from portico.chat.messages import summary_json
    from portico.chat.store import ChatStore, StoreError

    store = ChatStore()
    try:
        await store.import_json_once()
        if args.export:
            full = await store.resolve_id(args.export)
            sys.stdout.write(await store.export(full, args.format))
            return 0
        if args.search:
            hits = await store.search(args.search)
            if args.json:
                print(json.dumps([h.__dict__ for h in hits], indent=2, ensure_ascii=False))
                return 0
            for hit in hits:
                print(f"{hit.conversation_id[:8]}  {hit.title or 'Untitled'}: {hit.snippet}")
            if not hits:
                print(f"No chat contains {args.search!r}.")
            return 0
        rows = await store.list(archived=args.archived)
        if args.json:
            print(json.dumps([summary_json(r) for r in rows], indent=2, ensure_ascii=False))
            return 0
        if not rows:
            print(
                "No archived chats."
                if args.archived
                else "No chats yet. Start one with `portico chat`."
            )
        for row in rows:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.updated))
            model = row.model or "direct"
            pin = "pinned  " if row.pinned else ""
            print(
                f"{row.id[:8]}  {when}  {pin}{visible(row.title) or 'Untitled'}  "
                f"({row.message_count} messages, {model})"
            )
        return 0
    except StoreError as exc:
        err(str(exc))
        return 1
    finally:
        await store.close()


# --- a chat ------------------------------------------------------------------------------


class Renderer:
    """Events on a terminal: the answer on stdout, tool calls and notes on stderr."""

    def __init__(
        self,
        out: TextIO,
        note: TextIO,
        as_json: bool,
        direct_results: bool,
        echo: bool = False,
        show_thinking: bool = False,
    ) -> None:
        self.echo = echo  # print the message the core added (a rendered /server:prompt)
        self.out = out
        self.note = note
        self.as_json = as_json
        self.direct_results = direct_results
        self.names: dict[str, str] = {}
        self.task_states: dict[str, str] = {}  # call id -> its task's last status
        self.mid_line = False
        self.outcome: Event | None = None
        self.usage: Usage | None = None  # the turn's last, for its cost line
        self.moved_to: str | None = None  # /new or /branch: the chat to go on in
        self.retry_with = "/retry"  # how this face runs a failed turn again
        self.show_thinking = show_thinking
        self.thought = ""  # this round's thinking so far (shown when the round goes on)
        self.dim = _dims(note)

    def _dimmed(self, text: str) -> str:
        """``text`` made safe to print (``visible``), then dimmed on a terminal."""
        text = visible(text, multiline=True)
        return f"\x1b[2m{text}\x1b[0m" if self.dim else text

    def _think(self, delta: str) -> None:
        if self.show_thinking:
            if not self.thought:
                self._say(self._dimmed("Thinking:"), raw=True)
            self.note.write(self._dimmed(delta))
            self.note.flush()
        self.thought += delta

    def _end_thinking(self) -> None:
        """The round's thinking ends (its answer, a tool call or the turn's end began):
        a newline after the shown thought, or the one collapsed line."""
        thought, self.thought = self.thought, ""
        if not thought:
            return
        if self.show_thinking:
            self.note.write("\n")
            self.note.flush()
            return
        words = len(thought.split())
        line = f"▸ Thinking ({words} word{'s' if words != 1 else ''}; --show-thinking shows it)"
        self._say(self._dimmed(line), raw=True)

    def _say(self, text: str, raw: bool = False) -> None:
        """A note line (``raw``: made safe to print already)."""
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False
        self.note.write((text if raw else visible(text, multiline=True)) + "\n")
        self.note.flush()

    def show(self, event: Event) -> None:
        from portico.chat import events as ev

        if isinstance(event, ev.TurnFinished | ev.TurnFailed):
            self.outcome = event
        if isinstance(event, ev.ConversationChanged):
            self.moved_to = event.conversation_id
        if self.as_json:
            self.out.write(json.dumps(ev.event_to_json(event), ensure_ascii=False) + "\n")
            self.out.flush()
            return
        if isinstance(event, ev.ReasoningDelta):
            self._think(event.text)
            return
        self._end_thinking()
        if isinstance(event, ev.TextDelta):
            self.out.write(visible(event.text, multiline=True))
            self.out.flush()
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, ev.ToolCallStarted):
            self.names[event.id] = event.qualified_name
            args = json.dumps(dict(event.arguments), ensure_ascii=False)
            self._say(f"→ {event.qualified_name} {args}")
        elif isinstance(event, ev.ToolCallProgress):
            total = f"/{event.total:g}" if event.total else ""
            message = f" {event.message}" if event.message else ""
            self._say(f"  … {event.progress:g}{total}{message}")
        elif isinstance(event, ev.ToolCallTask):
            if self.task_states.get(event.id) != event.status:  # progress shows the rest
                self.task_states[event.id] = event.status
                self._say(f"  task {event.task_id}: {event.status.replace('_', ' ')}")
        elif isinstance(event, ev.ToolCallFinished):
            name = self.names.get(event.id, "tool")
            if event.result is not None and self.direct_results:
                self._say(f"← {name}: {'error' if event.result.is_error else event.outcome}")
                self.out.write(visible(event.result.text(), multiline=True) + "\n")
                self.out.flush()
            elif event.result is not None:
                state = "error" if event.result.is_error else "ok"
                self._say(f"← {name}: {state} ({event.duration:.1f} s)")
            else:
                self._say(f"← {name}: {event.outcome}: {event.error}")
        elif isinstance(event, ev.Notice):
            self._say(event.text)
        elif isinstance(event, ev.AttachmentAdded):
            what = (
                f"an image, {event.mime_type}"
                if (event.mime_type or "").startswith("image/") and not event.size
                else f"{event.size} characters"
            )
            self._say(f"Attached {event.uri} from {event.server} ({what})")
        elif isinstance(event, ev.UserMessageAdded) and self.echo:
            self.out.write(event.text + "\n")  # a rendered prompt is the command's output
            self.out.flush()
        elif isinstance(event, ev.TurnFailed):
            self._say(f"portico: {event.error}")
            if event.message_id:  # a model turn: the question is kept, it can run again
                wait = f"wait {event.retry_after:g} s, then " if event.retry_after else ""
                self._say(f"(the question is kept: {wait}retry with {self.retry_with})")
        elif isinstance(event, ev.Usage):
            self.usage = event
        elif isinstance(event, ev.TurnFinished):
            if self.mid_line:
                self.out.write("\n")
                self.out.flush()
                self.mid_line = False
            self._say_cost()
            if event.stop_reason == "stopped":
                self._say("(stopped)")
            elif event.stop_reason == "max_tokens":
                self._say("(the answer was cut at the model's max_tokens)")

    def _say_cost(self) -> None:
        """The answer's tokens and cost, and the chat's cost, when the model has a price."""
        usage, self.usage = self.usage, None
        if usage is None or usage.turn_cost is None or usage.total_cost is None:
            return
        self._say(
            f"({usage.turn_input_tokens:,} in · {usage.turn_output_tokens:,} out · "
            f"{money(usage.turn_cost, usage.currency)}; this chat so far: "
            f"{money(usage.total_cost, usage.currency)})"
        )

    @property
    def ok(self) -> bool:
        from portico.chat.events import TurnFinished

        return isinstance(self.outcome, TurnFinished) and self.outcome.stop_reason in FINISHED_OK


def _dims(stream: TextIO) -> bool:
    """Whether ``stream`` shows ANSI dim: a terminal, and NO_COLOR not set."""
    import os

    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


async def _start(args: argparse.Namespace, interactive: bool) -> tuple[Hub, ChatHost, Any]:
    from portico.chat.host import ChatHost
    from portico.policy.prompters import NonInteractivePrompter
    from portico.runtime.events import EventBus
    from portico.services import build_services

    config = await asyncio.to_thread(load_config, args)
    if interactive:
        from portico.cli.terminal_prompter import TerminalPrompter

        prompter: Any = TerminalPrompter()
    else:
        prompter = NonInteractivePrompter()
    services = build_services(prompter, auth_prompter=NonInteractivePrompter())
    services.configure(config)
    hub = services.start_hub(EventBus(), yolo=args.yolo)
    summary = await hub.apply(config)
    if summary:
        print(summary, file=sys.stderr)
    host = ChatHost(
        hub,
        services.guard,
        prompter,
        config=config,
        models=services.models,
        project=project_of(args),
    )
    return hub, host, services


async def _open_chat(host: ChatHost, args: argparse.Namespace) -> Chat:
    from portico.chat.conversation import ChatError

    if args.branch is not None and not args.resume:
        raise ChatError("--branch N goes with --resume ID (the chat whose branch to continue)")
    if args.resume:
        chat = await host.open(args.resume)
        if args.branch is not None:
            try:
                await chat.switch_branch(args.branch)
            except ChatError as exc:
                raise ChatError(f"{exc}:\n{branch_listing(chat)}") from None
        if args.model:
            await chat.set_model(args.model)
    else:
        chat = await host.new(args.model)
    await _apply_settings(chat, args)
    return chat


async def _apply_settings(chat: Chat, args: argparse.Namespace) -> None:
    """The --system / --temperature / ... flags onto the chat's stored settings."""
    from portico.chat.conversation import ChatError
    from portico.chat.settings import SettingsError, parse

    given = {
        "system_prompt": args.system,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "reasoning_effort": args.reasoning_effort,
        "thinking_budget": args.thinking_budget,
    }
    if all(v is None for v in given.values()):
        return
    try:
        settings = parse(**given, base=chat.settings)
    except SettingsError as exc:
        raise ChatError(str(exc)) from None
    await chat.set_settings(settings)


def branch_listing(chat: Chat) -> str:
    """One line per branch: its number and the last question on it."""
    lines = []
    for number, leaf in enumerate(chat.branches(), 1):
        path = chat.path_to(leaf.id)
        asked = next((m.text for m in reversed(path) if m.role == "user"), "")
        shown = " ".join(asked.split())
        shown = shown[:60] + ("…" if len(shown) > 60 else "")
        mark = "*" if number == chat.branch else " "
        lines.append(f" {mark} {number}: {visible(shown)} ({len(path)} messages)")
    return "\n".join(lines)


async def _turn(chat: Chat, text: str, renderer: Renderer) -> None:
    """One turn; Ctrl+C (SIGINT) stops it, not the program."""
    loop = asyncio.get_running_loop()
    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, chat.stop)
        installed = True
    try:
        async for event in chat.send(text):
            renderer.show(event)
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


async def _chat(args: argparse.Namespace) -> int:
    from portico.chat.conversation import ChatError

    interactive = args.question is None
    hub, host, services = await _start(args, interactive)
    try:
        try:
            chat = await _open_chat(host, args)
        except ChatError as exc:
            err(str(exc))
            return 2
        line = await host.project_line(chat)
        if line and not args.json:
            print(visible(line), file=sys.stderr)
        if not interactive:
            from portico.chat.commands import parse

            direct = chat.model is None or args.question.lstrip().startswith("/")
            echo = parse(args.question).kind == "prompt"
            renderer = Renderer(sys.stdout, sys.stderr, args.json, direct, echo, args.show_thinking)
            renderer.retry_with = f"`portico chat --resume {chat.id[:8]} -q /retry`"
            await _turn(chat, args.question, renderer)
            if not args.json:
                count = len(chat.branches())
                where = f", branch {chat.branch} of {count}" if count > 1 else ""
                print(
                    f"(chat {chat.id[:8]}{where}; continue it with "
                    f"`portico chat --resume {chat.id[:8]}`)",
                    file=sys.stderr,
                )
            return 0 if renderer.ok else 1
        return await _interactive(host, chat, args)
    finally:
        await host.close()
        await services.models.aclose()
        await hub.close()


def _history_file() -> Path:
    from portico.paths import paths

    return paths().state_dir / "chat_history"


async def _interactive(host: ChatHost, chat: Chat, args: argparse.Namespace) -> int:
    from portico.chat.conversation import ChatError

    history = _setup_readline(host, lambda: chat)
    count = len(chat.branches())
    branch = f", branch {chat.branch} of {count} (--branch N picks another)" if count > 1 else ""
    print(
        f"Chat {chat.id[:8]} with {chat.model or 'no model (direct mode)'}{branch}. /help "
        "lists the commands; Ctrl+C stops a turn, Ctrl+D leaves."
    )
    for message in chat.messages[-6:]:
        who = "you" if message.role == "user" else "assistant"
        print(f"[{who}] {message.text[:500]}")
    try:
        while True:
            try:
                line = await asyncio.to_thread(input, "› ")
            except EOFError:
                print()
                return 0
            if not line.strip():
                continue
            if line.strip() in ("/exit", "/quit"):
                return 0
            from portico.chat.commands import parse

            echo = parse(line).kind == "prompt"
            renderer = Renderer(sys.stdout, sys.stderr, args.json, True, echo, args.show_thinking)
            try:
                await _turn(chat, line, renderer)
            except ChatError as exc:
                err(str(exc))
                continue
            if renderer.moved_to:
                chat = await host.open(renderer.moved_to)
                print(f"Now in chat {chat.id[:8]}.")
    finally:
        if history is not None:
            with contextlib.suppress(OSError):
                import readline

                history.parent.mkdir(parents=True, exist_ok=True)
                readline.write_history_file(str(history))


def _setup_readline(host: ChatHost, current: Any) -> Path | None:
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input() still works
        return None
    path = _history_file()
    with contextlib.suppress(OSError):
        readline.read_history_file(str(path))
    readline.set_history_length(1000)

    def complete(text: str, state: int) -> str | None:
        buffer = readline.get_line_buffer()
        options = current().completions(buffer if buffer.startswith("/") else text)
        return options[state] if state < len(options) else None

    readline.set_completer_delims(" \t\n")
    readline.set_completer(complete)
    readline.parse_and_bind("tab: complete")
    return path
