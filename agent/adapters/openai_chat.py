"""``ChatModel`` over the OpenAI SDK: streamed chat completions, retries the user can see, errors that say what to fix.

Why a retry loop of our own: the SDK retries 429, 5xx and timeouts silently, so a user would stare at a frozen
prompt for up to two minutes. Here the client runs with ``max_retries=0`` and each retry is announced through
``on_retry`` (with its reason and delay) before the wait. A ``Retry-After`` longer than ``max_wait`` fails at
once: that is a quota, not a hiccup. 400, 401, 403, 404, 405 and 501 are never retried and name the setting to
fix (405 and 501 come from a web server that is not a model server: the base URL is wrong).

Only the opening of a stream is retried. Once text has arrived, a broken connection raises ``ChatRetryable``
and the caller keeps the partial reply; the user decides whether to ``/retry``.

The API key never leaves in an error: every message built from a server's answer is redacted
(``openai_client.redact``), and the SDK's exception is not chained onto ours (``--debug`` prints the whole chain,
and the SDK's message quotes the server's, which may echo the key); its redacted text goes to the debug log.
"""

from __future__ import annotations

import email.utils
import logging
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from agent.adapters.openai_client import Endpoint, redact
from agent.domain import Message
from agent.errors import ChatError, ChatFatal, ChatRetryable, ContextOverflow, SystemRoleRefused
from agent.ports import ChatChunk, RetryNotice
from agent.server import context_from_error

