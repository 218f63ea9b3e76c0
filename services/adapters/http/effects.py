"""`HttpEffects`: a `KeyedEffects` provider over any HTTP service that deduplicates by an
`Idempotency-Key` header, for any pydantic request and receipt models.

``execute`` POSTs the request as JSON to `execute_path` with the request's idempotency key in
the header; a 2xx answer carries the receipt. ``lookup`` GETs `lookup_path` with the key:
200 carries the receipt of the effect that key took, 404 says none took effect.

An execute whose answer is lost, late, a 5xx, a 409 (the key is still being processed), a
redirect, or a 2xx whose receipt cannot be read raises `ExternalTimeout`: the service may have
acted, so `execute_once` looks the key up before anything is retried. An unreadable 2xx is
unknown rather than permanent: the service accepted the request, and failing the workflow
would leave an effect it never records. A lookup is a read: it fails like `HttpReader.get`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Generic, Protocol, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ValidationError

from interlock.services.adapters.http.config import HttpEffectConfig
from interlock.services.adapters.http.transport import (
    UNKNOWN_HINT,
    HttpAdapter,
    describe,
    parsed,
    status_error,
)
from interlock.services.errors import ExternalTimeout

log = logging.getLogger("interlock.adapters.http")


class KeyedRequest(Protocol):
    """A request model that names its idempotency key (`ActionRequest`, `EffectRequest`)."""

    @property
    def idempotency_key(self) -> str: ...

    def model_dump_json(self) -> str: ...


Req = TypeVar("Req", bound=KeyedRequest)
Rec = TypeVar("Rec", bound=BaseModel)


class HttpEffects(HttpAdapter, Generic[Req, Rec]):
    """Performs requests at most once per idempotency key; answers `receipt` models."""

    config: HttpEffectConfig

    def __init__(
        self,
        config: HttpEffectConfig,
        receipt: type[Rec],
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(config, environ=environ)
        self._receipt = receipt

    async def execute(self, request: Req) -> Rec:
        """The receipt of the effect under `request.idempotency_key` (see the module
        docstring for failures)."""
        key = request.idempotency_key
        template = self.config.execute_path
        outgoing = self.request(
            "POST",
            template,
            content=request.model_dump_json(),
            headers={"Idempotency-Key": key, "Content-Type": "application/json"},
        )
        response = await self.send(outgoing, template, write=True, key=key)
        what = describe("POST", self.host, template, key)
        error = status_error(response, what, write=True)
        if error is not None:
            log.warning("%s", error)
            raise error
        try:
            return self._receipt.model_validate_json(response.content)
        except ValidationError:
            log.warning("%s: unreadable receipt with HTTP %d", what, response.status_code)
            raise ExternalTimeout(
                f"{what} answered HTTP {response.status_code} with an unreadable receipt",
                hint=UNKNOWN_HINT,
            ) from None

    async def lookup(self, idempotency_key: str) -> Rec | None:
        """The receipt of the effect this key took, or None if none did."""
        template = self.config.lookup_path
        path = template.format(key=quote(idempotency_key, safe=""))
        outgoing = self.request("GET", path)
        response = await self.send(outgoing, template, write=False, key=idempotency_key)
        if response.status_code == 404:
            return None
        what = describe("GET", self.host, template, idempotency_key)
        return parsed(response, self._receipt, what)
