"""Config files: schema, the TOML and YAML dialects, scopes, round-trip edits."""
