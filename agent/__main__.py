"""``python -m agent`` is the ``agent`` command."""

from agent.cli import main

main()
