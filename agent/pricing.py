"""What a reply cost, estimated: its tokens times OpenAI's published price per million tokens.

Shown only where the price is known to apply: a model of the table below, asked of OpenAI's own API (no base URL,
or api.openai.com). A local server that answers to ``gpt-4o-mini`` costs nothing, and another provider's prices
are not these. It is an estimate and says so: the price of cached input tokens, batch and priority tiers, and any
change of price after ``PRICES_DATE`` are not in it, and where the server sent no usage the tokens are counted here.

The table is data, dated: USD per million input and output tokens, standard tier, as OpenAI publishes them at
openai.com/api/pricing. This machine cannot reach that page; the figures were cross-checked against several public
price tables on ``PRICES_DATE``. A dated snapshot (``gpt-4o-mini-2024-07-18``) costs what its model costs, unless
the table names it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

PRICES_DATE = "2026-12-02"
# model: (input, output), USD per 1M tokens
PRICES: dict[str, tuple[float, float]] = {
    "gpt-5.2": (1.75, 14.00),
    "gpt-5.1": (1.25, 10.00),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-2024-05-13": (5.00, 15.00),
    "gpt-4o-mini": (0.15, 0.60),
    "o4-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o1": (15.00, 60.00),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-4": (30.00, 60.00),
    "gpt-3.5-turbo": (0.50, 1.50),
}
OPENAI_HOST = "api.openai.com"
_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens of one model."""

    model: str
    input: float
    output: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input + tokens_out * self.output) / 1_000_000


def price(model: str) -> Price | None:
    """The published price of ``model``, or of the model a dated snapshot of it is; None for a model not in the
    table."""
    for name in (model, _SNAPSHOT.sub("", model)):
        if name in PRICES:
            return Price(name, *PRICES[name])
    return None


def priced_endpoint(base_url: str | None) -> bool:
    """Whether requests go to OpenAI's own API, where the table's prices apply."""
    return base_url is None or (urlsplit(base_url).hostname or "").lower() == OPENAI_HOST


def cost_note(price: Price, tokens_in: int, tokens_out: int) -> str:
    """``~$0.0012 (estimate)``, with enough digits to show a cheap reply as more than nothing."""
    cost = price.cost(tokens_in, tokens_out)
    shown = f"{cost:.4f}" if cost >= 0.0001 or cost == 0 else f"{cost:.6f}"
    return f"~${shown} (estimate, {price.model} prices of {PRICES_DATE})"
