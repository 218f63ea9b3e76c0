"""`interlock dlq redrive --type T --dry-run`: a letter's event is previewed as the projector
would decide it on redrive, its sender's checks at the door included (a redrive keeps the
subject, headers and body, so a sender refused there is refused again)."""

from __future__ import annotations

from interlock.cli.redriving import Door, preview_letter
from interlock.contracts.clients import ClientPolicy
from interlock.messaging.letters import Letter
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY

DESK = ClientPolicy(
    publish=frozenset({"signal"}),
    types=frozenset({"support"}),
    tenants=frozenset({"acme"}),
    roles=frozenset({"operator"}),
)
GATE = Door({"desk": DESK})


def _letter(subject: str, reason: str) -> Letter:
    cancel = envelope("CANCEL_REQUESTED", workflow_id="wf-r", role="operator")
    cancel = cancel.model_copy(update={"payload": {"reason": "duplicate ticket"}})
    return Letter(1, "projector", reason, "", subject, None, {}, cancel.to_bytes())


async def _store() -> InMemoryWorkflowStore:
    store = InMemoryWorkflowStore()
    start = envelope("START", workflow_id="wf-r", payload=PAYLOADS["START"])
    assert (await Projector(store, registry=REGISTRY).handle(start)).accepted
    return store


async def test_a_letter_of_a_sender_without_standing_would_be_dead_lettered_again() -> None:
    letter = _letter("wf.in.signal.support.intruder", "unknown_client")

    preview = await preview_letter(await _store(), letter, {}, GATE)

    assert (preview["outcome"], preview["reason"]) == ("refused", "unknown_client")
    assert "dead-letter it again" in preview["detail"]


async def test_a_letter_of_a_configured_sender_is_decided_on_its_workflow() -> None:
    letter = _letter("wf.in.signal.support.desk", "unknown_client")

    preview = await preview_letter(await _store(), letter, {}, GATE)

    assert (preview["outcome"], preview["to_state"]) == ("accepted", "CANCELLED")
