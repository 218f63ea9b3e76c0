"""A small plugin with an outside effect, built to order for the test kit's tests: each test
changes one thing about it (a row, a stage, a guard) and sees what the test kit says."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from interlock import (
    GuardInput,
    Plugin,
    Port,
    Result,
    Retry,
    StageContext,
    StageHandler,
    Workflow,
    check,
    guard,
    stage,
)


class SendRequest(BaseModel):
    to: str


class Sent(Result):
    __event__ = "SENT"
    receipt: str


class Sender:
    """A fake outside system: fails with the queued errors first, then sends."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def send(self, to: str) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return f"r-{to}"


SENDER: Port[Sender] = Port("sender", default=lambda ctx: Sender())


class SendInputs(BaseModel):
    request: SendRequest


def send_stage(*, redeliver: bool = True, reads: type[BaseModel] = SendInputs) -> StageHandler[Any]:
    async def send(job: Any, ctx: StageContext) -> Sent:
        return Sent(receipt=await ctx.port(SENDER).send(job.request.to))

    return stage(
        "send", reads=reads, emits=(Sent,), ports=(SENDER,), effects=True, redeliver=redeliver
    )(send)


@guard
def allowed(g: GuardInput) -> bool:
    return True


def workflow(**changes: Any) -> Workflow:
    """The sender workflow; `retrying=False` leaves out the durable retry, `gate=False` the
    effect's gate, `effect_state=False` SENDING's listing as an effect state, `guard` names
    the guard on the gate's row."""
    wf = Workflow("sender", version=1)
    wf.request(SendRequest)
    wf.result(Sent, into="sent")
    wf.failures("PERMANENT_ERROR", "ESCALATE")
    effects = ("SENDING",) if changes.get("effect_state", True) else ()
    wf.states("RECEIVED", "SENDING", "SENT", "FAILED", terminal=("SENT", "FAILED"), effects=effects)
    wf.stage("SENDING", changes.get("stage", send_stage()), inputs=("request",))
    wf.on("RECEIVED", "START", "SENDING", guards=(check(changes.get("guard", "allowed")),))
    if changes.get("gate", True):
        wf.gate("SENDING", "START", guard="allowed")
    wf.on("SENDING", Sent, "SENT")
    if changes.get("retrying", True):
        wf.retrying("SENDING", Retry(max_attempts=3), exhausted="FAILED")
    wf.on("SENDING", "PERMANENT_ERROR", "FAILED", reason="permanent_error")
    wf.on("SENDING", "ESCALATE", "FAILED", reason="escalated")
    return wf


def plugin(edit: Callable[[Workflow], object] = lambda wf: None, **changes: Any) -> Plugin:
    handler = changes.setdefault("stage", send_stage())
    wf = workflow(**changes)
    edit(wf)
    return Plugin(
        workflow_type="sender",
        definitions=(wf.build(),),
        stages=(handler,),
        ports=(SENDER,),
        guards=(allowed,),
    )
