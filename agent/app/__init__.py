"""The use cases of the memory commands, one home for each: the command line (``agent.cli``) and the chat's slash
commands (``agent.ui.commands``) both call these and keep only what they say and how they ask.

``selectors`` resolves what the user typed (ids, id prefixes, listing numbers) and says what needs asking about;
``editing`` and ``forgetting`` are the two writes a user starts by hand; ``queries`` are the reads that run where
the memory service lives (the chat's memory thread, or inline in a command); ``stats``, ``evict`` and ``machines``
are the command line's maintenance views; ``maintenance`` rebuilds the index and finishes forgets cut short;
``transfer`` exports and imports; ``doctor`` checks a setup over the probes the composition root hands it.
``memory`` and ``profile`` name for the front ends what they hold and show (the service's type, a profile entry
and its key's label), so no front end imports ``agent.memory`` (an import-linter contract in pyproject.toml).
"""
