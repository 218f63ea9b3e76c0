"""The outcome digest as decisions were recorded before digests had versions (commit 7596df3,
`projector/engine/digest.py`), kept verbatim as the reference a version 1 outcome must match."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from interlock.contracts.jobs import JOB_EVENT_TYPE
from interlock.contracts.model_calls import ACCEPTED_CALLS
from interlock.projector.digest import decided_data
from interlock.projector.engine.model import Decision, OutMessage

_APART = {"open_jobs", "timers", "effects", "model_calls", "model_spend"}


def outcome(decision: Decision) -> dict[str, Any]:
    if not decision.accepted:
        return {"accepted": False, "reason": decision.reason}
    wf = decision.workflow
    execution = wf.execution.model_dump(mode="json", exclude=_APART)
    jobs = [m for m in decision.messages if m.envelope.type == JOB_EVENT_TYPE]
    others = [m for m in decision.messages if m.envelope.type != JOB_EVENT_TYPE]
    return {
        "accepted": True,
        "state": wf.state,
        "version": wf.version,
        "data": _digest(decided_data(wf.data)),
        "execution": _digest(execution),
        "jobs": _digest(
            {
                "open": {k: v.model_dump(mode="json") for k, v in wf.execution.open_jobs.items()},
                "sent": [_message(m) for m in jobs],
            }
        ),
        "outbox": _digest([_message(m) for m in others]),
        "timers": _digest(
            {
                "armed": {k: t.model_dump(mode="json") for k, t in wf.execution.timers.items()},
                "new": [t.model_dump(mode="json") for t in decision.timers_armed],
                "cancelled": list(decision.timers_cancelled),
            }
        ),
        "effects": _digest({k: v.model_dump(mode="json") for k, v in wf.execution.effects.items()}),
        "model_calls": _digest(
            {
                "calls": [c.model_dump(mode="json") for c in wf.execution.model_calls],
                "spend": wf.execution.model_spend.model_dump(mode="json"),
                "accepted": wf.data.get(ACCEPTED_CALLS),
            }
        ),
    }


def _message(message: OutMessage) -> dict[str, Any]:
    envelope = message.envelope.model_dump(mode="json")
    signed = ("signature", "reply_id")
    envelope["payload"] = {k: v for k, v in envelope["payload"].items() if k not in signed}
    return {"subject": message.subject, "envelope": envelope}


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
