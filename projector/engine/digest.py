"""What a decision produced, reduced to what a replay compares: the state and version as they
are, and a digest of the data, the execution bookkeeping, the jobs, the other outbox messages
and the timers. The history keeps this beside each decided event, so that re-deciding the
event later (`interlock replay`) can say which of these came out differently.

Job signatures are left out: they prove who issued a job, not what the decision was, and a
replay decides without the installation's signing key.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from interlock.contracts.jobs import JOB_EVENT_TYPE
from interlock.contracts.model_calls import ACCEPTED_CALLS
from interlock.projector.engine.failures import LAST_ERROR
from interlock.projector.engine.model import Decision, OutMessage

FIELDS = (
    "accepted",
    "reason",
    "state",
    "version",
    "data",
    "execution",
    "jobs",
    "outbox",
    "timers",
    "effects",
    "model_calls",
)
"""Every field of an outcome, in the order a replay reports them."""
OPTIONAL_FIELDS = frozenset({"effects", "model_calls"})
_APART = {"open_jobs", "timers", "effects", "model_calls", "model_spend"}
"""Execution fields digested on their own (or, for open jobs and timers, with the jobs and
timers), so that histories recorded before a field existed still compare equal."""
"""Fields added after histories were recorded: compared only where the record has them."""


def outcome(decision: Decision) -> dict[str, Any]:
    """The comparable outcome of `decision`: a refusal's reason, or an acceptance's state,
    version and digests."""
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


def decided_data(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as a decision is compared: without the engine's note of the last failure
    (`failures.LAST_ERROR`), which records why and decides nothing, and without the pointers
    to accepted model calls (compared with the calls, under `model_calls`)."""
    return {k: v for k, v in data.items() if k not in (LAST_ERROR, ACCEPTED_CALLS)}


def _message(message: OutMessage) -> dict[str, Any]:
    envelope = message.envelope.model_dump(mode="json")
    # What the signer adds (the signature, the sealed reply id) is not the engine's decision.
    signed = ("signature", "reply_id")
    envelope["payload"] = {k: v for k, v in envelope["payload"].items() if k not in signed}
    return {"subject": message.subject, "envelope": envelope}


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
