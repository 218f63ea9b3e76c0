"""The result request subjects: what a stage asks on, what a partition hears, and the mapped
inbound subject a request stands for (checked like the broker's)."""

from __future__ import annotations

import pytest

from interlock.contracts import result_requests
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.partitions import SLOTS, Partition, routing_key, slot_of
from interlock.contracts.subjects import parse_inbound
from interlock.messaging import permissions

KEY = routing_key("acme", "wf-1")


def test_a_request_stands_for_the_mapped_result_subject_of_its_slot() -> None:
    asked = result_requests.result_request(slot_of(KEY), "support", KEY, "classify")

    inbound = parse_inbound(result_requests.as_inbound(asked))

    assert (inbound.kind, inbound.workflow_type, inbound.sender) == (
        "result",
        "support",
        "classify",
    )
    assert (inbound.key, inbound.slot) == (KEY, slot_of(KEY))


@pytest.mark.parametrize(
    "subject",
    [
        "wf.rq.3.signal.support.0123456789abcdef.approvals",  # not a result
        "wf.rq.3.result.support.classify",  # no key
        "wf.rq.3.result.support.not-a-key.classify",
        "wf.rq.x.result.support.0123456789abcdef.classify",  # not a slot
        "wf.rq.3.result.support.0123456789abcdef.classify.extra",
        "wf.in.result.support.0123456789abcdef.classify",  # not a request
    ],
)
def test_anything_else_is_a_bad_subject(subject: str) -> None:
    with pytest.raises(MalformedMessage) as refused:
        result_requests.as_inbound(subject)
    assert refused.value.reason == "bad_subject"


def test_each_partition_hears_its_own_slots_and_together_all_of_them() -> None:
    assert result_requests.partition_requests(Partition()) == ["wf.rq.*.result.>"]
    heard = [
        subject
        for index in range(4)
        for subject in result_requests.partition_requests(Partition(index, 4))
    ]
    assert sorted(heard) == sorted(f"wf.rq.{slot}.result.>" for slot in range(SLOTS))


def test_a_stage_may_ask_only_for_its_own_results_and_the_projector_answer() -> None:
    stage = permissions.stage("stage-support-classify", "support", "classify")
    assert "wf.rq.*.result.support.*.classify" in stage.publish
    assert not any(s.startswith("wf.rq") for s in stage.subscribe)
    projector = permissions.projector("projector")
    assert projector.allow_responses
    assert "wf.rq.*.result.>" in projector.subscribe
