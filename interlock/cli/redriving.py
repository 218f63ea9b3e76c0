"""`interlock dlq redrive --type T [--tenant X] [--since DURATION] [--reason R] [--state S]`:
dead letters redriven as a selection, previewed first (see `interlock.cli.bulk`).

A letter is selected by the event it holds (its workflow type and tenant), when it was
dead-lettered (`--since`), why (`--reason`, the dead letter's reason) and the state its workflow
is in now (`--state`). The preview decides the letter's event on the workflow as it stands, as
the projector would on redrive: the state it would enter and the effects it would reconcile,
or why it would be refused (a webhook the gateway refused is never redriven; a malformed
message would be dead-lettered again, and so would one whose sender the door refuses: `Door`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import nats

from interlock.app.options import with_stack
from interlock.cli.bulk import Mode, Preview, check_mode, report, run_previewed
from interlock.config import access
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.envelope import Envelope, parse_envelope, utcnow
from interlock.contracts.errors import MalformedMessage, UnknownDefinition
from interlock.contracts.urls import nats_servers
from interlock.messaging import letters as dlq
from interlock.ops import bulk
from interlock.ops.selection import Selection
from interlock.projector import door
from interlock.projector.claims import ClaimVerifier
from interlock.projector.engine import Context
from interlock.projector.store.port import WorkflowStore
from interlock.projector.store.postgres import open_store


def selected(letter: dlq.Letter, chosen: Selection, now: datetime) -> bool:
    """Whether `letter` is in the selection (its state is checked once its workflow is read)."""
    envelope = letter.envelope()
    if envelope.get("workflow_type") != chosen.workflow_type:
        return False
    if chosen.tenant_id and envelope.get("tenant_id") != chosen.tenant_id:
        return False
    if chosen.reason and letter.reason != chosen.reason:
        return False
    stored = letter.stored_at
    return chosen.since is None or (stored is not None and stored >= now - chosen.since)


@dataclass(frozen=True)
class Door:
    """What the projector checks a redriven message's sender against: the configured clients
    and, when it verifies them, the gateway's signed sender claims."""

    clients: door.Clients
    claims: ClaimVerifier | None = None

    def refusal(self, letter: dlq.Letter, event: Envelope) -> tuple[str, str] | None:
        """(reason, detail) when the projector would refuse `event` at its door again, whatever
        its workflow's state (a redrive keeps the subject, headers and body); None if not."""
        try:
            definition = installed().registry.latest(event.workflow_type)
            inbound = subjects.parse_inbound(letter.subject)
        except (UnknownDefinition, MalformedMessage) as exc:
            return "malformed", f"the projector would dead-letter it again: {exc}"
        spec = definition.event(event.type)
        if spec is None:
            return "malformed", f"the projector would dead-letter it again: {event.type} unknown"
        if self.claims is not None:
            inbound = self.claims.checked(inbound, letter.body, letter.headers)
        refused = door.refusal(definition, spec, event, inbound, self.clients)
        if refused is None:
            return None
        if refused.reason in door.WITHOUT_STANDING:
            return refused.reason, f"the projector would dead-letter it again: {refused.detail}"
        return refused.reason, f"the projector would refuse it at the door: {refused.detail}"


async def preview_letter(
    store: WorkflowStore, letter: dlq.Letter, parameters: dict[str, Any], gate: Door | None = None
) -> Preview:
    """What redriving `letter` would do (`gate`: the sender checks it would meet again)."""
    summary = letter.summary()
    base = {
        "letter_id": letter.id,
        "workflow_id": summary["workflow_id"],
        "tenant_id": letter.envelope().get("tenant_id"),
        "state": None,
        "event_type": summary["type"],
        "dead_letter_reason": letter.reason,
        "effects": [],
        "effects_to_reconcile": [],
    }
    why_not = letter.not_redrivable()
    if why_not is not None:
        return {**base, "outcome": "refused", "reason": "not_redrivable", "detail": why_not}
    try:
        event: Envelope = parse_envelope(letter.body)
    except MalformedMessage as exc:
        detail = f"the projector would dead-letter it again: {exc}"
        return {**base, "outcome": "refused", "reason": "malformed", "detail": detail}
    at_door = gate.refusal(letter, event) if gate is not None else None
    if at_door is not None:
        return {**base, "outcome": "refused", "reason": at_door[0], "detail": at_door[1]}
    stored = await store.load(event.tenant_id, event.workflow_id) if event.workflow_id else None
    if stored is None:
        if event.type == "START":
            return {**base, "outcome": "accepted", "to_state": "(a new workflow)"}
        detail = f"no workflow {event.workflow_id}"
        return {**base, "outcome": "refused", "reason": "unknown_workflow", "detail": detail}
    wf = stored.workflow
    try:
        definition = installed().registry.get(wf.workflow_type, wf.definition_version)
    except UnknownDefinition as exc:
        return {**base, **bulk.refused(wf, "unknown_version", str(exc))}
    guards = installed().registry.guards(wf.workflow_type)
    ctx = Context(now=utcnow(), parameters=parameters, guards=guards)
    return {**base, **bulk.preview_signal(definition, wf, event, ctx)}


def bulk_redrive(chosen: Selection, mode: Mode, *, operator: str) -> None:
    """Preview, then (confirmed) redrive each selected dead letter."""
    check_mode(mode)

    async def work(s: Settings, nats_url: str, database_url: str) -> tuple[list[Preview], bool]:
        nc = await nats.connect(nats_servers(nats_url), name="interlock-dlq")
        store = await open_store(database_url, size=1)
        try:
            js = nc.jetstream()
            now = datetime.now(UTC)
            found = [d async for d in dlq.letters(js) if selected(d, chosen, now)]
            by_id = {d.id: d for d in found}
            parameters = s.parameters.get(chosen.workflow_type, {})
            gate = Door(
                access.client_policies(s), ClaimVerifier(access.gateway_claims_public_key(s))
            )
            previews = [await preview_letter(store, d, parameters, gate) for d in found]
            if chosen.states:
                previews = [p for p in previews if p["state"] in chosen.states]
            truncated = len(previews) > chosen.limit
            previews = previews[: chosen.limit]

            async def send(p: Preview) -> dict[str, Any]:
                await dlq.redrive(js, by_id[p["letter_id"]])
                return {"accepted": True, "to_state": "redriven", "letter_id": p["letter_id"]}

            await run_previewed(
                database_url,
                chosen,
                mode,
                (previews, truncated),
                action="redrive",
                operator=operator,
                send=send,
            )
            return previews, truncated
        finally:
            await store.close()
            await nc.drain()

    previews, truncated = with_stack(work)
    report(chosen, previews, truncated, mode.json_output)
