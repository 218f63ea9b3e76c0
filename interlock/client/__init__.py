"""A small Python client for the systems around Interlock: start a workflow, send it a
signal, read it, wait for a state, receive the tasks it announces. It builds the envelopes
and publishes on the client's own subjects, so an upstream system writes no wire format.

    client = await Client.connect()                  # `upstream`, from <home>/endpoints.json
    workflow_id = await client.start("<type>", {...}, tenant_id="acme")

A request is checked before it is sent: an unknown workflow type (`UnknownWorkflowType`) or a
payload the type's START model refuses (`InvalidPayload`) raises, in one line, instead of
returning an id that would never become a workflow. A message the broker does not acknowledge
raises `PublishFailed` (sending the same request again is safe only with a `workflow_id`).
These errors are in `interlock.errors`.

Reads (`get`, `wait_for_state`) need the database URL and return a frozen `WorkflowView`: they
are for operators and tests; an upstream system learns outcomes from the tasks and
announcements it subscribes to."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from interlock.client.upstream import Client
    from interlock.client.views import AuditEntry, WorkflowView

__all__ = ["AuditEntry", "Client", "WorkflowView"]
_WHERE = {
    "AuditEntry": "interlock.client.views",
    "Client": "interlock.client.upstream",
    "WorkflowView": "interlock.client.views",
}
"""Loaded on first use: the client brings the broker client, the plugins and the read models,
which `interlock.errors` (it re-exports the client's errors) must not cost every process."""


if not TYPE_CHECKING:  # type checkers see the imports above

    def __getattr__(name: str) -> Any:
        where = _WHERE.get(name)
        if where is None:
            raise AttributeError(f"module 'interlock.client' has no attribute {name!r}")
        value = getattr(import_module(where), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
