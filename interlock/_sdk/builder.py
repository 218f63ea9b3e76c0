"""`Workflow`: write a definition as a few declarations instead of one long literal.

```python
wf = Workflow("hello", version=1, parameters={"retry_delay_scale": 1.0})
wf.request(HelloRequest, into="request")           # START, stored as data["request"]
wf.result(Greeted, into="greeting")                # a stage result event and its payload
wf.states("RECEIVED", "GREETING", "DONE", "FAILED", terminal=("DONE", "FAILED"))
wf.stage("GREETING", greet, inputs=("request",), retry=Retry(max_attempts=3))
wf.on("RECEIVED", "START", "GREETING")
wf.on("GREETING", Greeted, "DONE")
DEFINITION = wf.build()
```
`build()` returns the runtime's `WorkflowDefinition` — definitions stay data, interpreted by
the engine and proved by the graph check exactly as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from interlock._sdk.effects import Effects
from interlock._sdk.process import Process
from interlock._sdk.results import EventRef, Result, event_name
from interlock._sdk.stages import StageLike
from interlock.contracts import payloads
from interlock.contracts.definition import (
    GENERIC_RESULTS,
    Announcement,
    DataUpdate,
    EventSource,
    EventSpec,
    Gate,
    Guard,
    Limit,
    Parallel,
    RetryPolicy,
    Stage,
    TimerSpec,
    Transition,
    WorkflowDefinition,
)

Retry = RetryPolicy
Timer = TimerSpec

_GENERIC_PAYLOADS: dict[str, type[BaseModel]] = {
    "RETRYABLE_ERROR": payloads.ErrorReport,
    "PERMANENT_ERROR": payloads.ErrorReport,
    "ESCALATE": payloads.Escalation,
}


def check(name: str, **params: object) -> Guard:
    """A guard on a row: a built-in guard (e.g. `check("has_data", key="x")`) or one the
    plugin registered with `@guard`."""
    return Guard(name=name, params=params)


class Workflow(Effects, Process):
    """Builder of one version of one workflow type (see the module's example)."""

    def __init__(
        self,
        workflow_type: str,
        *,
        version: int = 1,
        description: str = "",
        parameters: Mapping[str, object] | None = None,
    ) -> None:
        self.workflow_type = workflow_type
        self.version = version
        self.description = description
        self._fields: dict[str, Any] = {"parameters": dict(parameters or {})}
        self._states: list[str] = []
        self._events: dict[str, EventSpec] = {}
        self._rows: list[Transition] = []
        self._stages: dict[str, Stage] = {}
        self._retry: dict[str, RetryPolicy] = {}
        self._updates: dict[str, DataUpdate] = {}
        self._sets: dict[str, set[str]] = {}
        self._lists: dict[str, list[Any]] = {}

    # events -------------------------------------------------------------------------------
    def event(
        self,
        name: str,
        source: EventSource,
        payload: type[BaseModel] | None = None,
        *,
        into: str | None = None,
        versioned: bool = False,
        merge: bool = False,
    ) -> Workflow:
        """Declare an event; `into` stores its payload as workflow data under that key (and
        with `merge`, each of its fields as a top-level data key too)."""
        if name in self._events:
            raise ValueError(f"event {name!r} declared twice")
        answers_job = source == "result"
        self._events[name] = EventSpec(
            name=name, source=source, answers_job=answers_job, payload=payload
        )
        if into is not None:
            self._updates[name] = DataUpdate(key=into, versioned=versioned, merge=merge)
        return self

    def request(
        self, payload: type[BaseModel], *, name: str = "START", into: str | None = "request"
    ) -> Workflow:
        """The start event, sent by an upstream system."""
        self._fields["start_event"] = name
        return self.event(name, "request", payload, into=into)

    def result(
        self,
        model: type[Result],
        *,
        into: str | None = None,
        versioned: bool = False,
        merge: bool = False,
    ) -> Workflow:
        """A stage result event whose payload is `model` (its name is `model.__event__`)."""
        name = model.event_name()
        return self.event(name, "result", model, into=into, versioned=versioned, merge=merge)

    def signal(
        self, name: str, payload: type[BaseModel] = payloads.Empty, *, into: str | None = None
    ) -> Workflow:
        return self.event(name, "signal", payload, into=into)

    def failures(self, *names: str) -> Workflow:
        """The generic stage results this workflow handles (default: all three)."""
        for name in names or sorted(GENERIC_RESULTS):
            self.event(name, "result", _GENERIC_PAYLOADS[name])
        return self

    def timer(self, timer: TimerSpec) -> Workflow:
        """A durable timer; its event is declared with the timer payload if it is not yet."""
        if timer.event not in self._events:
            self.event(timer.event, "timer", payloads.TimerFired)
        self._lists.setdefault("timers", []).append(timer)
        return self

    # states -------------------------------------------------------------------------------
    def states(
        self,
        *names: str,
        initial: str | None = None,
        terminal: Iterable[str] = (),
        waiting: Iterable[str] = (),
        effects: Iterable[str] = (),
        cancellable: Iterable[str] = (),
    ) -> Workflow:
        """Declare states (the first one is initial unless `initial` says otherwise) and
        which of them are terminal, waiting (hold no worker), effect states or cancellable."""
        self._states.extend(n for n in names if n not in self._states)
        if initial is not None or "initial_state" not in self._fields:
            self._fields["initial_state"] = initial or names[0]
        for key, given in (
            ("terminal_states", terminal),
            ("waiting_states", waiting),
            ("effect_states", effects),
            ("cancellable_states", cancellable),
        ):
            self._sets.setdefault(key, set()).update(given)
        return self

    def review(self, state: str, *, resumable: Iterable[str] = ()) -> Workflow:
        """The manual review state and the states review may send a workflow back to."""
        self._fields["review_state"] = state
        self._sets.setdefault("resumable_states", set()).update(resumable)
        return self

    def stage(
        self,
        state: str,
        handler: StageLike | str,
        *,
        inputs: Iterable[str] = (),
        emits: Iterable[EventRef] = (),
        retry: RetryPolicy | None = None,
        model: bool | None = None,
    ) -> Workflow:
        """The stage that works in `state`, the data it is given, and its retry policy.
        Given a `StageHandler`, its result models are what it emits. `model` marks a model
        step, which a model budget guards (default: a handler whose `system` is "model")."""
        if not isinstance(handler, str):
            name, emitted = handler.name, sorted(handler.events())
            model = handler.system == "model" if model is None else model
        else:
            name, emitted = handler, [event_name(e) for e in emits]
        self._stages[state] = Stage(
            name=name, inputs=tuple(inputs), emits=tuple(emitted), model=bool(model)
        )
        if retry is not None:
            self._retry[state] = retry
        return self

    # rows and policies --------------------------------------------------------------------
    def on(
        self,
        source: str,
        event: EventRef,
        target: str,
        *,
        guards: Iterable[Guard] = (),
        limit: Limit | None = None,
        action: str | None = None,
        reissue: bool = False,
        reason: str | None = None,
    ) -> Workflow:
        """A transition row; rows sharing (source, event) are tried in the order written."""
        self._rows.append(
            Transition(
                source=source,
                event=event_name(event),
                target=target,
                guards=tuple(guards),
                limit=limit,
                action=action,
                reissue=reissue,
                reason=reason,
            )
        )
        return self

    def retrying(
        self, state: str, policy: RetryPolicy, *, exhausted: str, reason: str = "retry_exhausted"
    ) -> Workflow:
        """Retry `state`'s stage durably after `RETRYABLE_ERROR`: wait in `state` for a backoff
        timer (`RETRY_DUE`), issue the job again, and after `policy.max_attempts` failures
        go to `exhausted` with `reason`. Needs the `retry_delay_scale` parameter (1.0)."""
        self._retry[state] = policy
        self._fields.setdefault("retry_wait_state", state)
        self._fields["parameters"].setdefault("retry_delay_scale", 1.0)
        if "RETRYABLE_ERROR" not in self._events:
            self.event("RETRYABLE_ERROR", "result", payloads.ErrorReport)
        if "RETRY_DUE" not in self._events:
            self.event("RETRY_DUE", "timer", payloads.TimerFired)
        attempts = Guard(name="attempts_remaining")
        self.on(state, "RETRYABLE_ERROR", state, guards=(attempts,), action="schedule_retry")
        self.on(state, "RETRYABLE_ERROR", exhausted, reason=reason)
        return self.on(state, "RETRY_DUE", state, reissue=True)

    def rows(self, *rows: Transition) -> Workflow:
        self._rows.extend(rows)
        return self

    def parallel(self, parallel: Parallel) -> Workflow:
        self._lists.setdefault("parallel", []).append(parallel)
        return self

    def announce(
        self,
        announcement: Announcement | str,
        name: str | None = None,
        *,
        fields: Mapping[str, str] | None = None,
    ) -> Workflow:
        """Publish on entering a state: an `Announcement`, or its state, name and fields."""
        if isinstance(announcement, str):
            announcement = Announcement(
                state=announcement, name=name or announcement.lower(), fields=dict(fields or {})
            )
        self._lists.setdefault("announcements", []).append(announcement)
        return self

    def gate(
        self, state: str, *events: str, guard: str | None = None, any_of: bool = False
    ) -> Workflow:
        """`state` may only be entered through `events`, each under `guard`; every path in
        passes all of them (or with `any_of`, at least one)."""
        gate = Gate(state=state, events=events, guard=guard, any_of=any_of)
        self._lists.setdefault("gates", []).append(gate)
        return self

    def settings(self, **fields: object) -> Workflow:
        """Any other field of `WorkflowDefinition` (e.g. `retry_wait_state`)."""
        self._fields.update(fields)
        return self

    def build(self) -> WorkflowDefinition:
        return WorkflowDefinition(
            workflow_type=self.workflow_type,
            version=self.version,
            description=self.description,
            states=tuple(self._states),
            events=tuple(self._events.values()),
            transitions=tuple(self._rows),
            stages=self._stages,
            retry=self._retry,
            data_updates=self._updates,
            **{k: frozenset(v) for k, v in self._sets.items()},
            **{k: tuple(v) for k, v in self._lists.items()},
            **self._fields,
        )
