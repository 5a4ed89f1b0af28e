"""agent: a terminal chat agent that remembers its user.

The package is layered so that dependencies point inward:

- ``domain``, ``ports``, ``memory/`` and ``conversation``: pure logic, no I/O of their own;
- ``adapters/``: OpenAI, Chroma, the local ONNX model and the SQLite ledger, behind the Protocols in ``ports``;
- ``ui/``: the terminal (rich, prompt_toolkit);
- ``wiring``: the one place that builds adapters from settings; ``cli``: the typer app.
"""

__version__ = "0.1.0"
