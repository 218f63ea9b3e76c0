"""Operator commands that send a signal and report the projector's decision."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.config.access import OPERATOR
from interlock.contracts.envelope import Actor
from interlock.contracts.urls import nats_inbox, nats_servers, nats_user
from interlock.ops import queries, signal_watch
from interlock.ops.errors import AmbiguousWorkflow, InvalidSignal, NotAccepted
from interlock.ops.signals import publish, refused_since, signal_envelope

DECISION_TIMEOUT = 15.0
QUEUED_AFTER = 2.0
"""Seconds without a decision after which a signal that no projector is consuming is
reported queued (a projector between two pulls shows as consuming well within it)."""


def caution(view: dict[str, Any]) -> dict[str, str]:
    """`{"caution": ...}` when an effect's outcome is unknown (the engine's fact, or a review
    entered for that reason): whoever decides must first ask the provider whether it
    happened, by the key it was made under."""
    execution = view.get("execution") or {}
    review = execution.get("review") or {}
    key = (
        review.get("idempotency_key") if review.get("reason") == "effect_outcome_unknown" else None
    )
    unknown = [f for f in (execution.get("effects") or {}).values() if f.get("status") == "unknown"]
    key = key or next((f.get("idempotency_key") for f in unknown if f.get("idempotency_key")), None)
    if not key and unknown:
        return {"caution": "an effect's outcome is unknown: it may have happened (no key recorded)"}
    if not key:
        return {}
    return {
        "caution": f"the effect's outcome is unknown: it may have happened. Check the provider "
        f"for idempotency key {key} before rejecting or retrying."
    }


async def send_and_wait(
    nats_url: str,
    database_url: str,
    workflow_id: str,
    event_type: str,
    *,
    payload: Callable[[dict[str, Any]], dict[str, Any]],
    actor: Actor | Callable[[dict[str, Any]], Actor],
    tenant_id: str | None = None,
    admin_url: str | None = None,
    letters_url: str | None = None,
) -> dict[str, Any]:
    """Send `event_type` to the workflow as the client `nats_url` connects as, and wait
    (bounded) for the recorded decision. `payload` and `actor` (or a function of the
    workflow's view making it) may raise `InvalidSignal`: nothing is sent, the outcome is
    `invalid_signal`. With `admin_url` (the broker's administrator), a signal that is
    dead-lettered, or that no projector is there to decide, is reported as such instead of
    being waited out; with `letters_url` (an identity that may only read the dead letters,
    such as the console's) a dead-lettered one is."""
    engine = queries.open_reader(database_url)
    try:
        try:
            view = await queries.workflow_view(engine, workflow_id, tenant_id)
        except AmbiguousWorkflow as exc:
            return {"accepted": False, "reason": "ambiguous_workflow", "detail": str(exc)}
        if view is None:
            return {"accepted": False, "reason": "unknown_workflow", "detail": workflow_id}
        try:
            signer = actor(view) if callable(actor) else actor
            event = signal_envelope(view, event_type, payload(view), signer)
        except NotAccepted as exc:
            return {"accepted": False, "reason": exc.reason, "detail": str(exc)}
        except InvalidSignal as exc:
            return {"accepted": False, "reason": "invalid_signal", "detail": str(exc)}
        admin = await _watcher(admin_url, letters_url)
        try:
            js = admin.jetstream() if admin else None
            mark = await signal_watch.dlq_mark(js) if js else 0
            nc = await nats.connect(
                nats_servers(nats_url), name="interlock-cli", inbox_prefix=nats_inbox(nats_url)
            )
            before = nc.last_error
            try:
                await publish(nc.jetstream(), event, nats_user(nats_url) or OPERATOR)
            except (nats.errors.Error, TimeoutError) as exc:
                return {"event_id": event.event_id, **_not_sent(nc, before, exc)}
            finally:
                await nc.drain()
            outcome = await _outcome(
                engine, js, view, event.event_id, mark, queue_check=admin_url is not None
            )
        finally:
            if admin is not None:
                await admin.drain()
        return {"event_id": event.event_id, **outcome, **caution(view)}
    finally:
        await engine.dispose()


def _not_sent(nc: Client, before: Exception | None, exc: Exception) -> dict[str, Any]:
    """The outcome of a signal the broker did not store: refused (its words), or not
    acknowledged (it may be down, or the signal's stream has no leader right now)."""
    refused = refused_since(nc, before)
    detail = (
        f"refused by the broker: {refused}"
        if refused is not None
        else f"the broker did not acknowledge it ({type(exc).__name__}); nothing is known stored"
    )
    return {"accepted": False, "reason": "not_sent", "detail": detail}


async def _watcher(admin_url: str | None, letters_url: str | None) -> Client | None:
    """A connection that reads the dead letters (as the administrator, or as an identity
    with its own inbox prefix), if either URL is given."""
    if admin_url:
        return await nats.connect(nats_servers(admin_url), name="interlock-cli-watch")
    if letters_url:
        return await nats.connect(
            nats_servers(letters_url),
            name="interlock-signal-watch",
            inbox_prefix=nats_inbox(letters_url),
        )
    return None


async def _outcome(
    engine: AsyncEngine,
    js: JetStreamContext | None,
    view: dict[str, Any],
    event_id: str,
    mark: int,
    *,
    queue_check: bool,
) -> dict[str, Any]:
    """The decision recorded for `event_id`; else its dead letter; else (`queue_check`: the
    watcher may list the projector's consumers), once no projector has been consuming for a
    moment, `queued`; else, at the deadline, `no_decision`."""
    began = time.monotonic()
    while time.monotonic() - began < DECISION_TIMEOUT:
        decision = await queries.decision_for(
            engine, view["workflow_id"], event_id, view["tenant_id"]
        )
        if decision is not None and (decision["accepted"] or js is None):
            return {**decision, **_failed_guards(decision)}
        if js is not None:
            # A dead letter is audited on its workflow too (after it is stored): report it as
            # dead-lettered, with the pointer to the letter.
            dead = await signal_watch.dead_letter_of(js, event_id, mark)
            if dead is not None:
                return {
                    "accepted": False,
                    "reason": "dead_lettered",
                    "detail": f"{dead.reason}: {dead.detail} (`interlock dlq show {dead.id}`)",
                }
            if decision is not None:
                return {**decision, **_failed_guards(decision)}
            waited = time.monotonic() - began
            if (
                queue_check
                and waited > QUEUED_AFTER
                and not await signal_watch.projector_consuming(
                    js, view["tenant_id"], view["workflow_id"]
                )
            ):
                return {
                    "accepted": False,
                    "reason": "queued",
                    "detail": "no projector is running: the signal is stored and will be "
                    "decided when the stack runs (`interlock up`)",
                }
        await asyncio.sleep(0.1)
    return {
        "accepted": False,
        "reason": "no_decision",
        "detail": f"no decision within {DECISION_TIMEOUT}s; is `interlock up` running?",
    }


def _failed_guards(decision: dict[str, Any]) -> dict[str, Any]:
    """The guards a refused transition failed, named (the audit keeps them as `!name`)."""
    failed = [g[1:] for g in decision.get("guard_results") or () if str(g).startswith("!")]
    return {"failed_guards": failed} if failed and not decision.get("accepted") else {}
