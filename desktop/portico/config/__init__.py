"""Config files: schema, the TOML and YAML dialects, scopes, round-trip edits."""

from portico.config.load import keep_previous, load, load_files, parse_text
from portico.config.model import Config, Diagnostic, Dialect, Scope, ServerSpec

__all__ = [
    "Config",
    "Diagnostic",
    "Dialect",
    "Scope",
    "ServerSpec",
    "keep_previous",
    "load",
    "load_files",
    "parse_text",
]
