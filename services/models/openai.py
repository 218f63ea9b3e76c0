"""`OpenAIChatModel`: a client for any OpenAI-compatible chat-completions endpoint (httpx).

One call is ``POST {base_url}/chat/completions`` with the configured model, the messages of
the request's prompt version (one of the `templates` it is given: the plugins' prompts),
``temperature: 0`` and a strict ``json_schema`` response format built from
`ModelRequest.output_schema`.

Failures, in Interlock's terms:

- no answer within `timeout` seconds (per HTTP attempt) → `ExternalTimeout`;
- cannot connect, connection dropped, HTTP 408/429/5xx, or a reply that is not a chat
  completion → `ExternalUnavailable` (a model call has no side effect: safe to retry);
- any other HTTP status (bad request, authentication, unknown model) or an unknown prompt
  version → `ExternalRejected(error_class="model_request_rejected" | prompt's class)`.

A refused connection and HTTP 429 are retried here, at most `max_retries` times, with
exponential backoff and jitter (or the server's ``Retry-After`` when it is at most 10 s);
anything longer is left to the workflow's durable retries. (The httpx transport's own retries
are not used: a custom transport would switch off the proxy settings from the environment.)

Content that is not a JSON object does not raise: the output is ``{"_unparseable": <first 200
characters>}`` (``{"_refusal": ...}`` for a refusal), which the caller's schema validation
rejects and records like any other invalid answer.

The prompt and the API key are never logged and never part of an exception: errors carry the
endpoint's host, the HTTP status and the provider's error type/code only, and are raised
without chaining the httpx error (which holds the request, headers included).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from types import TracebackType
from typing import Any

import httpx
from pydantic import ValidationError

from interlock.services.errors import (
    ExternalRejected,
    ExternalTimeout,
    ExternalUnavailable,
    invalid_fields,
)
from interlock.services.models.chat_wire import (
    Completion,
    Usage,
    output_of,
    provider_error,
    request_body,
)
from interlock.services.models.prompts import Templates
from interlock.services.ports import ModelReply, ModelRequest

log = logging.getLogger("interlock.models.openai")

_MAX_RETRY_DELAY = 10.0
"""Longest client-side wait (seconds) before a retry; a longer `Retry-After` is not waited."""


class OpenAIChatModel:
    """A `ModelClient` over an OpenAI-compatible HTTP API. Close it with `aclose()`."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        templates: Templates,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
    ) -> None:
        try:
            url = httpx.URL(base_url)
        except httpx.InvalidURL:
            url = httpx.URL()
        if url.scheme not in ("http", "https") or not url.host:
            # The URL itself is not repeated: it may carry credentials.
            raise ValueError("the model base URL must look like http(s)://host[:port][/path]")
        self.model = model
        self._templates = templates
        self._host = url.host
        self._timeout = timeout
        self._max_retries = max_retries
        self._backoff = retry_backoff
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/",
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            timeout=timeout,
        )

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool; the model cannot be used afterwards."""
        await self._client.aclose()

    async def complete(self, request: ModelRequest) -> ModelReply:
        """One schema-constrained completion (see the module docstring for failures)."""
        body = request_body(self.model, self._templates, request)
        started = time.perf_counter()
        response = await self._post_retrying(body)
        latency_ms = (time.perf_counter() - started) * 1000
        completion = self._completion(response)
        usage = completion.usage or Usage()
        return ModelReply(
            output=output_of(completion.choices[0].message),
            model=self.model,
            model_version=completion.model,
            latency_ms=latency_ms,
            prompt_tokens=usage.prompt_tokens or 0,
            completion_tokens=usage.completion_tokens or 0,
            parameters={"temperature": body["temperature"], "response_format": "json_schema"},
        )

    async def _post_retrying(self, body: dict[str, Any]) -> httpx.Response:
        """POST, retrying a refused connection or a 429 up to `max_retries` times."""
        retry = 0
        while True:
            outcome = await self._attempt(body)
            delay = self._retry_delay(retry, outcome)
            if delay is None:
                break
            log.warning(
                "%s; retry %d/%d in %.2fs", _summary(outcome, self._host), retry + 1,
                self._max_retries, delay,
            )  # fmt: skip
            await asyncio.sleep(delay)
            retry += 1
        if isinstance(outcome, ExternalUnavailable):
            raise outcome
        _raise_for_status(outcome, self._host)
        return outcome

    async def _attempt(self, body: dict[str, Any]) -> httpx.Response | ExternalUnavailable:
        """One HTTP attempt. A failure to connect is returned (it may be retried); every
        other transport failure raises, translated."""
        host = self._host
        try:
            async with asyncio.timeout(self._timeout):
                return await self._client.post("chat/completions", json=body)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            return ExternalUnavailable(f"model endpoint {host} unreachable ({type(exc).__name__})")
        except (TimeoutError, httpx.TimeoutException):
            raise ExternalTimeout(
                f"model endpoint {host} gave no answer within {self._timeout:g}s"
            ) from None
        except httpx.TransportError as exc:
            raise ExternalUnavailable(
                f"model endpoint {host} failed mid-call ({type(exc).__name__})"
            ) from None

    def _retry_delay(self, retry: int, outcome: httpx.Response | Exception) -> float | None:
        """Seconds to wait before the next attempt, or None to stop here."""
        if retry >= self._max_retries:
            return None
        backoff = self._backoff * 2.0**retry * random.uniform(0.5, 1.0)
        if isinstance(outcome, Exception):
            return backoff
        if outcome.status_code != 429:
            return None
        try:
            delay = float(outcome.headers["retry-after"])
        except (KeyError, ValueError):
            delay = backoff
        return delay if 0 <= delay <= _MAX_RETRY_DELAY else None

    def _completion(self, response: httpx.Response) -> Completion:
        try:
            return Completion.model_validate_json(response.content)
        except ValidationError as exc:
            raise ExternalUnavailable(
                f"model endpoint {self._host} returned HTTP {response.status_code} "
                f"but not a chat completion ({invalid_fields(exc)})"
            ) from None


def _summary(outcome: httpx.Response | Exception, host: str) -> str:
    if isinstance(outcome, Exception):
        return str(outcome)
    return f"model endpoint {host} answered HTTP {outcome.status_code}"


def _raise_for_status(response: httpx.Response, host: str) -> None:
    status = response.status_code
    if 200 <= status < 300:
        return
    what = f"model endpoint {host} answered HTTP {status}{provider_error(response.content)}"
    if status in (408, 429) or status >= 500:
        raise ExternalUnavailable(what)
    raise ExternalRejected(what, error_class="model_request_rejected")
