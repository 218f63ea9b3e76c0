"""How an HTTP adapter is configured: where the service is, how long to wait, which headers.

Pure data, so a port can be bound to an adapter by configuration, e.g.
``{"adapter": "http", "base_url": "https://refunds.example.com/v1/", "headers":
{"Authorization": {"env": "REFUNDS_TOKEN", "prefix": "Bearer "}}}``.

A secret is never part of the configuration, only a reference to it (`SecretRef`: an
environment variable or a file), read when the adapter is built. So a configuration can be
logged, shown in a repr or put into an error as it is. A header whose name says it carries a
credential (`Authorization`, `Cookie`, `X-Api-Key`, …) must be given by reference, and the base
URL may not carry a user or password. Validation errors never echo the input.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from string import Formatter
from typing import Literal, Self

import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from interlock.contracts.errors import ConfigurationError

_CREDENTIAL_WORDS = ("authorization", "cookie", "token", "secret", "password", "api-key", "apikey")
_RESERVED_HEADERS = frozenset({"idempotency-key", "content-type", "content-length", "host"})


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)


class SecretRef(_Config):
    """Where a header's secret value is read from when the adapter is built: exactly one of
    an environment variable (`env`) or a file (`file`, e.g. a mounted Kubernetes secret)."""

    env: str | None = Field(default=None, min_length=1, description="Environment variable.")
    file: Path | None = Field(default=None, description="File holding the value (trimmed).")
    prefix: str = Field(default="", description='Put before the value, e.g. "Bearer ".')

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.env is None) == (self.file is None):
            raise ValueError("a secret reference names exactly one of `env` or `file`")
        return self

    def value(self, environ: Mapping[str, str]) -> str:
        """The header value; `ConfigurationError` naming the source if it is missing."""
        if self.env is not None:
            secret = environ.get(self.env)
            if not secret:
                raise ConfigurationError(
                    f"the environment variable {self.env} is not set",
                    hint="set it, or point the header's secret reference elsewhere",
                )
            return self.prefix + secret
        assert self.file is not None  # guaranteed by `_one_source`
        try:
            secret = self.file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigurationError(
                f"the secret file {self.file} cannot be read ({type(exc).__name__})"
            ) from None
        if not secret:
            raise ConfigurationError(f"the secret file {self.file} is empty")
        return self.prefix + secret


class HttpEndpointConfig(_Config):
    """What every HTTP adapter needs: the service's base URL, deadlines and headers."""

    adapter: Literal["http"] = "http"
    base_url: str = Field(description="http(s)://host[:port][/path/]; paths are relative to it.")
    timeout_s: float = Field(default=10.0, gt=0, description="Deadline of one whole call.")
    connect_timeout_s: float = Field(default=3.0, gt=0, description="Deadline to connect.")
    headers: dict[str, str | SecretRef] = Field(
        default_factory=dict,
        description="Sent with every call; a credential only as a `SecretRef`.",
    )

    @field_validator("base_url")
    @classmethod
    def _plain_http_url(cls, value: str) -> str:
        # The URL itself is never repeated: it may carry credentials.
        try:
            url = httpx.URL(value)
        except httpx.InvalidURL:
            raise ValueError("the base URL is not a URL") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError("the base URL must look like http(s)://host[:port][/path/]")
        if url.userinfo:
            raise ValueError("the base URL may not carry credentials: use a header SecretRef")
        if url.query or url.fragment:
            raise ValueError("the base URL may not carry a query or a fragment")
        return value

    @field_validator("headers")
    @classmethod
    def _credentials_by_reference(
        cls, headers: dict[str, str | SecretRef]
    ) -> dict[str, str | SecretRef]:
        for name, value in headers.items():
            lowered = name.lower()
            if lowered in _RESERVED_HEADERS:
                raise ValueError(f"the header {name} is set by the adapter itself")
            if isinstance(value, str) and any(w in lowered for w in _CREDENTIAL_WORDS):
                raise ValueError(f"the header {name} carries a credential: give a SecretRef")
        return headers

    @property
    def host(self) -> str:
        """How errors, logs and spans name the service (never the full URL)."""
        url = httpx.URL(self.base_url)
        return f"{url.host}:{url.port}" if url.port else url.host

    def resolved_headers(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The headers with their secrets read (from `os.environ` unless given)."""
        source = os.environ if environ is None else environ
        return {
            name: value if isinstance(value, str) else value.value(source)
            for name, value in self.headers.items()
        }


class HttpEffectConfig(HttpEndpointConfig):
    """An effect service: ``POST execute_path`` performs (deduplicating by the
    `Idempotency-Key` header), ``GET lookup_path`` answers 200 with the receipt of the key's
    effect or 404 if none took effect."""

    execute_path: str = Field(default="operations", description="Where a request is POSTed.")
    lookup_path: str = Field(
        default="operations/{key}", description="Where a key is looked up; `{key}` is required."
    )

    @field_validator("execute_path")
    @classmethod
    def _no_placeholders(cls, value: str) -> str:
        if placeholders(value):
            raise ValueError("the execute path takes no placeholders")
        return value

    @field_validator("lookup_path")
    @classmethod
    def _key_placeholder(cls, value: str) -> str:
        if placeholders(value) != ["key"]:
            raise ValueError("the lookup path names the placeholder {key}, once, and no other")
        return value


class HttpReadConfig(HttpEndpointConfig):
    """A read-only service: each operation of the port is ``GET`` of a path template
    (``{"inspect": "accounts/{customer_id}"}``) whose placeholders the call fills in."""

    paths: dict[str, str] = Field(
        default_factory=dict, description="Operation name -> path template."
    )

    @field_validator("paths")
    @classmethod
    def _well_formed(cls, paths: dict[str, str]) -> dict[str, str]:
        for operation, template in paths.items():
            names = placeholders(template)
            if any(not n.isidentifier() for n in names):
                raise ValueError(f"the path of {operation} has a placeholder that is not a name")
        return paths


def placeholders(template: str) -> list[str]:
    """The names of a path template's ``{placeholders}``, in order (`ValueError` if the
    template's braces do not parse)."""
    return [name for _, name, _, _ in Formatter().parse(template) if name is not None]
