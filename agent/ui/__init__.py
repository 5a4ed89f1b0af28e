"""The terminal front end: the REPL, its commands and output (rich, prompt_toolkit), on the ports only."""
