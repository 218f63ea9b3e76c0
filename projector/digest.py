"""What a decision produced, reduced to what a replay compares: the state and version as they
are, and a digest of the data, the execution bookkeeping, the jobs, the other outbox messages
and the timers. The history keeps this beside each decided event, so that re-deciding the
event later (`interlock replay`) can say which of these came out differently.

Digests come in versions, and an outcome names the version it was digested with (`digest`;
none: version 1), so a replay recomputes each record's outcome as it was recorded:
- version 1: each part as the standard encoder's sorted, compact JSON (`json.dumps`);
- version 2 (written now): each part as orjson's sorted JSON, the execution dumped once for
  all the parts that come from it (or not at all, when the caller hands its dump over):
  about 40 % of version 1's time per decision. Its text is version 1's where the values are
  ASCII, and differs in text beyond ASCII (written as is, not escaped) and in some floats.
Both digest the same values, so they tell the same differences apart (but for NaN, which
version 2 writes as null, as the store's JSON columns do).

Job signatures are left out: they prove who issued a job, not what the decision was, and a
replay decides without the installation's signing key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import orjson

from interlock.contracts.jobs import JOB_EVENT_TYPE
from interlock.contracts.model_calls import ACCEPTED_CALLS
from interlock.projector.engine.failures import LAST_ERROR
from interlock.projector.engine.model import Accepted, Decision, OutMessage, Workflow

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
"""Fields added after histories were recorded: compared only where the record has them."""
_APART = {"open_jobs", "timers", "effects", "model_calls", "model_spend"}
"""Execution fields digested on their own (or, for open jobs and timers, with the jobs and
timers), so that histories recorded before a field existed still compare equal."""
VERSION = 2
"""The digest version decisions are recorded with."""
VERSIONS = frozenset({1, 2})
"""The digest versions a replay can recompute."""
_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def version_of(recorded: Mapping[str, Any]) -> Any:
    """The digest version a recorded outcome was made with (1 when it names none)."""
    return recorded.get("digest", 1)


def outcome(
    decision: Decision, version: int = VERSION, execution: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The comparable outcome of `decision`: a refusal's reason, or an acceptance's state,
    version and digests (of digest `version`, one of `VERSIONS`). `execution`: the
    workflow's execution as `model_dump(mode="json")` made it, when the caller has it
    (version 2 then dumps nothing of it again)."""
    if not decision.accepted:
        return {"accepted": False, "reason": decision.reason}
    if version not in VERSIONS:
        raise ValueError(f"unknown digest version {version}")
    wf = decision.workflow
    if version == 1:
        execution = _v1_execution(wf)
    elif execution is None:
        execution = wf.execution.model_dump(mode="json")
    parts = _parts(decision, wf, execution)
    digest = _digest_v1 if version == 1 else _digest_v2
    tag = {} if version == 1 else {"digest": version}
    return {
        "accepted": True,
        **tag,
        "state": wf.state,
        "version": wf.version,
        **{name: digest(value) for name, value in parts.items()},
    }


def _parts(decision: Accepted, wf: Workflow, execution: dict[str, Any]) -> dict[str, Any]:
    """The digested parts of an acceptance, from `execution` as `wf.execution` dumped."""
    jobs = [m for m in decision.messages if m.envelope.type == JOB_EVENT_TYPE]
    others = [m for m in decision.messages if m.envelope.type != JOB_EVENT_TYPE]
    return {
        "data": decided_data(wf.data),
        "execution": {k: v for k, v in execution.items() if k not in _APART},
        "jobs": {"open": execution["open_jobs"], "sent": [_message(m) for m in jobs]},
        "outbox": [_message(m) for m in others],
        "timers": {
            "armed": execution["timers"],
            "new": [t.model_dump(mode="json") for t in decision.timers_armed],
            "cancelled": list(decision.timers_cancelled),
        },
        "effects": execution["effects"],
        "model_calls": {
            "calls": execution["model_calls"],
            "spend": execution["model_spend"],
            "accepted": wf.data.get(ACCEPTED_CALLS),
        },
    }


def _v1_execution(wf: Workflow) -> dict[str, Any]:
    """The execution as version 1 dumped it, part by part (the same values as one dump of
    the whole)."""
    ex = wf.execution
    return {
        **ex.model_dump(mode="json", exclude=_APART),
        "open_jobs": {k: v.model_dump(mode="json") for k, v in ex.open_jobs.items()},
        "timers": {k: t.model_dump(mode="json") for k, t in ex.timers.items()},
        "effects": {k: v.model_dump(mode="json") for k, v in ex.effects.items()},
        "model_calls": [c.model_dump(mode="json") for c in ex.model_calls],
        "model_spend": ex.model_spend.model_dump(mode="json"),
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


def _digest_v1(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _digest_v2(value: Any) -> str:
    try:
        canonical = orjson.dumps(value, default=str, option=_SORTED)
    except TypeError:  # what orjson refuses (integers beyond 64 bits): the standard encoder's
        canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hashlib.sha256(canonical).hexdigest()[:16]
