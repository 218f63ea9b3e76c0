"""`HttpReader`: read-only calls to an HTTP service, each a GET of a configured path template.

A port's adapter names the operation and supplies the values; the configuration says where
the operation lives (``{"inspect": "accounts/{customer_id}"}``), so a user points a port at
their own service's layout without changing code. Path values are percent-encoded.

A read changes nothing, so no failure leaves an outcome unknown: no answer in time →
`ExternalTimeout`; not sent, reset, 5xx, 408/429/503 (with `retry_after`) or an unreadable
body → `ExternalUnavailable`; any other non-2xx → `ExternalRejected("http_<status>")`.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from interlock.contracts.errors import ConfigurationError
from interlock.services.adapters.http.config import HttpReadConfig, placeholders
from interlock.services.adapters.http.transport import (
    HttpAdapter,
    M,
    QueryValue,
    describe,
    parsed,
)


class HttpReader(HttpAdapter):
    """GETs the operations of one configured read-only service."""

    config: HttpReadConfig

    def __init__(self, config: HttpReadConfig, *, environ: Mapping[str, str] | None = None) -> None:
        super().__init__(config, environ=environ)

    async def get(
        self,
        operation: str,
        response: type[M],
        *,
        path_params: Mapping[str, str | int] | None = None,
        query: Mapping[str, QueryValue] | None = None,
    ) -> M:
        """The answer of `operation` as a `response` model, its path template filled from
        `path_params` and `query` appended (None values left out). `ConfigurationError`
        if the operation has no path or its path names a parameter not given."""
        values = {k: quote(str(v), safe="") for k, v in (path_params or {}).items()}
        template = self._template(operation, values)
        path = template.format(**values)
        outgoing = self.request(
            "GET", path, params={k: v for k, v in (query or {}).items() if v is not None}
        )
        answer = await self.send(outgoing, template, write=False)
        return parsed(answer, response, describe("GET", self.host, template))

    def _template(self, operation: str, params: Mapping[str, object]) -> str:
        template = self.config.paths.get(operation)
        if template is None:
            raise ConfigurationError(
                f"{self.host}: no path is configured for the operation {operation!r}",
                hint="add it to the adapter's `paths`",
            )
        missing = [name for name in placeholders(template) if name not in params]
        if missing:
            raise ConfigurationError(
                f"{self.host}: the path of {operation!r} names {', '.join(missing)}, "
                f"which the call does not supply (it gives: {', '.join(params) or 'nothing'})"
            )
        return template
