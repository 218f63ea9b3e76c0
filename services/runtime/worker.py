"""What serves one stage: its handler, how it consumes, and the one result a job produces."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope
from interlock.contracts.jobs import JobPayload


@dataclass(frozen=True)
class StageResult:
    """The one event a job produces."""

    event_type: str
    payload: Mapping[str, Any]


Handler = Callable[[JobPayload, Envelope], Awaitable[StageResult]]
Exhausted = Callable[[Exception, JobPayload], StageResult | None]
"""What a job whose every delivery failed with the exception submits; None: ESCALATE."""


@dataclass(frozen=True)
class StageWorker:
    """What serves the jobs of one stage (`contracts.definition.Stage`) of a workflow type:
    its handler and how it consumes."""

    workflow_type: str
    name: str
    handler: Handler
    heartbeat_s: float = subjects.STAGE_ACK_WAIT_S / 3
    effects: bool = False
    """Acts on the outside world: ask the projector whether the workflow still waits for the
    job before every job, and never act without its answer (see `admission`)."""
    exhausted: Exhausted | None = None
    redelivery_s: float = 1.0
    """Seconds before a failed job's first redelivery (doubled per delivery, at most 60)."""

    @property
    def source(self) -> str:
        return subjects.stage_consumer(self.workflow_type, self.name)

    @cached_property
    def actor(self) -> Actor:
        """Who submits this stage's results."""
        return Actor(id=f"{self.name}-service", role="service")