log = logging.getLogger(__name__)
MAX_WAIT = 60.0
_BACKOFF_START = 0.5
_BACKOFF_CAP = 8.0
# What a chat template without a system role says when it gets one (Gemma's, on vLLM or llama.cpp with --jinja).
_SYSTEM_REFUSED = re.compile(r"system (?:role|message)s? (?:is |are )?not (?:supported|allowed)", re.IGNORECASE)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, then ``retry-after`` as seconds or an HTTP date)."""
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else max(email.utils.mktime_tz(parsed) - time.time(), 0.0)


def backoff(attempt: int) -> float:
    """Exponential backoff with jitter for retry ``attempt`` (0-based) when the server gives no delay."""
    return float(min(_BACKOFF_START * 2**attempt, _BACKOFF_CAP)) * (1 - 0.25 * random.random())


class OpenAIChat:
    """Streams chat completions from ``client`` (an ``openai.OpenAI``), retrying only what a retry can fix."""

    def __init__(
        self,
        client: Any,
        *,
        max_retries: int = 3,
        on_retry: Callable[[RetryNotice], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_wait: float = MAX_WAIT,
        max_tokens: int = 0,
        options: Mapping[str, float] | None = None,
    ) -> None:
        self._client = client.with_options(max_retries=0)
        self._secret = str(client.api_key or "")
        self._base_url = str(client.base_url).rstrip("/")
        self._max_retries = max_retries
        self._on_retry = on_retry
        self._sleep = sleep
        self._max_wait = max_wait
        self._usage_option = True
        self._max_tokens = max_tokens
        self._options = dict(options or {})  # the run's request options (``agent.sampling``), sent as they are named

    def stream(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        import openai

        response = self._open(messages, model)
        answered = False
        try:
            for event in response:
                for choice in event.choices[:1]:
                    text = (choice.delta.content or "") if choice.delta else ""
                    if text or choice.finish_reason:
                        answered = True
                        yield ChatChunk(text=text, finish_reason=choice.finish_reason)
                if event.usage is not None:
                    yield ChatChunk(
                        prompt_tokens=event.usage.prompt_tokens, completion_tokens=event.usage.completion_tokens
                    )
        except openai.APIError as exc:
            self._log(exc)
            raise ChatRetryable(f"The reply broke off mid-stream ({self._redact(exc.message).rstrip('.')}): "
                                "/retry asks again.") from None
        finally:
            response.close()
        if not answered:
            yield from self._answered_whole(messages, model)

    def _answered_whole(self, messages: Sequence[Message], model: str) -> Iterator[ChatChunk]:
        """After an empty stream: llama-cpp-python answers a prompt longer than its context so, without an error.
        Asked again without streaming, it says so with its context size (at once: it counts before it computes),
        and a server whose stream broke for another reason answers whole."""
        whole = self._unstreamed(messages, model, self._max_tokens)
        choice = whole.choices[0] if whole.choices else None
        text = (choice.message.content or "") if choice is not None and choice.message else ""
        if choice is None or not text:
            raise ContextOverflow(f"The model server at {self._base_url} answered with an empty stream (no text at "
                                  "all): the request is probably longer than its context.")
        yield ChatChunk(text=text, finish_reason=choice.finish_reason)
        if whole.usage is not None:
            yield ChatChunk(prompt_tokens=whole.usage.prompt_tokens, completion_tokens=whole.usage.completion_tokens)

    def prompt_tokens(self, messages: Sequence[Message], model: str) -> int | None:
        """The prompt tokens the server counts for ``messages``, from a one-token reply that is not streamed (the
        doctor compares two counts to learn whether the chat template keeps system messages); None when the
        server reports no usage."""
        usage = getattr(self._unstreamed(messages, model, 1), "usage", None)
        return None if usage is None else int(usage.prompt_tokens)

    def _unstreamed(self, messages: Sequence[Message], model: str, max_tokens: int) -> Any:
        """One request answered whole, not retried; its errors are those of a stream's opening."""
        import openai

        extra: dict[str, Any] = {**self._options, **({"max_tokens": max_tokens} if max_tokens else {})}
        try:
            return self._client.chat.completions.create(
                model=model, messages=[{"role": m.role, "content": m.content} for m in messages], **extra)
        except openai.APIStatusError as exc:
            self._log(exc)
            raise self._status_error(exc, model) from None
        except openai.APIError as exc:
            self._log(exc)
            raise ChatRetryable(f"The model server at {self._base_url} did not answer "
                                f"({self._redact(str(exc.__cause__ or exc))}).") from None

    def _open(self, messages: Sequence[Message], model: str) -> Any:
        import openai

        payload = [{"role": m.role, "content": m.content} for m in messages]
        attempt = 0
        while True:
            extra: dict[str, Any] = {**self._options}
            if self._usage_option:
                extra["stream_options"] = {"include_usage": True}
            if self._max_tokens:
                extra["max_tokens"] = self._max_tokens  # without it a local server writes until its context is full
            try:
                return self._client.chat.completions.create(
                    model=model,
                    messages=payload,
                    stream=True,
                    extra_headers={"x-stainless-retry-count": str(attempt)},  # what the SDK's own retries send
                    **extra,
                )
            except openai.APIStatusError as exc:
                if exc.status_code == 400 and self._usage_option and "stream_options" in self._detail(exc):
                    self._usage_option = False  # an older server: ask again without the usage option
                    continue
                error: ChatError = self._status_error(exc, model)
                delay = retry_after(exc.response.headers)
                cause: Exception = exc
            except openai.APITimeoutError as exc:
                error = ChatRetryable(f"The model server at {self._base_url} did not answer in time: "
                                      "raise AGENT_TIMEOUT if it is slow, or try again.")
                delay, cause = None, exc
            except openai.APIConnectionError as exc:
                error = ChatRetryable(f"Cannot reach the model server at {self._base_url} "
                                      f"({self._redact(str(exc.__cause__ or exc))}): is it running?")
                delay, cause = None, exc
            if isinstance(error, ChatFatal) or attempt >= self._max_retries:
                self._log(cause)
                raise error from None
            if delay is not None and delay > self._max_wait:
                self._log(cause)
                raise ChatFatal(
                    f"Rate limited: the server asks to wait {delay:.0f} s, which looks like an exhausted quota "
                    "or rate limit; check your plan and usage, or try again later."
                ) from None
            wait = backoff(attempt) if delay is None else delay
            attempt += 1
            if self._on_retry is not None:
                self._on_retry(RetryNotice(attempt, self._max_retries, wait, _reason(cause)))
            self._sleep(wait)

    def _status_error(self, exc: Any, model: str) -> ChatError:
        status = int(exc.status_code)
        detail = self._detail(exc)
        if status == 429 and exc.code == "insufficient_quota":
            return ChatFatal("The API quota is exhausted (429 insufficient_quota): check the plan and billing "
                             "of the account behind OPENAI_API_KEY.")
        if status in (405, 501) or (status == 404 and not self._ends_in_v1()):
            what = "is /v1 missing from the base URL" if status == 404 else "is this an OpenAI-compatible server"
            return ChatFatal(f"The server at {self._base_url} answered {status} ({detail}) to a chat request: {what}? "
                             "The base URL usually ends in /v1 (OPENAI_BASE_URL).")
        if status in (400, 422, 500) and _SYSTEM_REFUSED.search(detail):
            return SystemRoleRefused(f"The server refuses system messages ({status}: {detail}): set "
                                     "AGENT_SYSTEM_PROMPT=user.")
        if status in (408, 409, 429) or status >= 500:
            return ChatRetryable(f"The model server kept failing ({status}: {detail}); try again later.")
        if status == 401:
            return ChatFatal(f"The server at {self._base_url} refused the API key (401): "
                             "check OPENAI_API_KEY (a local server may need none).")
        if status == 403:
            return ChatFatal(f"Access denied (403: {detail}): the key may have no access to model {model!r}.")
        if status == 404:
            return ChatFatal(f"Not found (404: {detail}): is the model name {model!r} right? "
                             "Set it with -m or AGENT_MODEL.")
        if status == 400 and re.search(r"context|too long|exceed", detail, re.IGNORECASE):
            context = context_from_error(detail)
            size = f" of {context:,} tokens" if context else ""
            return ContextOverflow(f"The request exceeds the server's context{size} ({status}: {detail}).", context)
        return ChatFatal(f"The model server refused the request ({status}: {detail}).")

    def _ends_in_v1(self) -> bool:
        return urlparse(self._base_url).path.rstrip("/").endswith("/v1")

    def _detail(self, exc: Any) -> str:
        """The server's own error message, short and with the key removed if a server echoed it; an HTML page or
        an empty body (a web server that is not a model server) by its status line."""
        body = exc.body  # the SDK hands over the inner ``error`` object of the response
        message = str((body.get("message") if isinstance(body, dict) else None) or exc.message)
        if re.search(r"<(!doctype|html|head|body)\b|^Error code: \d+$", message, re.IGNORECASE):
            message = str(exc.response.reason_phrase or message)
        return self._redact(message)[:300]

    def _redact(self, text: str) -> str:
        return redact(text, self._secret)

    def _log(self, exc: Exception) -> None:
        """What the SDK said, for ``--debug``, in place of its exception (which is not chained: see above)."""
        log.debug("chat request failed: %s", self._redact(f"{type(exc).__name__}: {exc}"))


def chat_model(
    endpoint: Endpoint, max_tokens: int, on_retry: Callable[[RetryNotice], None] | None = None, *,
    max_retries: int | None = None, options: Mapping[str, float] | None = None,
) -> OpenAIChat:
    """The chat model of ``endpoint``: its key, timeout and retry budget (the doctor asks for none), the reply
    limit ``max_tokens``, and the run's request ``options``."""
    from agent.adapters.openai_client import make_client

    return OpenAIChat(make_client(endpoint), max_retries=endpoint.max_retries if max_retries is None else max_retries,
                      on_retry=on_retry, max_tokens=max_tokens, options=options)


def _reason(exc: Exception) -> str:
    import openai

    if isinstance(exc, openai.RateLimitError):
        return "rate limited (429)"
    if isinstance(exc, openai.APIStatusError):
        return f"server error ({exc.status_code})"
    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    return "connection failed"
