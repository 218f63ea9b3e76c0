"""The engine's note of why a stage failed, kept in the workflow's data for operators.

Every result that reports a failure (`RETRYABLE_ERROR`, `PERMANENT_ERROR`, `ESCALATE`, or any
result carrying an `error_class`) and is accepted leaves `data.last_error`: the state and stage
that failed, the event, its error class (an escalation's reason), the failing system and the
stage's redacted message. It stays after the workflow moves on (into `RETRY_WAIT`, review or a
terminal state), so `show`, the console and the audit say why, for every workflow type alike.

The note records; it decides nothing. A replay compares data without it
(`digest.decided_data`), so histories recorded before it existed re-decide identically.
"""

from __future__ import annotations

from typing import Any

from interlock.contracts.definition import GENERIC_RESULTS, EventSpec
from interlock.projector.engine.actions import Draft
from interlock.projector.engine.guards import Facts

LAST_ERROR = "last_error"


def is_failure(spec: EventSpec, payload: dict[str, Any]) -> bool:
    """`spec`'s event, with `payload`, reports that a stage failed."""
    return spec.answers_job and (spec.name in GENERIC_RESULTS or "error_class" in payload)


def note_failure(f: Facts, spec: EventSpec, d: Draft) -> None:
    """Record `f.event` as the workflow's last error if it reports a stage's failure."""
    payload = f.payload
    if not is_failure(spec, payload):
        return
    job = f.workflow.execution.open_jobs.get(f.event.causation_id or "")
    d.data[LAST_ERROR] = {
        "state": f.workflow.state,
        "stage": job.stage if job is not None else None,
        "event": f.event.type,
        "error_class": payload.get("error_class") or payload.get("reason"),
        "system": payload.get("system"),
        "message": payload.get("detail") or None,
    }
