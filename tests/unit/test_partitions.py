"""The projector's partition function and the names a partitioned stack is made of."""

from __future__ import annotations

from collections import Counter

import pytest

from interlock.app.childenv import settings_of
from interlock.app.composition import default_stack, resolve_name, with_partitions
from interlock.config.access import database_role, nats_identity
from interlock.config.access import permissions_of as permissions
from interlock.contracts import subjects
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.partitions import (
    MAX_PARTITIONS,
    PROJECTOR,
    Partition,
    components,
    index_of,
    partition_of,
    partition_of_component,
)
from interlock.ops.signal_watch import consumer_decides
from interlock.projector.partitioning import Owner
from interlock.projector.store.roles import PROJECTOR_ROLE
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY, STAGES


def test_the_partition_of_a_workflow_is_stable_across_processes_and_releases() -> None:
    # pinned: a change would move running workflows to another partition mid-flight
    assert [partition_of("acme", f"wf-{i}", 4) for i in range(8)] == PINNED
    assert partition_of("acme", "wf-0", 1) == 0


PINNED = [3, 2, 1, 3, 0, 1, 0, 2]


@pytest.mark.parametrize("count", [2, 3, 4, 7, 16, MAX_PARTITIONS])
def test_every_partition_gets_a_fair_share(count: int) -> None:
    shares = Counter(partition_of("acme", f"wf-{i}", count) for i in range(count * 200))
    assert sorted(shares) == list(range(count))
    assert min(shares.values()) > 100  # 200 expected each


def test_the_tenant_is_part_of_the_key() -> None:
    spread = {partition_of(f"tenant-{t}", "same-id", 8) for t in range(64)}
    assert len(spread) > 1


@pytest.mark.parametrize("count", [0, MAX_PARTITIONS + 1])
def test_a_count_out_of_bounds_is_refused(count: int) -> None:
    with pytest.raises(ValueError, match=r"1\.\.64"):
        partition_of("acme", "wf", count)


def test_exactly_one_partition_decides_each_message() -> None:
    owners = [Owner(Partition(k, 3), REGISTRY) for k in range(3)]
    for i in range(60):
        event = envelope("CANCEL_REQUESTED", workflow_id=f"wf-{i}", role="operator")
        assert sum(o.owns(event) for o in owners) == 1
        request = envelope("START", workflow_id=None, event_id=f"req-{i}")
        assert sum(o.owns(request) for o in owners) == 1
    malformed = MalformedMessage("bad_json", "x")
    assert [o.owns(malformed) for o in owners] == [True, False, False]
    assert Owner().owns(malformed)


def test_consumer_and_component_names() -> None:
    assert subjects.projector_consumer(0, 1) == "projector"
    assert subjects.projector_consumer(1, 3) == "projector-p1-of-3"
    assert subjects.is_projector_consumer("projector-p12-of-16")
    assert not subjects.is_projector_consumer("support-classify")
    assert components(1) == ["projector"]
    assert components(3) == ["projector.0", "projector.1", "projector.2"]
    assert (index_of("projector"), index_of("projector.5"), index_of("relay")) == (0, 5, None)
    assert index_of(f"projector.{MAX_PARTITIONS}") is None


def test_a_projector_of_another_layout_is_refused() -> None:
    assert partition_of_component("projector.1", 2) == Partition(1, 2)
    assert partition_of_component("projector", 1) == Partition(0, 1)
    for name, count in [("projector", 2), ("projector.2", 2), ("projector.0", 1)]:
        with pytest.raises(ValueError, match="INTERLOCK_PROJECTOR_PARTITIONS"):
            partition_of_component(name, count)


def test_a_partitioned_stack_runs_every_partition_as_the_projector() -> None:
    stack = default_stack("support", partitions=3)
    assert stack[:5] == ["projector.0", "projector.1", "projector.2", "relay", "timer"]
    assert default_stack("support")[0] == "projector"
    assert resolve_name("projector.2") == "projector.2"
    for name in ("projector.0", "projector.2"):
        assert nats_identity(name) == PROJECTOR
        assert database_role(name) == PROJECTOR_ROLE
        assert "projector_partitions" in settings_of(name)


def test_projector_stands_for_every_partition_of_the_stack_supervised() -> None:
    assert with_partitions(["projector", "relay"], 1) == ["projector", "relay"]
    assert with_partitions(["projector", "relay"], 2) == ["projector.0", "projector.1", "relay"]
    assert with_partitions(["projector.1"], 2) == ["projector.1"]


def test_the_projector_pulls_only_from_the_consumers_of_its_layout() -> None:
    def pulls(partitions: int) -> set[str]:
        found = permissions(STAGES, {}, ["support"], projector_partitions=partitions)
        return {s for s in found[PROJECTOR].publish if ".MSG.NEXT." in s}

    assert pulls(1) == {f"$JS.API.CONSUMER.MSG.NEXT.{subjects.STREAM_IN}.projector"}
    assert pulls(2) == {
        f"$JS.API.CONSUMER.MSG.NEXT.{stream}.projector-p{k}-of-2"
        for k in (0, 1)
        for stream in (subjects.STREAM_IN, subjects.partition_stream(k))
    }


def test_a_signal_is_queued_only_when_the_partition_deciding_it_is_not_running() -> None:
    assert subjects.partition_layout("projector-p3-of-4") == (3, 4)
    assert subjects.partition_layout("projector") is None
    owner = partition_of("acme", "wf-1", 2)
    assert consumer_decides(f"projector-p{owner}-of-2", "acme", "wf-1")
    assert not consumer_decides(f"projector-p{1 - owner}-of-2", "acme", "wf-1")
    assert consumer_decides("projector", "acme", "wf-1")
