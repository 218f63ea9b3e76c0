"""What the HTTP adapters share: one call, with its failures in Interlock's terms.

Two questions decide every failure: did the request leave this process, and could the service
have acted on it? A failure to connect means nothing was sent (`ExternalUnavailable`). Once a
request is sent, a lost, late or unreadable answer leaves a write's outcome unknown
(`ExternalTimeout`: reconcile by key), while a read simply failed (`ExternalUnavailable`, or
`ExternalTimeout` when no answer came in time).

Errors carry the method, the service's host, the path template, the status and ids, never a
body, a header or the full URL, and are raised without chaining the httpx error (which holds
the request, headers included).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx
from opentelemetry import trace
from pydantic import BaseModel, ValidationError

from interlock.contracts.errors import InterlockError
from interlock.otel.messaging import client_span
from interlock.otel.propagation import inject
from interlock.services.adapters.http.config import HttpEndpointConfig
from interlock.services.errors import (
    ExternalRejected,
    ExternalTimeout,
    ExternalUnavailable,
    invalid_fields,
)

tracer = trace.get_tracer("interlock.adapters.http")

NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Transport failures raised before any byte of the request left: nothing can have happened."""

THROTTLED = frozenset({408, 429, 503})
"""Statuses by which a service says it did not handle the request and may later."""

UNKNOWN_HINT = "the outcome is unknown: look the key up before any retry"

QueryValue = str | int | float | bool | None
M = TypeVar("M", bound=BaseModel)


class HttpAdapter:
    """Owns the connection pool of one configured service; close it with `aclose()` (or use
    it in ``async with contextlib.aclosing(adapter)``)."""

    def __init__(
        self, config: HttpEndpointConfig, *, environ: Mapping[str, str] | None = None
    ) -> None:
        self.config = config
        self.host = config.host
        self._client = httpx.AsyncClient(
            base_url=config.base_url,
            headers=config.resolved_headers(environ),
            timeout=httpx.Timeout(config.timeout_s, connect=config.connect_timeout_s),
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(host={self.host!r})"

    async def aclose(self) -> None:
        """Close the connection pool; the adapter cannot be used afterwards."""
        await self._client.aclose()

    async def send(
        self,
        request: httpx.Request,
        template: str,
        *,
        write: bool,
        key: str | None = None,
    ) -> httpx.Response:
        """Send `request` (`template` names its path in errors and spans) within the
        configured deadline; transport failures raise translated (see the module docstring)."""
        request.headers.update(inject())
        what = describe(request.method, self.host, template, key)
        attributes: dict[str, Any] = {
            "http.request.method": request.method,
            "server.address": request.url.host,
            "server.port": request.url.port or (443 if request.url.scheme == "https" else 80),
            "url.template": template,
        }
        if key is not None:
            attributes["interlock.idempotency_key"] = key
        with client_span(tracer, f"{request.method} {template}", attributes) as span:
            response = await self._exchange(request, what, write=write)
            span.set_attribute("http.response.status_code", response.status_code)
            if response.status_code >= 400:
                span.set_attribute("error.type", str(response.status_code))
            return response

    def request(
        self,
        method: str,
        path: str,
        *,
        content: str | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str | int | float | bool] | None = None,
    ) -> httpx.Request:
        """A request to `path`, relative to the base URL, with that body, headers and query."""
        return self._client.build_request(
            method, path, content=content, headers=headers, params=params
        )

    async def _exchange(self, request: httpx.Request, what: str, *, write: bool) -> httpx.Response:
        deadline = self.config.timeout_s
        try:
            async with asyncio.timeout(deadline):
                return await self._client.send(request)
        except NOT_SENT as exc:
            raise ExternalUnavailable(f"{what}: not sent ({type(exc).__name__})") from None
        except (TimeoutError, httpx.TimeoutException):
            hint = UNKNOWN_HINT if write else ""
            raise ExternalTimeout(f"{what}: no answer within {deadline:g}s", hint=hint) from None
        except httpx.RequestError as exc:  # reset, closed or garbled after the request left
            failure = f"{what}: failed after sending ({type(exc).__name__})"
            if write:
                raise ExternalTimeout(failure, hint=UNKNOWN_HINT) from None
            raise ExternalUnavailable(failure) from None


def describe(method: str, host: str, template: str, key: str | None = None) -> str:
    """How an error names a call: ``POST refunds.example.com operations (key k-1)``."""
    return f"{method} {host} {template}" + (f" (key {key})" if key else "")


def status_error(response: httpx.Response, what: str, *, write: bool) -> InterlockError | None:
    """The error a non-2xx answer means, or None for a 2xx.

    - 408, 429, 503: the service did not handle it → `ExternalUnavailable` with its
      `Retry-After`;
    - a write answered 409 (a request with this key is still in progress, as the IETF
      Idempotency-Key draft specifies), 3xx (redirects are not followed; a 303 may follow an
      effect) or 5xx → `ExternalTimeout`: the outcome is unknown;
    - a read answered 5xx → `ExternalUnavailable`;
    - anything else (4xx, a read's 3xx) → `ExternalRejected(error_class="http_<status>")`.
    """
    status = response.status_code
    if 200 <= status < 300:
        return None
    answered = f"{what} answered HTTP {status}"
    if status in THROTTLED:
        return ExternalUnavailable(answered, retry_after=retry_after(response.headers))
    if write and (status == 409 or 300 <= status < 400 or status >= 500):
        return ExternalTimeout(answered, hint=UNKNOWN_HINT)
    if status >= 500:
        return ExternalUnavailable(answered)
    return ExternalRejected(answered, error_class=f"http_{status}")


def parsed(response: httpx.Response, model: type[M], what: str) -> M:
    """A read's answer as `model`: a non-2xx raises as `status_error` says (never unknown),
    and a 2xx body that is not a valid `model` raises `ExternalUnavailable` (a service
    answering garbage, a proxy's error page, a half-done deploy: worth retrying within the
    workflow's bound, not worth failing it at once)."""
    error = status_error(response, what, write=False)
    if error is not None:
        raise error
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        raise ExternalUnavailable(
            f"{what} answered HTTP {response.status_code} with an unreadable body "
            f"({invalid_fields(exc)})"
        ) from None


def retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds a `Retry-After` header asks to wait (delay-seconds or an HTTP date; a date in
    the past is 0), or None when there is none or it cannot be read."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; a naive parse means the zone was "-0000"
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
