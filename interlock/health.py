"""Is a component alive and attached? Answered from the outside, for health checks.

A consumer-based component (projector, stage services) is healthy when its durable consumer
has a pending pull request: someone is actively fetching. The others are healthy when their
dependency answers (the relay, timers and simulator hold database and broker connections;
their process supervisor restarts them if they die).
"""

from __future__ import annotations

import nats
from nats.js.errors import NotFoundError

from contracts import subjects


def _consumer_of(component: str) -> tuple[str, str] | None:
    if component == "projector":
        return subjects.STREAM_IN, subjects.CONSUMER_PROJECTOR
    if "." in component:
        workflow_type, stage = component.split(".", 1)
        return subjects.STREAM_JOBS, subjects.stage_consumer(workflow_type, stage)
    return None


async def attached(component: str, nats_url: str, database_url: str) -> tuple[bool, str]:
    """(healthy, a one-line explanation)."""
    try:
        nc = await nats.connect(nats_url, connect_timeout=2, max_reconnect_attempts=0)
    except Exception as exc:
        return False, f"broker unreachable: {type(exc).__name__}"
    try:
        target = _consumer_of(component)
        if target is None:
            return True, f"{component}: broker reachable"
        try:
            info = await nc.jetstream().consumer_info(*target)
        except NotFoundError:
            return False, f"{component}: consumer {target[1]} does not exist (run migrate)"
        if info.num_waiting:
            return True, f"{component}: {info.num_waiting} pull request(s) waiting"
        return False, f"{component}: nobody is fetching from {target[1]}"
    finally:
        await nc.close()
