"""The seeded fault schedule: what `interlock chaos` does to the stack, and when.

Everything random about a run comes from one `random.Random(seed)`: the schedule, the mix of
scenarios and the order of workflows. The same seed, workflow count, duration and installed
components give the same schedule, so a failing run is replayed by its seed.

Fault kinds:
- `kill`: SIGKILL one component process (the supervisor restarts it);
- `crash`: arm a crash point, so the component kills itself at that exact boundary (before a
  stage's call, after its effect, after its result; the relay after publishing; the timer
  service after firing; the projector after committing);
- `hold`: keep a stage down for a few seconds (its deliveries are delayed);
- `duplicate`: publish again a request or approval already sent (a duplicated delivery);
- `nats`, `postgres`: stop the broker or the database for `seconds`, then start it again.
Long runs (at least 400 s) include a broker stop of 180 s and a database stop of 90 s.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass

from interlock.contracts.partitions import is_projector

KINDS = ("projector", "relay", "timer", "sim", "stage")
"""Component kinds, as counted in the report's `faults`."""
EFFECTFUL = {
    "support": ("execute_action", "notify_customer", "compensate"),
    "request": ("execute_effect",),
}
CORE_POINTS = {
    "projector": "projector.after_commit",
    "relay": "relay.after_publish",
    "timer": "timer.after_publish",
}
STAGE_POINTS = ("before_call", "after_effect", "after_result")
LONG_RUN_S = 400.0
LONG_NATS_STOP_S = 180.0
LONG_POSTGRES_STOP_S = 90.0


@dataclass(frozen=True)
class Fault:
    at: float
    """Seconds after the start of the run."""
    kind: str
    target: str = ""
    seconds: float = 0.0

    @property
    def component_kind(self) -> str | None:
        """The kind of component this fault kills (kills and crash points), else None."""
        if self.kind not in ("kill", "crash"):
            return None
        return kind_of(self.target.split(".after_")[0].split(".before_")[0])


def kind_of(component: str) -> str:
    if is_projector(component):
        return "projector"
    return component if component in KINDS[:-1] else "stage"


def schedule(
    seed: int, duration: float, components: list[str], *, kill_every: float = 7.0
) -> list[Fault]:
    """The faults of one run, in time order."""
    rng = random.Random(seed)
    faults = [*_outages(rng, duration)]
    busy = [(f.at - 5.0, f.at + f.seconds + 10.0) for f in faults]
    stages = [c for c in components if kind_of(c) == "stage"]
    projectors = [c for c in components if kind_of(c) == "projector"]
    kinds = [
        k
        for k in KINDS
        if (k == "stage" and stages) or (k == "projector" and projectors) or k in components
    ]
    at = 3.0
    index = 0
    while at < duration - 5.0:
        kind = kinds[index % len(kinds)] if index < 2 * len(kinds) else rng.choice(kinds)
        faults.append(_component_fault(rng, at, kind, stages, projectors))
        index += 1
        at += rng.uniform(0.5, 1.5) * kill_every
    at = 10.0
    while at < duration - 10.0:
        if not any(start <= at <= end for start, end in busy):
            faults.append(_delivery_fault(rng, at, stages))
        at += rng.uniform(15.0, 30.0)
    return sorted(faults, key=lambda f: (f.at, f.kind, f.target))


def _outages(rng: random.Random, duration: float) -> list[Fault]:
    """Broker and database stops, never overlapping: three of each in a run, the long ones
    in a long run."""
    if duration >= LONG_RUN_S:
        plan = [
            ("nats", rng.uniform(5.0, 12.0)),
            ("postgres", LONG_POSTGRES_STOP_S + rng.uniform(0.0, 5.0)),
            ("nats", LONG_NATS_STOP_S + rng.uniform(0.0, 5.0)),
            ("postgres", rng.uniform(5.0, 12.0)),
            ("nats", rng.uniform(5.0, 12.0)),
            ("postgres", rng.uniform(5.0, 12.0)),
        ]
    else:
        plan = [(kind, rng.uniform(3.0, 8.0)) for kind in ("nats", "postgres") * 3]
    total = sum(seconds for _, seconds in plan)
    gap = max(5.0, (duration * 0.85 - total) / (len(plan) + 1))
    faults, at = [], gap
    for kind, seconds in plan:
        faults.append(Fault(round(at, 2), kind, seconds=round(seconds, 2)))
        at += seconds + gap
    return faults


def _component_fault(
    rng: random.Random, at: float, kind: str, stages: list[str], projectors: list[str]
) -> Fault:
    """A kill or crash of a component of `kind`: one of `stages`, one of several projector
    partitions (`projectors`), else the one component of that kind."""
    if kind == "stage":
        target = rng.choice(stages)
    elif kind == "projector" and len(projectors) > 1:
        target = rng.choice(projectors)
    else:
        target = kind
    point = _crash_point(rng, target)
    if point is not None and rng.random() < 0.5:
        return Fault(round(at, 2), "crash", point)
    return Fault(round(at, 2), "kill", target)


def _crash_point(rng: random.Random, target: str) -> str | None:
    if is_projector(target):  # armed for every partition: whichever commits next crashes
        return CORE_POINTS["projector"]
    if target in CORE_POINTS:
        return CORE_POINTS[target]
    workflow_type, _, stage = target.partition(".")
    if stage in EFFECTFUL.get(workflow_type, ()):
        return f"{target}.{rng.choice(STAGE_POINTS)}"
    return None


def _delivery_fault(rng: random.Random, at: float, stages: list[str]) -> Fault:
    if stages and rng.random() < 0.5:
        return Fault(round(at, 2), "hold", rng.choice(stages), seconds=round(rng.uniform(2, 6), 2))
    return Fault(round(at, 2), "duplicate")


def fingerprint(faults: list[Fault]) -> str:
    """A short digest of a schedule: equal digests, equal schedules."""
    text = json.dumps([asdict(f) for f in faults], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
