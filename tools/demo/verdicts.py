"""Outcomes and the case runner's counters, derived only from what the stack recorded.

Sources: the projector's dead letters (a request the door refused), its audit rows (the
door's idempotency verdicts, every transition with its reason), the workflows' final
states, and the simulator's effect ledger. A case's `expected` outcome is never consulted.

Counters (named as the case file's own runner names them, which `--json` keeps):
- `completed`, `policy_blocks`, `idempotent_replays`, `idempotency_conflicts`,
  `controlled_failures`: cases by outcome;
- `approval_required`: runs whose audit shows them entering `approval_required`;
- `bounded_retries`: accepted `RETRYABLE_ERROR`s that scheduled a retry (stayed put);
- `checkpoint_resumes`: accepted `RESUME`s plus accepted `APPROVED`s (a run continuing
  from its approval checkpoint);
- `authorized_effects` / `unauthorized_effects`: effect ledger rows of the runs whose
  recorded authorisation does / does not point at an accepted `EFFECT_AUTHORIZED` into
  `executing` on the right basis (a bound approval only after an accepted approval).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

COUNTERS = (
    "cases",
    "completed",
    "approval_required",
    "policy_blocks",
    "idempotent_replays",
    "idempotency_conflicts",
    "bounded_retries",
    "checkpoint_resumes",
    "controlled_failures",
    "authorized_effects",
    "unauthorized_effects",
)
CONTROLLED = frozenset(
    {
        "invalid_event",
        "unsupported_request",
        "classification_invalid",
        "retry_exhausted",
        "approval_stale",
        "approval_expired",
        "state_conflict",
    }
)
"""Runs that failed closed with a defined reason. Policy blocks and idempotency verdicts
are outcomes of their own; a crashed or stuck run is none of these."""
IDEMPOTENCY = ("idempotent_replay", "idempotency_conflict")
SETTLED_AS = {"completed": "completed", "blocked": "policy_block"}

View = Mapping[str, Any]


def door_outcome(dead_letter: str | None, row: Mapping[str, Any] | None) -> str | None:
    """The outcome decided at the projector's door, or None if the request created a run."""
    if dead_letter is not None:
        return "invalid_event" if dead_letter == "schema_mismatch" else f"dead_letter:{dead_letter}"
    if row is None:
        return "not_decided"
    if row["accepted"]:
        return None
    reason = str(row["reason"])
    return reason if reason in IDEMPOTENCY else f"refused:{reason}"


REFUSED_AS = {"invalid_transition": "state_conflict"}
"""A command the table has no row for in the run's state is what the case file's runner
calls a state conflict (its table "rejects every unlisted edge")."""


def run_outcome(view: View | None) -> str:
    """A run's outcome: its terminal state; for `failed` the reason of that transition; for
    `cancelled` the refusal of the command it was cancelled after, if any (request v3)."""
    if view is None:
        return "not_created"
    state = view["state"]
    if state in SETTLED_AS:
        return SETTLED_AS[state]
    if state == "cancelled":
        return _refused_command(view) or "cancelled"
    if state != "failed":
        return f"unsettled:{state}"
    into = [a for a in view["audit"] if a["accepted"] and a["to_state"] == "failed"]
    return str(into[-1]["detail"] or "failed") if into else "failed"


def _refused_command(view: View) -> str | None:
    """The outcome of the last signal refused before the run's cancellation, if it was one
    `REFUSED_AS` names."""
    trail = list(view["audit"])
    cancel = max(
        (i for i, a in enumerate(trail) if a["accepted"] and a["to_state"] == "cancelled"),
        default=len(trail),
    )
    refused = [
        REFUSED_AS[a["reason"]]
        for a in trail[:cancel]
        if not a["accepted"] and a["reason"] in REFUSED_AS
    ]
    return refused[-1] if refused else None


def _accepted(view: View, event_type: str) -> list[Mapping[str, Any]]:
    return [a for a in view["audit"] if a["accepted"] and a["event_type"] == event_type]


def authorised(effect: Mapping[str, Any], view: View | None) -> bool:
    """Whether the ledger row's recorded authority is an accepted transition into
    `executing` of its own run, on the basis it claims."""
    authority = effect.get("authorized_by") or {}
    if view is None or view["workflow_id"] != effect["workflow_id"]:
        return False
    trail = list(view["audit"])
    index = next(
        (
            i
            for i, a in enumerate(trail)
            if a["event_id"] == authority.get("authorization_id")
            and a["accepted"]
            and a["event_type"] == "EFFECT_AUTHORIZED"
            and a["to_state"] == "executing"
        ),
        None,
    )
    if index is None:
        return False
    basis, source = authority.get("basis"), trail[index]["from_state"]
    if basis == "route":
        return bool(source == "classified")
    approvals = [a for a in trail[:index] if a["accepted"] and a["event_type"] == "APPROVED"]
    return basis == "approval" and source == "approved" and bool(approvals)


def summary(
    outcomes: Sequence[str], views: Iterable[View], effects: Iterable[Mapping[str, Any]]
) -> dict[str, int]:
    """The counters, in the order the case runner prints them."""
    runs = {v["workflow_id"]: v for v in views}
    ledger = list(effects)
    authorised_rows = sum(authorised(e, runs.get(e["workflow_id"])) for e in ledger)
    counts = {
        "cases": len(outcomes),
        "completed": outcomes.count("completed"),
        "approval_required": sum(
            any(a["accepted"] and a["to_state"] == "approval_required" for a in v["audit"])
            for v in runs.values()
        ),
        "policy_blocks": outcomes.count("policy_block"),
        "idempotent_replays": outcomes.count("idempotent_replay"),
        "idempotency_conflicts": outcomes.count("idempotency_conflict"),
        "bounded_retries": sum(
            a["to_state"] == a["from_state"]
            for v in runs.values()
            for a in _accepted(v, "RETRYABLE_ERROR")
        ),
        "checkpoint_resumes": sum(
            len(_accepted(v, "RESUME"))
            + sum(a["to_state"] == "approved" for a in _accepted(v, "APPROVED"))
            for v in runs.values()
        ),
        "controlled_failures": sum(o in CONTROLLED for o in outcomes),
        "authorized_effects": authorised_rows,
        "unauthorized_effects": len(ledger) - authorised_rows,
    }
    return {name: int(counts[name]) for name in COUNTERS}
