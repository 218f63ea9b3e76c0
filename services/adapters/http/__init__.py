"""HTTP adapters a user points at their own systems: effects (`HttpEffects`, a `KeyedEffects`
provider deduplicating by `Idempotency-Key`) and reads (`HttpReader`), with their pure
configuration models. Failures are Interlock's own errors (see `transport.status_error`)."""

from interlock.services.adapters.http.config import (
    HttpEffectConfig,
    HttpEndpointConfig,
    HttpReadConfig,
    SecretRef,
)
from interlock.services.adapters.http.effects import HttpEffects, KeyedRequest
from interlock.services.adapters.http.reads import HttpReader
from interlock.services.adapters.http.transport import retry_after, status_error

__all__ = [
    "HttpEffectConfig",
    "HttpEffects",
    "HttpEndpointConfig",
    "HttpReadConfig",
    "HttpReader",
    "KeyedRequest",
    "SecretRef",
    "retry_after",
    "status_error",
]
