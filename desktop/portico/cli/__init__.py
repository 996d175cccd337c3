"""The terminal face: ``portico ...`` commands and the terminal Prompter."""
