"""The fences of what the model reads as information, never as instructions, and the escaping that keeps each
closed: the recalled memories, the user's profile and the rolling summary of the conversation.

Why one module: a fence holds only as long as nothing inside it can close it, and the text inside comes from the
user's past words or from a model. So the names of every fence and the one escape (``inert``) live together: each
fenced text is escaped against every fence's name, with any separator and any bracket, and the gate refuses to
store a text that names one (``agent.memory.refusal``).
"""

from __future__ import annotations

import re

from agent.memory.canonical import canonical

FENCE_TAG = "memory_notes"  # the recalled memories (``agent.memory.context``)
PROFILE_TAG = "user_profile"  # the user's profile facts (``agent.memory.context``)
# The fence of the rolling summary of a conversation (``agent.conversation``): derived text, never instructions.
SUMMARY_TAG = "conversation_summary"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SEPARATORS = re.compile(r"[\u2028\u2029]")  # a line or paragraph separator parts words: a space, not nothing
_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")
# A fence's name with any separator: without its name, no bracket of any shape can close a fence.
_FENCE_NAMES = re.compile("|".join(r"[\W_]*".join(tag.split("_")) for tag in (FENCE_TAG, SUMMARY_TAG, PROFILE_TAG)),
                         re.IGNORECASE)


def inert(text: str) -> str:
    """Text that cannot close a fence: lookalikes folded (NFKC), control characters other than line breaks
    removed, line and paragraph separators made spaces, fence names taken out, angle brackets replaced. Invisible
    characters go too (``agent.memory.canonical``): what the model reads of a memory is what a listing shows,
    for a memory stored before memories were made canonical as well."""
    text = _CONTROL.sub("", _SEPARATORS.sub(" ", canonical(text)))
    text = _FENCE_NAMES.sub("fence", text)
    return text.replace("<", "‹").replace(">", "›")


def defang(text: str) -> str:
    """One line of inert text: what ``inert`` does, and no line breaks."""
    return inert(_LINE_BREAKS.sub(" / ", text.strip()))
