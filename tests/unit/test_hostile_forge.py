"""The hostile messages of `interlock hostile`: every kind is made, a seed makes the same
messages again, and none is one its sender may legitimately send."""

from __future__ import annotations

import random
from collections import Counter

from interlock.contracts.envelope import parse_envelope
from interlock.contracts.errors import MalformedMessage
from interlock.tools.hostile.forge import FORGERS, GATEWAY, HEADER, Target, forge

TARGET = Target(
    tenant_id="acme",
    workflow_id="wf-1",
    start=b'{"event_id": "req-1"}',
    start_msg_id="req-1",
    open_jobs={"job-1": "classify"},
    timers={"timer-1": "DEADLINE_EXCEEDED"},
)


def test_every_kind_is_made_and_numbered() -> None:
    made = forge(random.Random(7), 1000, 500, [TARGET])

    assert set(Counter(h.kind for h in made)) == set(FORGERS)
    assert [h.number for h in made] == list(range(1000, 1500))
    assert all(h.headers[HEADER] == str(h.number) for h in made if h.identity != GATEWAY)


def test_a_seed_makes_the_same_messages_again() -> None:
    def ids(seed: int) -> list[tuple[str, str, str | None]]:
        return [
            (h.kind, h.subject, h.event_id) for h in forge(random.Random(seed), 0, 200, [TARGET])
        ]

    assert ids(3) == ids(3)
    assert ids(3) != ids(4)


def test_what_the_projector_can_read_of_a_malformed_kind_is_refused_at_the_door() -> None:
    made = forge(random.Random(11), 0, 400, [TARGET])
    unreadable = ("malformed", "oversized", "deeply_nested", "wrongly_encoded", "nul_bearing")

    for h in (h for h in made if h.kind in unreadable):
        try:
            parse_envelope(h.body)
        except MalformedMessage:
            continue
        raise AssertionError(f"{h.kind} message {h.number} reads as an envelope")
