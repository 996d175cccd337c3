"""Where Portico keeps its files.

platformdirs decides per platform; ``PORTICO_HOME=<dir>`` puts config, state, cache and
logs under that one directory (tests use it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from portico import APP_NAME

HOME_ENV = "PORTICO_HOME"
PROJECT_DIR_NAME = ".portico"
TOML_NAME = "mcp.toml"
YAML_NAME = "config.yaml"


def find_project(start: Path | None = None) -> Path | None:
    """The nearest folder from ``start`` (default: the cwd) up that has ``.portico/``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_DIR_NAME).is_dir():
            return folder
    return None


@dataclass(frozen=True)
class Paths:
    config_dir: Path
    state_dir: Path
    cache_dir: Path
    log_dir: Path

    @property
    def global_toml(self) -> Path:
        return self.config_dir / TOML_NAME

    @property
    def global_yaml(self) -> Path:
        return self.config_dir / YAML_NAME

    @property
    def schema_cache_dir(self) -> Path:
        return self.cache_dir / "schemas"

    @property
    def image_cache_dir(self) -> Path:
        return self.cache_dir / "images"


def paths() -> Paths:
    """The directories for this process, read from the environment on every call."""
    home = os.environ.get(HOME_ENV)
    if home:
        root = Path(home).expanduser().resolve()
        return Paths(
            config_dir=root / "config",
            state_dir=root / "state",
            cache_dir=root / "cache",
            log_dir=root / "logs",
        )
    return Paths(
        config_dir=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
        state_dir=Path(platformdirs.user_state_dir(APP_NAME, appauthor=False)),
        cache_dir=Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)),
        log_dir=Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
    )


def project_config_dir(project: Path) -> Path:
    return project / PROJECT_DIR_NAME


def project_toml(project: Path) -> Path:
    return project_config_dir(project) / TOML_NAME


def project_yaml(project: Path) -> Path:
    return project_config_dir(project) / YAML_NAME
