"""The memory's starting numbers that are also settings (``AGENT_MEMORY_K`` and the others below), one place for
each: the settings (``agent.config``, a leaf that knows nothing of the engine) declare them as their defaults, and
the memory's policy (``agent.memory.policy``, which knows nothing of the settings) starts from the same. A leaf:
it imports nothing, so ``agent --version`` and ``agent config`` load no part of the engine to show them. A
similarity threshold has no number here: unset, it is the embedder's calibrated one."""

from __future__ import annotations

MEMORY_K = 5  # memories injected per turn at most
MEMORY_TOKENS = 800  # token budget of the memory block
# Token budget of the profile, its 76-token header included: at 150 a user's second or third value kept as said
# ("work pattern: from this month i work 10 to 18, ...") no longer fitted, and left every request.
PROFILE_TOKENS = 300
MEMORY_CAPACITY = 10_000  # memories kept per user; the least recently seen go past it
WRITES_PER_SESSION = 50  # memory writes in one session at most (a guard against gradual poisoning)
