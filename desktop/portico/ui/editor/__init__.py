"""The config editor: one window over every config file of both scopes."""
