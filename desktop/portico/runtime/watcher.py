"""Reload the config when its files change: poll their mtimes, debounce, apply.

Polling every ~1 s in one asyncio task costs nothing measurable and needs no extra
dependency; it also notices files that are created or deleted (a new project file).
Editors often write a file in several steps (truncate, write, rename), so a change is
applied only after the files have been quiet for ``debounce`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from portico import paths as paths_mod
from portico.config.model import Config

log = logging.getLogger(__name__)

Stamp = tuple[int, int] | None  # (mtime_ns, size), None when the file is absent


def config_files(project: Path | None) -> list[Path]:
    """Every file the loader reads (existing or not): global and project, both dialects."""
    p = paths_mod.paths()
    files = [p.global_toml, p.global_yaml]
    if project is not None:
        files += [paths_mod.project_toml(project), paths_mod.project_yaml(project)]
    return files


def _stamp(path: Path) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _default_loader(project: Path | None) -> Config:
    from portico.config import load

    return load(project)


class ConfigWatcher:
    """Calls ``apply(load(project))`` after the config files changed and settled."""

    def __init__(
        self,
        apply: Callable[[Config], Awaitable[object]],
        *,
        project: Path | None = None,
        files: Sequence[Path] | None = None,
        loader: Callable[[Path | None], Config] | None = None,
        interval: float = 1.0,
        debounce: float = 0.5,
        previous: Config | None = None,
    ) -> None:
        self._apply = apply
        self._project = project
        self._files = list(files) if files is not None else config_files(project)
        self._loader = loader or _default_loader
        self.interval = interval
        self.debounce = debounce
        self._task: asyncio.Task[None] | None = None
        self.reloads = 0
        self._seen: list[Stamp] | None = None  # the files as last loaded by us or by a face
        self.previous = previous  # the last config applied (see keep_previous)

    def _snapshot(self) -> list[Stamp]:
        return [_stamp(f) for f in self._files]

    def start(self) -> None:
        if self._task is None:
            # Snapshot now, not when the task first runs: an edit made right after
            # start() must count as a change.
            seen = self._seen = self._snapshot()
            self._task = asyncio.create_task(self._run(seen), name="config-watcher")

    def acknowledge(self, config: Config) -> None:
        """The files as they are now were loaded elsewhere (the editor's save hands its
        config to the session): do not load them again for this change."""
        self._seen = self._snapshot()
        self.previous = config

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, seen: list[Stamp]) -> None:
        while True:
            await asyncio.sleep(self.interval)
            now = await asyncio.to_thread(self._snapshot)
            if now == seen or now == self._seen:
                seen = now
                continue
            # Wait until the files are quiet for `debounce` seconds.
            while True:
                await asyncio.sleep(self.debounce)
                later = await asyncio.to_thread(self._snapshot)
                if later == now:
                    break
                now = later
            seen = now
            if now == self._seen:  # acknowledged while it settled
                continue
            self._seen = now
            try:
                from portico.config import keep_previous

                config = await asyncio.to_thread(self._loader, self._project)
                # A half-typed file that no longer parses keeps its servers running.
                config = keep_previous(config, self.previous)
                for diag in config.diagnostics:
                    log.warning("%s", diag)
                await self._apply(config)
                self.previous = config
                self.reloads += 1
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("applying the changed config failed; keeping the running servers")
