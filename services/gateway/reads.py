"""`GET /v1/workflows/{workflow_type}/{workflow_id}`: what became of a workflow, and of a
webhook the sender delivered for it.

Authenticated as a webhook is (`interlock-sender` and a Standard Webhooks signature), the
signed content being `"GET <path>?<query>"` as sent (`signed_content`) instead of a body. A
sender reads only workflows of a tenant it acts for (`?tenant_id=`, needed only by a sender
of several) and of an installed type; anything else, like a workflow
that does not exist, is 404 `unknown_workflow`, so an answer never tells whether another
tenant has such a workflow. The answer:

    {"workflow_type", "workflow_id", "tenant_id", "state", "version", "updated_at",
     "event": {"event_id", "decision": "accepted" | "refused" | "pending",
               "reason", "detail", "failed_guards"}}

`event` only for `?event_id=` (an id the gateway returned to this sender, else 404
`unknown_event`): `refused` carries the projector's reason, detail and the guards that failed;
`pending` means not decided yet. A signal the projector could not match to a workflow never
has a decision on one: asking about its workflow is 404.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from interlock.contracts.clients import relayed_sender
from interlock.contracts.envelope import is_identifier
from interlock.contracts.registry import Registry
from interlock.otel import metrics
from interlock.services.errors import Refusal
from interlock.services.gateway.auth import HEADER_SENDER, SenderRegistry
from interlock.services.gateway.limits import RateLimits
from interlock.services.gateway.refusal import SOURCE

ROUTE = "/v1/workflows/{workflow_type}/{workflow_id}"

ReadStatus = Callable[[str, str, str, str | None], Awaitable[Mapping[str, Any] | None]]
"""`(tenant, workflow_type, workflow_id, event_id)`: the workflow's `state`, `version`,
`updated_at` and the event's `accepted` (None: not decided), `reason`, `detail`,
`failed_guards`; None if there is no such workflow."""


def signed_content(method: str, target: str) -> bytes:
    """What a read's signature covers in place of a body: `"<METHOD> <path>?<query>"` exactly
    as sent, so captured headers cannot read another path, workflow, tenant or event."""
    return f"{method} {target}".encode()


def _unknown() -> Refusal:
    return Refusal(404, "unknown_workflow", "no such workflow for this sender")


async def answer(
    request: web.Request,
    *,
    senders: SenderRegistry,
    rates: RateLimits,
    workflows: Registry,
    read: ReadStatus | None,
) -> web.Response:
    workflow_type = request.match_info["workflow_type"]
    workflow_id = request.match_info["workflow_id"]
    authentic = False
    try:
        signed = signed_content(request.method, request.raw_path)
        sender = senders.authenticate(request.headers.get(HEADER_SENDER), signed, request.headers)
        authentic = True
        if not await rates.sender_allows(sender):
            return rate_limited()
        tenant = _tenant(senders, sender, request.query.get("tenant_id"))
        event_id = request.query.get("event_id")
        if event_id is not None and not (
            is_identifier(event_id) and relayed_sender(event_id) == sender
        ):
            raise Refusal(404, "unknown_event", "no such event from this sender")
        known = workflow_type in workflows.workflow_types()
        if not (known and senders.admits_type(sender, workflow_type)):
            raise _unknown()
        if not is_identifier(workflow_id):  # no workflow has it: never asked of the database
            raise _unknown()
        if read is None:
            detail = "this gateway has no database access"
            return web.json_response({"error": "unavailable", "detail": detail}, status=503)
        found = await read(tenant, workflow_type, workflow_id, event_id)
        if found is None:
            raise _unknown()
    except Refusal as refusal:
        if not (authentic or await rates.unauthenticated_allows()):
            return rate_limited()
        metrics.unrecorded_refusal(SOURCE, refusal.reason)
        return web.json_response(
            {"error": refusal.reason, "detail": refusal.detail}, status=refusal.status
        )
    body: dict[str, Any] = {
        "workflow_type": workflow_type,
        "workflow_id": workflow_id,
        "tenant_id": tenant,
        "state": found["state"],
        "version": found["version"],
        "updated_at": found["updated_at"].isoformat(),
    }
    if event_id is not None:
        body["event"] = _decision(event_id, found)
    return web.json_response(body)


def _tenant(senders: SenderRegistry, sender: str, claimed: str | None) -> str:
    """The tenant asked about; one the sender does not act for is answered as unknown."""
    try:
        return senders.tenant(sender, claimed)
    except Refusal as refusal:
        if refusal.reason == "forged_tenant":
            raise _unknown() from None
        raise


def _decision(event_id: str, found: Mapping[str, Any]) -> dict[str, Any]:
    accepted = found["accepted"]
    decision = "pending" if accepted is None else "accepted" if accepted else "refused"
    refused = decision == "refused"
    return {
        "event_id": event_id,
        "decision": decision,
        "reason": found["reason"] if refused else None,
        "detail": found["detail"] if refused else None,
        "failed_guards": list(found["failed_guards"]) if refused else [],
    }


def rate_limited() -> web.Response:
    """Refused for its rate: counted, neither recorded nor logged one by one."""
    metrics.unrecorded_refusal(SOURCE, "rate_limited")
    detail = "too many requests; retry later"
    return web.json_response({"error": "rate_limited", "detail": detail}, status=429)
