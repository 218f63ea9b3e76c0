"""Typed stage handlers: a pydantic model of what the stage reads, one `Result` per event.

```python
@stage("greet", reads=GreetInput, emits=(Greeted,), ports=(GREETER,))
async def greet(job: GreetInput, ctx: StageContext) -> Greeted:
    return Greeted(message=await ctx.port(GREETER).greet(job.request.name))
```
The plugin loader checks every stage against the definition: it must be a stage the
definition dispatches, read only data that stage is given, and emit exactly the events it
may submit, with the events' payload models.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar, cast

from pydantic import BaseModel

from interlock._sdk.ports import Port
from interlock._sdk.results import Result
from interlock.contracts.ids import result_event_id

In = TypeVar("In", bound=BaseModel)
P = TypeVar("P")


@dataclass(frozen=True)
class StageContext:
    """What a stage may know about its job besides its inputs, and its bound ports."""

    workflow_type: str
    workflow_id: str
    tenant_id: str
    job_id: str
    attempt: int
    idempotency_key: str
    """Stable across redeliveries and retries of the same job: hand it to an effect."""
    adapters: Mapping[str, object] = field(default_factory=dict)
    correlation_id: str | None = None
    """The business case the workflow serves (the start request's event id): a recorded
    model looks its answers up by it (`ModelRequest.case_key`)."""
    repair: bool = False
    """The job asks again after a model answer failed validation (see `ask`)."""

    @property
    def result_event_id(self) -> str:
        """The event id of the result this job yields, the same on every run of the job:
        a result may name itself (e.g. an authorisation an effect's ledger row points at)."""
        return result_event_id(self.job_id)

    def port(self, port: Port[P]) -> P:
        try:
            adapter = self.adapters[port.name]
        except KeyError:
            raise LookupError(f"port {port.name!r} is not bound for this stage") from None
        return cast("P", adapter)  # the runtime bound an adapter built by this very port


StageFn = Callable[[In, StageContext], Awaitable[Result]]


class StageLike(Protocol):
    """What a plugin and the runtime read of a stage, whatever model it reads: a
    `StageHandler` of any input model (see its fields)."""

    @property
    def name(self) -> str: ...
    @property
    def reads(self) -> type[BaseModel]: ...
    @property
    def emits(self) -> tuple[type[Result], ...]: ...
    @property
    def ports(self) -> tuple[Port[object], ...]: ...
    @property
    def effects(self) -> bool: ...
    @property
    def redeliver(self) -> bool: ...
    @property
    def system(self) -> str: ...
    def events(self) -> frozenset[str]: ...
    async def __call__(self, inputs: Mapping[str, object], ctx: StageContext) -> Result: ...


@dataclass(frozen=True)
class StageHandler(Generic[In]):
    """One stage of a plugin: its name, input model, result models and ports."""

    name: str
    reads: type[In]
    emits: tuple[type[Result], ...]
    run: StageFn[In]
    ports: tuple[Port[object], ...] = ()
    effects: bool = False
    """Acts on the outside world: the runtime asks the projector before each job whether the
    workflow still waits for it."""
    redeliver: bool = False
    """A transient failure (`ExternalTimeout`, `ExternalUnavailable`, `OutcomeUnknown`) is
    retried first by redelivering the job (the broker's growing backoff) instead of being
    reported as `RETRYABLE_ERROR` at once: for an effect reconciled by its key. After the
    last delivery the job reports `RETRYABLE_ERROR` where its state retries durably
    (`Workflow.retrying`), else `ESCALATE`; an `OutcomeUnknown` always escalates.
    `interlock.testing` follows the same path."""
    system: str = ""
    """Names the outside system in a transient failure's error class (`<system>_timeout`,
    `<system>_unavailable`); default: the stage's name."""

    def events(self) -> frozenset[str]:
        return frozenset(r.event_name() for r in self.emits)

    async def __call__(self, inputs: Mapping[str, object], ctx: StageContext) -> Result:
        """Run on a job's `inputs`: validated into `reads`, answered by one of `emits`."""
        result = await self.run(self.reads.model_validate(dict(inputs)), ctx)
        if not isinstance(result, self.emits):
            declared = sorted(self.events())
            raise TypeError(f"stage {self.name!r} returned {type(result).__name__}; {declared}")
        return result


def stage(
    name: str,
    *,
    reads: type[In],
    emits: tuple[type[Result], ...],
    ports: tuple[Port[object], ...] = (),
    effects: bool = False,
    redeliver: bool = False,
    system: str = "",
) -> Callable[[StageFn[In]], StageHandler[In]]:
    """Declare a stage handler (see the module's example and `StageHandler`'s fields)."""

    def declare(fn: StageFn[In]) -> StageHandler[In]:
        return StageHandler(
            name, reads, tuple(emits), fn, tuple(ports), effects, redeliver, system or name
        )

    return declare
