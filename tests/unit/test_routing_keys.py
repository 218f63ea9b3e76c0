"""Routing keys: the subject token that lets the broker route a workflow's messages to the
stream of the partition that owns it, and the projector's check that a subject does not lie."""

from __future__ import annotations

from collections import Counter

import pytest

from interlock.contracts import subjects
from interlock.contracts.envelope import workflow_id_of
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.partitions import (
    SLOTS,
    Partition,
    key_of,
    partition_of,
    routing_key,
    slot_of,
)
from interlock.messaging.permissions import gateway, stage, timer
from interlock.projector.partitioning import Owner
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY


def test_a_routing_key_is_sixteen_hex_digits_stable_across_releases() -> None:
    assert routing_key("acme", "wf-1") == PINNED_KEY
    assert routing_key("acme", "wf-1") != routing_key("globex", "wf-1")


PINNED_KEY = "7fcea33308462d35"


def test_the_slot_is_the_brokers_fnv1a_of_the_key() -> None:
    # FNV-1a (32 bits) of the token's bytes, as nats-server's partition() computes it; the
    # integration suite checks it against a running server.
    assert slot_of("") == 0x811C9DC5 % SLOTS
    assert [slot_of(k) for k in ("a", "0123456789abcdef")] == [0xE40C292C % SLOTS, PINNED_SLOT]


PINNED_SLOT = 61


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, SLOTS])
def test_a_workflows_partition_is_the_partition_of_its_slot(count: int) -> None:
    for i in range(200):
        key = routing_key("acme", f"wf-{i}")
        assert partition_of("acme", f"wf-{i}", count) == slot_of(key) % count
    slots = Counter(slot_of(routing_key("acme", f"wf-{i}")) for i in range(SLOTS * 50))
    assert sorted(slots) == list(range(SLOTS))
    assert min(slots.values()) > 20


def test_keyed_subjects_parse_back_with_or_without_the_brokers_slot() -> None:
    key = routing_key("acme", "wf-1")
    for subject, kind, sender in [
        (subjects.request("support", "upstream", key), "request", "upstream"),
        (subjects.signal("support", "approvals", key), "signal", "approvals"),
        (subjects.result("support", "classify", key), "result", "classify"),
        (subjects.timer("support", key), "timer", None),
    ]:
        assert subject.split(".")[-1 if sender is None else -2] == key
        mapped = subject.replace("wf.in.", f"wf.in.slot.{slot_of(key)}.", 1)
        for form, slot in [(subject, None), (mapped, slot_of(key))]:
            inbound = subjects.parse_inbound(form)
            assert (inbound.kind, inbound.workflow_type, inbound.sender) == (
                kind,
                "support",
                sender,
            )
            assert (inbound.key, inbound.slot) == (key, slot)
    assert subjects.parse_inbound("wf.in.request.support.upstream").key is None


@pytest.mark.parametrize(
    "subject",
    [
        "wf.in.slot.3.request.support.upstream",  # mapped but no key
        "wf.in.request.support.not-a-key.upstream",  # a key that is no routing key
        "wf.in.slot.x.request.support.0123456789abcdef.upstream",
        "wf.in.timer.support.0123456789abcdef.extra",
    ],
)
def test_a_malformed_keyed_subject_is_refused(subject: str) -> None:
    with pytest.raises(MalformedMessage, match="bad_subject"):
        subjects.parse_inbound(subject)


def test_a_publisher_keys_only_what_it_can_know() -> None:
    signal = envelope("CANCEL_REQUESTED", workflow_id="wf-9", role="operator")
    assert key_of(signal) == routing_key("acme", "wf-9")
    start = envelope("START", workflow_id=None, event_id="req-1")
    assert key_of(start) is None  # the id may come from a content key only the plugin knows
    assert key_of(start, REGISTRY) == routing_key("acme", REGISTRY.workflow_id(start))


def test_a_partition_decides_what_its_own_stream_holds_or_refuses_it() -> None:
    event = envelope("CANCEL_REQUESTED", workflow_id="wf-3", role="operator")
    home = partition_of("acme", "wf-3", 4)
    owner = Owner(Partition(home, 4), REGISTRY)
    stranger = Owner(Partition((home + 1) % 4, 4), REGISTRY)
    assert owner.claim(subjects.partition_stream(home), event) is event
    # Routed to another partition's stream (a lying key, another derivation of the id): that
    # partition alone reads it, so it refuses it rather than let it go undecided.
    refused = stranger.claim(subjects.partition_stream((home + 1) % 4), event)
    assert isinstance(refused, MalformedMessage)
    assert refused.reason == "partition_mismatch"
    malformed = MalformedMessage("bad_json", "x")
    assert stranger.claim(subjects.partition_stream((home + 1) % 4), malformed) is malformed
    # One partition: everything is its own, whatever the subject says.
    assert Owner(Partition(), REGISTRY).claim(subjects.STREAM_IN, event) is event


def test_on_the_shared_stream_each_partition_claims_only_its_own() -> None:
    owners = [Owner(Partition(k, 3), REGISTRY) for k in range(3)]
    start = envelope("START", workflow_id=None, event_id="req-7")
    claims = [o.claim(subjects.STREAM_IN, start) for o in owners]
    assert [c is start for c in claims].count(True) == 1
    assert claims.count(None) == 2
    malformed = MalformedMessage("bad_json", "x")
    assert [o.claim(subjects.STREAM_IN, malformed) for o in owners] == [malformed, None, None]
    assert workflow_id_of(start)


@pytest.mark.parametrize("slot", ["\u00b2", "007", "x", "100", "-1"])
def test_a_slot_token_is_a_number_the_broker_could_write(slot: str) -> None:
    with pytest.raises(MalformedMessage, match="bad_subject"):
        subjects.parse_inbound(f"wf.in.slot.{slot}.signal.support.0123456789abcdef.approvals")


def test_senders_may_publish_their_keyed_subjects_as_the_broker_maps_them() -> None:
    assert "wf.in.slot.*.request.*.*.gw" in gateway("gw").publish
    assert "wf.in.slot.*.result.support.*.classify" in stage("s", "support", "classify").publish
    assert "wf.in.slot.*.timer.*.*" in timer("timers").publish
