"""The hostile messages of `interlock hostile`: every kind is made, a seed makes the same
messages again, and none is one its sender may legitimately send."""

from __future__ import annotations

import random
from collections import Counter

from interlock.contracts.envelope import parse_envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.ids import job_id_for, result_event_id, timer_event_id, timer_id_for
from interlock.contracts.subjects import HEADER_MSG_ID
from interlock.projector.door import OccurredWindow
from interlock.tools.hostile import reads
from interlock.tools.hostile.doorway import DOOR_FORGERS, FOREIGN
from interlock.tools.hostile.forge import FORGERS, GATEWAY, HEADER, STAGES, Target, forge
from interlock.tools.hostile.web import CONSOLE, GATEWAY_READ, WEB_FORGERS, fate

TARGET = Target(
    tenant_id="acme",
    workflow_id="wf-1",
    start=b'{"event_id": "req-1"}',
    start_msg_id="req-1",
    open_jobs={"job-1": "classify"},
    timers={"timer-1": "DEADLINE_EXCEEDED"},
    version=6,
)


def test_every_kind_is_made_and_numbered() -> None:
    made = forge(random.Random(7), 1000, 500, [TARGET])

    assert set(Counter(h.kind for h in made)) == set(FORGERS)
    assert [h.number for h in made] == list(range(1000, 1500))
    over_http = (GATEWAY, CONSOLE, GATEWAY_READ)  # broker messages carry their number
    assert all(h.headers[HEADER] == str(h.number) for h in made if h.identity not in over_http)


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


def test_squats_spend_the_message_ids_of_results_and_firings_the_target_will_have() -> None:
    made = forge(random.Random(5), 0, 600, [TARGET])
    coming = range(TARGET.version, TARGET.version + 5)
    jobs = {job_id_for("acme", "wf-1", v, s) for v in coming for s in STAGES} | {"job-1"}
    timers = {timer_id_for("acme", "wf-1", v, k) for v in coming for k in ("approval", "deadline")}
    timers.add("timer-1")

    results = [h for h in made if h.kind == "squatted_result"]
    firings = [h for h in made if h.kind == "squatted_timer"]

    assert results
    assert firings
    assert {h.headers[HEADER_MSG_ID] for h in results} <= {result_event_id(j) for j in jobs}
    assert {h.headers[HEADER_MSG_ID] for h in firings} <= {timer_event_id(t) for t in timers}
    # sent as clients, on their own subjects: the broker lets them, the door must not
    assert {h.identity for h in results + firings} == {"upstream", "approvals"}


def test_an_unknown_workflow_signal_is_well_formed_and_names_no_good_workflow() -> None:
    made = [h for h in forge(random.Random(9), 0, 400, [TARGET]) if h.kind == "unknown_workflow"]

    assert made
    events = [parse_envelope(h.body) for h in made]
    assert all(e.workflow_id != TARGET.workflow_id and e.tenant_id == "acme" for e in events)
    assert len({e.workflow_id for e in events}) == len(events)


def test_door_kinds_are_well_formed_and_each_one_its_sender_may_not_send() -> None:
    made = forge(random.Random(13), 0, 900, [TARGET])
    by_kind = {k: [h for h in made if h.kind == k] for k in DOOR_FORGERS}
    window = OccurredWindow()

    assert all(by_kind.values())
    timed = [parse_envelope(h.body) for h in by_kind["out_of_range_time"]]
    assert all(window.refusal(e) is not None for e in timed)
    foreign = [parse_envelope(h.body) for h in by_kind[FOREIGN]]
    desk = reads.policies("acme")[reads.DESK]
    assert {h.identity for h in by_kind[FOREIGN]} == {reads.DESK}
    assert all(e.tenant_id == "acme" and not desk.admits_tenant(e.tenant_id) for e in foreign)
    reused = [parse_envelope(h.body) for h in by_kind["reused_event_id"]]
    assert {e.event_id for e in reused} == {"req-1"}


def test_the_web_kinds_are_requests_and_their_fate_is_the_answer() -> None:
    made = [h for h in forge(random.Random(5), 0, 600, [TARGET]) if h.kind in WEB_FORGERS]

    assert {h.kind for h in made} == set(WEB_FORGERS)
    assert {h.identity for h in made} == {CONSOLE, GATEWAY_READ}
    assert all(h.subject.startswith("/") for h in made)
    logins = [h for h in made if h.kind == "console_login"]
    assert any(len(h.body) > 256 * 1024 for h in logins)  # past the console's body bound
    assert (fate(401, "console_login"), fate(303, "console_login"), fate(500, "x")) == (
        "console_login_401",
        "ACCEPTED",
        "UNACCOUNTED",
    )
