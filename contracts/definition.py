"""A workflow definition is data: states, events, the transition table, guards and policies.

The transition engine interprets a definition; it hard-codes no workflow. Everything a reader
needs to know about what may happen next is in one `WorkflowDefinition` value, which the graph
check (`contracts.graphcheck`) can analyse without running anything.

Conventions used in transition targets:

* a plain state name is a fixed target;
* `RETRY_TARGET` returns to the state whose retry was scheduled;
* `REVIEW_TARGET` returns from manual review to the state that escalated.

The graph check expands both to every state they can denote.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from interlock.contracts.effects import Effect, Terminal

RETRY_TARGET = "@retry_target"
REVIEW_TARGET = "@review_target"

EventSource = Literal["request", "result", "signal", "timer"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Guard(_Frozen):
    """A named, side-effect-free predicate over (workflow, event, now), with parameters."""

    name: str
    params: dict[str, object] = Field(default_factory=dict)


class Limit(_Frozen):
    """Bounds a loop: the transition is taken at most `max` times per workflow."""

    counter: str
    max: int = Field(ge=0)


class Transition(_Frozen):
    """`(source, event) -> target`, taken only if all its guards hold and its limit allows.

    Several transitions may share `(source, event)`: they are tried in table order and the
    first eligible one wins, so a guarded edge followed by an unguarded fallback expresses
    "if … else …" as data. `action` names an engine bookkeeping step (scheduling a retry,
    marking a branch done, deferring a cancellation …). A self-transition re-issues the
    state's stage job only when `reissue` is set.
    """

    source: str
    event: str
    target: str
    guards: tuple[Guard, ...] = ()
    limit: Limit | None = None
    action: str | None = None
    reissue: bool = False
    reason: str | None = None
    """Why this edge exists, recorded on the workflow when it leads to manual review."""


GENERIC_RESULTS = frozenset({"RETRYABLE_ERROR", "PERMANENT_ERROR", "ESCALATE"})
"""Results any stage may submit for its job (where the definition has them): a transient or
permanent failure, or giving up (the stage runtime escalates on its last delivery)."""


class Stage(_Frozen):
    """The stage service that does a state's work: its job subject, the data it reads and the
    results it may submit. The projector refuses any other result from that stage."""

    name: str
    inputs: tuple[str, ...] = ()
    emits: tuple[str, ...] = ()
    """Its result events besides the generic ones (`GENERIC_RESULTS`)."""
    model: bool = False
    """Its work is a model call: a model budget (`contracts.model_calls`) guards its jobs."""


class RetryPolicy(_Frozen):
    """Durable retry of a state's stage after a transient error.

    `max_attempts` counts executions including the first: after that many failures the
    workflow leaves for the exhaustion target. The delay before attempt n+1 is
    `min(cap, base * 2**(n-1))` plus up to `jitter` of it at random.
    """

    max_attempts: int = Field(ge=1)
    max_attempts_param: str | None = None
    """If set, the definition parameter that overrides `max_attempts` for a deployment."""
    base_seconds: float = Field(default=1.0, gt=0)
    cap_seconds: float = Field(default=300.0, gt=0)
    jitter: float = Field(default=0.2, ge=0, le=1)

    def attempts_allowed(self, parameters: Mapping[str, object]) -> int:
        if self.max_attempts_param and self.max_attempts_param in parameters:
            return int(cast("int | str", parameters[self.max_attempts_param]))
        return self.max_attempts


class Branch(_Frozen):
    """One arm of a parallel state, with its own stage, status, attempts and artifact."""

    name: str
    label: str
    """The state name a reader would use for this arm (e.g. RETRIEVING_POLICY)."""
    stage: Stage
    success_event: str
    retry: RetryPolicy


class Parallel(_Frozen):
    """A state whose branches run at once; the join fires when every branch succeeded."""

    state: str
    branches: tuple[Branch, ...]
    join_target: str
    failure_target: str


class TimerSpec(_Frozen):
    """A durable timer that fires `event` after a delay.

    A `state` timer is armed on entering `state` and cancelled on leaving it; a workflow
    timer (`state=None`) is armed when the workflow starts and cancelled when it terminates.
    The delay is the definition parameter named `delay_param` (seconds), so deployments can
    tune it without changing the definition.
    """

    kind: str
    event: str
    delay_param: str
    state: str | None = None


class DataUpdate(_Frozen):
    """Where an accepted event's payload is stored in workflow data.

    A `versioned` key also increments `<key>_version`, which guards compare against (an
    approval names the recommendation version it approves).
    """

    key: str
    versioned: bool = False
    merge: bool = False
    """Also set each of the payload's fields as a top-level data key (a result carrying
    `posting_number` makes it `data.posting_number`)."""


class Announcement(_Frozen):
    """A message published on `wf.out.<type>.<name>` when the workflow enters `state`.

    `fields` maps payload field -> dotted path into workflow data; `expiry_timer` adds the
    named timer's fire time as `expires_at`.
    """

    state: str
    name: str
    fields: dict[str, str] = Field(default_factory=dict)
    expiry_timer: str | None = None


class HumanWait(_Frozen):
    """A state where the workflow waits on a person, as data: who owns the task, how long it
    may wait, and how often it is announced again once overdue.

    Past `deadline_param` seconds in the state the wait is overdue and the state's
    announcement is published again (with `reminder: n`) every `reminder_every_param`
    seconds, at most `max_reminders` times. Reminders are the relay's, never an event: the
    transition table does not see them, so they cannot change a decision (or a replay). A
    parameter the definition does not declare takes the default of `contracts.progress`.
    """

    state: str
    owner_role: str
    deadline_param: str = "human_wait_deadline_seconds"
    reminder_every_param: str = "human_wait_reminder_seconds"
    max_reminders: int = Field(default=3, ge=0)


class Gate(_Frozen):
    """Safety gate: `state` may only be entered through `events`, each under `guard`; every
    path into it passes all of them, or with `any_of` at least one (alternative ways in, such
    as an approval or an amount below the approval threshold)."""

    state: str
    events: tuple[str, ...]
    guard: str | None = None
    any_of: bool = False


class EventSpec(_Frozen):
    """An event of the definition: who may send it and what its payload must look like.

    `answers_job`: the event is a stage result and must name an open job in `causation_id`.
    `payload` is the pydantic model of the payload, checked at the projector's door so a
    malformed payload is dead-lettered, never decided on.
    """

    name: str
    source: EventSource
    answers_job: bool = False
    payload: type[BaseModel] | None = None


class WorkflowDefinition(_Frozen):
    workflow_type: str
    version: int = Field(ge=1)
    description: str = ""
    states: tuple[str, ...]
    initial_state: str
    start_event: str = "START"
    terminal_states: frozenset[str]
    waiting_states: frozenset[str] = frozenset()
    effect_states: frozenset[str] = frozenset()
    review_state: str | None = None
    resumable_states: frozenset[str] = frozenset()
    """States manual review may send the workflow back to (never an effect state)."""
    events: tuple[EventSpec, ...]
    transitions: tuple[Transition, ...]
    stages: dict[str, Stage] = Field(default_factory=dict)
    retry: dict[str, RetryPolicy] = Field(default_factory=dict)
    retry_wait_state: str | None = None
    cancellable_states: frozenset[str] = frozenset()
    deferred_cancel_states: frozenset[str] = frozenset()
    parallel: tuple[Parallel, ...] = ()
    timers: tuple[TimerSpec, ...] = ()
    data_updates: dict[str, DataUpdate] = Field(default_factory=dict)
    announcements: tuple[Announcement, ...] = ()
    gates: tuple[Gate, ...] = ()
    effects: tuple[Effect, ...] = ()
    """The outside effects and the events that settle them (undeclared effect states get a
    default: `contracts.effectcheck.effects_of`)."""
    terminals: tuple[Terminal, ...] = ()
    """What each terminal state promises about the effects (undeclared: nothing)."""
    human_waits: tuple[HumanWait, ...] = ()
    parameters: dict[str, object] = Field(default_factory=dict)
    """Tunables with defaults (delays in seconds, approver limits); deployments override."""

    def event(self, name: str) -> EventSpec | None:
        return next((e for e in self.events if e.name == name), None)

    def transitions_from(self, state: str, event: str) -> tuple[Transition, ...]:
        return tuple(t for t in self.transitions if t.source == state and t.event == event)

    def parallel_state(self, state: str) -> Parallel | None:
        return next((p for p in self.parallel if p.state == state), None)

    def is_terminal(self, state: str) -> bool:
        return state in self.terminal_states

    def terminal(self, state: str) -> Terminal | None:
        return next((t for t in self.terminals if t.state == state), None)

    def announcement(self, state: str) -> Announcement | None:
        return next((a for a in self.announcements if a.state == state), None)

    def all_stages(self) -> tuple[Stage, ...]:
        """Every stage: of the states and of the parallel branches."""
        branches = (b.stage for p in self.parallel for b in p.branches)
        return (*self.stages.values(), *branches)

    def emitted_by(self, stage: str) -> frozenset[str]:
        """The result events stage `stage` may submit (none if it is not a stage here)."""
        own = {e for s in self.all_stages() if s.name == stage for e in s.emits}
        generic = GENERIC_RESULTS & {e.name for e in self.events} if own else set()
        return frozenset(own | generic)
