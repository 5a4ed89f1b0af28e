"""What the model server serves: ``GET /v1/models`` through the OpenAI SDK, for ``/model`` in the chat.

One request, not retried (the user typed a command and waits for its answer), with the chat's timeout; any failure
is one ``ChatError`` line that says whether the server lacks the route (some OpenAI-compatible servers do) or could
not be reached, and never carries the API key.
"""

from __future__ import annotations

from agent.adapters.openai_client import Endpoint, make_client, redact
from agent.errors import ChatError


def served_models(endpoint: Endpoint) -> list[str]:
    """The ids of the models the server lists, sorted; ``ChatError`` when it cannot say."""
    import openai

    client = make_client(endpoint).with_options(max_retries=0)
    try:
        return sorted(model.id for model in client.models.list())
    except openai.APIStatusError as exc:
        if exc.status_code in {404, 405, 501}:
            raise ChatError(f"the server does not list its models ({exc.status_code} on /models)") from None
        raise ChatError(f"the server refused to list its models ({exc.status_code}: "
                        f"{redact(exc.message, endpoint.api_key)})") from None
    except openai.APIError as exc:
        raise ChatError(f"could not ask the server for its models ({redact(exc.message, endpoint.api_key)})") from None
