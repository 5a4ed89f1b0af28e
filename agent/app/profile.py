"""The profile as a front end shows it: an entry (``Entry``: a key, its value, the memory that stated it) and the
label of its key ("allergy", a preference's topic). ``queries.profile`` reads the entries; how they are derived
from the memories is policy (``agent.memory.profile``), which no front end imports."""

from __future__ import annotations

from agent.memory.profile import Entry, label

__all__ = ["Entry", "label"]
