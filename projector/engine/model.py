"""Values the engine decides over and the decisions it returns. Frozen; no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from interlock.contracts.definition import Transition
from interlock.contracts.effects import EffectStatus
from interlock.contracts.envelope import Envelope
from interlock.contracts.guards import GuardPredicate
from interlock.contracts.model_calls import ModelCallRecord, ModelSpend

RejectReason = Literal[
    "invalid_transition",
    "guard_rejected",
    "stale_version",
    "terminal",
    "duplicate",
    "unknown_workflow",
    "idempotency_conflict",
    "idempotent_replay",
    # Refused at the projector's door, before the table is consulted:
    "kind_mismatch",
    "subject_mismatch",
    "unknown_client",
    "client_not_allowed_kind",
    "client_not_allowed_type",
    "client_not_allowed_tenant",
    "client_not_allowed_role",
    "event_not_emitted_by_stage",
    "job_of_another_stage",
    "bad_result_id",
    "bad_timer_id",
    "reserved_event_id",
    "sender_unsigned",
    "sender_mismatch",
    # A different message under the id of one already decided (`projector.duplicates`):
    "event_id_reused",
    # A job's second answer saying otherwise for certain about an effect (`projector.duplicates`):
    "rerun_answered_otherwise",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TimerRef(_Frozen):
    """An armed timer. `scope` is the state whose exit cancels it (None: the workflow's end)."""

    id: str
    kind: str
    event: str
    fire_at: datetime
    scope: str | None = None
    branch: str | None = None


class OpenJob(_Frozen):
    stage: str
    branch: str | None = None


class BranchState(_Frozen):
    status: Literal["running", "retry_wait", "succeeded", "cancelled"]
    attempts: int = 0


class Review(_Frozen):
    """Why a workflow is in manual review and where a retry would take it."""

    reason: str
    from_state: str
    event_type: str
    target: str | None = None
    idempotency_key: str | None = None
    """Of an effect whose outcome is unknown: what to ask the provider about first."""

    @property
    def note(self) -> str:
        """What the audit row of entering review says."""
        if self.idempotency_key is None:
            return self.reason
        return f"{self.reason}: check the provider for idempotency key {self.idempotency_key}"


class EffectFact(_Frozen):
    """What the engine knows of one effect: its status and the key to ask the provider by."""

    status: EffectStatus = "none"
    idempotency_key: str | None = None


class Execution(_Frozen):
    """Runtime bookkeeping beside the business state: attempts and counters per state, the
    step a retry returns to, a requested cancellation, the jobs still open and the armed
    timers."""

    attempts: dict[str, int] = {}
    counters: dict[str, int] = {}
    retry_target: str | None = None
    cancel_requested: bool = False
    open_jobs: dict[str, OpenJob] = {}
    timers: dict[str, TimerRef] = {}
    branches: dict[str, BranchState] = {}
    review: Review | None = None
    effects: dict[str, EffectFact] = {}
    """By effect state, for every effect that left `none` (see `contracts.effects`)."""
    model_calls: tuple[ModelCallRecord, ...] = ()
    """Every model call the stages reported, in commit order (bounded: `model_calls`)."""
    model_spend: ModelSpend = ModelSpend()


class Workflow(_Frozen):
    """A persisted checkpoint: business state, data, execution state and versions."""

    workflow_id: str
    workflow_type: str
    tenant_id: str
    state: str
    version: int
    definition_version: int
    data: dict[str, Any] = {}
    execution: Execution = Execution()
    correlation_id: str | None = None
    seen_event_ids: frozenset[str] = frozenset()
    """The subset of event ids being decided that were already processed (set by the store)."""


@dataclass(frozen=True)
class Context:
    """What the engine may know about the outside world: the time and the deployment's
    overrides of definition parameters. Nothing else varies between two decisions of the same
    event (retry jitter is derived from the workflow), so both are recorded with the history
    and a replay decides exactly as the projector did."""

    now: datetime
    parameters: Mapping[str, Any] = field(default_factory=dict)
    guards: Mapping[str, GuardPredicate] = field(default_factory=dict)
    """The workflow type's plugin guards, by name (the built-in ones are `GUARDS`)."""


@dataclass(frozen=True)
class OutMessage:
    subject: str
    envelope: Envelope


@dataclass(frozen=True)
class Accepted:
    workflow: Workflow
    from_state: str
    transition: Transition
    messages: tuple[OutMessage, ...] = ()
    timers_armed: tuple[TimerRef, ...] = ()
    timers_cancelled: tuple[str, ...] = ()
    guard_results: tuple[str, ...] = ()
    note: str | None = None

    accepted: Literal[True] = True


@dataclass(frozen=True)
class Rejected:
    reason: RejectReason
    detail: str
    guard_results: tuple[str, ...] = ()
    retry_at: datetime | None = None
    """Set when the event is premature rather than wrong (a timer firing before its time,
    e.g. under clock skew): it should be decided again at `retry_at`, not discarded."""

    accepted: Literal[False] = False


Decision = Accepted | Rejected
