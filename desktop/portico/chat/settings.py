"""One chat's own model settings: a system prompt, temperature, max tokens and reasoning.

Stored with the chat (the store's ``chat_settings`` table, as JSON) and applied to every
request of its turns over the provider's settings. ``reasoning_effort`` is sent only to an
``openai`` provider (``reasoning_effort``), ``thinking_budget`` only to an ``anthropic``
one (``thinking: {type: enabled, budget_tokens}``); the other kind ignores it, and
:func:`applies` says which apply so a face can show it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from portico.config.models_config import MAX_TOKENS_LIMIT

REASONING_EFFORTS = ("minimal", "low", "medium", "high")
THINKING_MIN = 1024  # the Messages API refuses a smaller budget_tokens
SYSTEM_PROMPT_LIMIT = 100_000  # characters


class SettingsError(ValueError):
    """A setting out of range; the message names the setting and what it takes."""


@dataclass(frozen=True)
class ChatSettings:
    system_prompt: str | None = None  # added to Portico's own lines, after them
    temperature: float | None = None  # None: the provider's (or the server's default)
    max_tokens: int | None = None  # None: the provider's max_tokens
    reasoning_effort: str | None = None  # openai providers
    thinking_budget: int | None = None  # anthropic providers: extended thinking tokens

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem:
            raise SettingsError(problem)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_json(cls, data: Any) -> ChatSettings:
        """Settings read back from the store; a value this Portico does not accept (an
        older or newer one) is dropped rather than failing the chat's load."""
        if not isinstance(data, dict):
            return cls()
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for name, value in data.items():
            if name in known:
                try:
                    cls(**{name: value})
                except (SettingsError, TypeError):
                    continue
                values[name] = value
        try:
            return cls(**values)
        except SettingsError:
            return cls(**{k: v for k, v in values.items() if k != "thinking_budget"})

    @property
    def empty(self) -> bool:
        return not self.to_json()


def _problem(s: ChatSettings) -> str | None:
    if s.system_prompt is not None:
        if not isinstance(s.system_prompt, str):
            return "system prompt: must be text"
        if len(s.system_prompt) > SYSTEM_PROMPT_LIMIT:
            return f"system prompt: at most {SYSTEM_PROMPT_LIMIT:,} characters"
    if s.temperature is not None:
        t = s.temperature
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
            return f"temperature: must be a number between 0 and 2, not {t!r}"
        if not 0 <= t <= 2:
            return f"temperature: must be between 0 and 2, not {t}"
    if s.max_tokens is not None:
        m = s.max_tokens
        if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= MAX_TOKENS_LIMIT:
            return f"max tokens: must be a whole number from 1 to {MAX_TOKENS_LIMIT:,}, not {m!r}"
    if s.reasoning_effort is not None and s.reasoning_effort not in REASONING_EFFORTS:
        return (
            f"reasoning effort: one of {', '.join(REASONING_EFFORTS)}, not {s.reasoning_effort!r}"
        )
    if s.thinking_budget is not None:
        b = s.thinking_budget
        if isinstance(b, bool) or not isinstance(b, int) or not b >= THINKING_MIN:
            return f"thinking budget: whole tokens, at least {THINKING_MIN:,}, not {b!r}"
        if s.max_tokens is not None and b >= s.max_tokens:
            return (
                f"thinking budget: must be less than max tokens ({s.max_tokens:,}): the "
                "thinking is part of the answer's tokens"
            )
        if s.temperature is not None:
            return (
                "thinking budget: extended thinking takes no temperature; clear the "
                "temperature or the thinking budget"
            )
    return None


def applies(settings: ChatSettings, kind: str) -> dict[str, bool]:
    """Which reasoning setting reaches a provider of ``kind`` (``openai``/``anthropic``)."""
    return {
        "reasoning_effort": kind == "openai" and settings.reasoning_effort is not None,
        "thinking_budget": kind == "anthropic" and settings.thinking_budget is not None,
    }


def parse(
    *,
    system_prompt: str | None = None,
    temperature: str | float | None = None,
    max_tokens: str | int | None = None,
    reasoning_effort: str | None = None,
    thinking_budget: str | int | None = None,
    base: ChatSettings | None = None,
) -> ChatSettings:
    """Settings from what a person typed (a flag, a form field): "" clears a setting,
    None keeps ``base``'s. Raises SettingsError naming the setting."""
    current = (base or ChatSettings()).to_json()

    def put(name: str, value: Any, convert: Any) -> None:
        if value is None:
            return
        if isinstance(value, str):
            value = value.strip()
            if not value:
                current.pop(name, None)
                return
            try:
                value = convert(value)
            except ValueError:
                label = name.replace("_", " ")
                raise SettingsError(f"{label}: {value!r} is not a number") from None
        current[name] = value

    if system_prompt is not None:
        if system_prompt.strip():
            current["system_prompt"] = system_prompt
        else:
            current.pop("system_prompt", None)
    put("temperature", temperature, float)
    put("max_tokens", max_tokens, int)
    put("reasoning_effort", reasoning_effort, str.lower)
    put("thinking_budget", thinking_budget, int)
    return ChatSettings(**current)
