"""The selected server's tabs (Overview, Tools, Prompts, Resources, Log) and its actions."""
