"""Calling a port from a stage: its answer, or the result event that reports why not.

A transient failure (no answer in time, system unavailable) becomes `RETRYABLE_ERROR`, which
the workflow retries durably with backoff; a definitive refusal becomes `PERMANENT_ERROR`
with the port's error class. Only read-only or idempotent calls belong here: an ambiguous
write must be reconciled first (see `services.effects`).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from interlock.services.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable
from interlock.services.runtime.stage import StageResult

T = TypeVar("T")


def transient(error: Exception, what: str) -> StageResult:
    """`RETRYABLE_ERROR`, with the wait an unavailable system asked for (`Retry-After`)."""
    kind = "timeout" if isinstance(error, ExternalTimeout) else "unavailable"
    report: dict[str, object] = {"error_class": f"{what}_{kind}", "system": what}
    if isinstance(error, ExternalUnavailable) and error.retry_after is not None:
        report["retry_after_s"] = error.retry_after
    return StageResult("RETRYABLE_ERROR", report)


def refused(error: ExternalRejected, system: str | None = None) -> StageResult:
    """`PERMANENT_ERROR` with the refusal's error class (and the system that refused)."""
    report: dict[str, object] = {"error_class": error.error_class}
    if system:
        report["system"] = system
    return StageResult("PERMANENT_ERROR", report)


async def call(port_call: Awaitable[T], what: str) -> T | StageResult:
    """`await port_call`, or the result event describing its failure; `what` names the
    system in the error class (`account_api_timeout`, `policy_store_unavailable` …)."""
    try:
        return await port_call
    except (ExternalTimeout, ExternalUnavailable) as exc:
        return transient(exc, what)
    except ExternalRejected as exc:
        return refused(exc, what)
