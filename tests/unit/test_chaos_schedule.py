"""The chaos schedule is a function of its seed: the same seed replays the same faults, and
a run faults every component kind and both servers, the long run with the long outages."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from interlock.app.composition import default_stack
from interlock.tools.chaos.schedule import (
    KINDS,
    LONG_NATS_STOP_S,
    LONG_POSTGRES_STOP_S,
    fingerprint,
    schedule,
)


def test_the_same_seed_replays_the_same_schedule_and_another_seed_does_not() -> None:
    names = default_stack()

    assert schedule(7, 120, names) == schedule(7, 120, names)
    assert fingerprint(schedule(7, 120, names)) != fingerprint(schedule(8, 120, names))


def test_a_short_run_faults_every_component_kind_and_restarts_both_servers() -> None:
    faults = schedule(7, 120, default_stack())

    kinds = Counter(f.component_kind for f in faults if f.component_kind)
    servers = Counter(f.kind for f in faults if f.kind in ("nats", "postgres"))
    assert set(kinds) == set(KINDS)
    assert servers == {"nats": 3, "postgres": 3}
    assert all(f.at + f.seconds < 120 for f in faults)


def test_the_long_run_has_sixty_kills_and_the_long_outages() -> None:
    faults = schedule(1000, 600, default_stack())

    kills = [f for f in faults if f.component_kind]
    stops = {(f.kind, f.seconds >= limit) for f in faults for limit in [_limit(f.kind)] if limit}
    assert len(kills) >= 60
    assert {("nats", True), ("postgres", True)} <= stops
    outages = sorted((f.at, f.at + f.seconds) for f in faults if f.kind in ("nats", "postgres"))
    assert all(end < start for (_, end), (start, _) in pairwise(outages))


def _limit(kind: str) -> float | None:
    return {"nats": LONG_NATS_STOP_S, "postgres": LONG_POSTGRES_STOP_S}.get(kind)


def test_with_partitions_the_projector_faults_hit_the_partitions() -> None:
    names = default_stack(partitions=3)
    faults = schedule(1000, 600, names)

    projector = [f for f in faults if f.component_kind == "projector"]
    killed = {f.target for f in projector if f.kind == "kill"}
    assert killed <= {"projector.0", "projector.1", "projector.2"}
    assert len(killed) > 1
    assert {f.target for f in projector if f.kind == "crash"} <= {"projector.after_commit"}
    assert "stage" in {f.component_kind for f in faults}
