"""A hostile message and what it aims at (shared by the forgers of every kind)."""

from __future__ import annotations

from dataclasses import dataclass, field

ACCEPTED = "ACCEPTED"
"""The fate no hostile message may have: it changed a workflow (or got an answer that let it
through)."""
UNACCOUNTED = "UNACCOUNTED"
"""A message whose fate could not be read back (or a server error answered it)."""
HEADER = "Interlock-Hostile"
"""Every broker message carries its number here (dead letters keep the original headers)."""


@dataclass(frozen=True)
class Target:
    """A good workflow as it stands: what forgeries aim at."""

    tenant_id: str
    workflow_id: str
    start: bytes
    """Its request as published (replays repeat it)."""
    start_msg_id: str
    open_jobs: dict[str, str] = field(default_factory=dict)
    """Open job id -> the stage it belongs to."""
    timers: dict[str, str] = field(default_factory=dict)
    """Armed timer id -> the event it fires."""
    version: int = 1
    """Its state version (announced with every task): the ingredient of the ids of the jobs
    and timers it will have next."""


@dataclass(frozen=True)
class Hostile:
    number: int
    kind: str
    identity: str
    subject: str
    """A NATS subject, or the gateway's path."""
    body: bytes
    headers: dict[str, str]
    event_id: str | None = None
    """The event id the projector will see (None: the body cannot be read as an event)."""
