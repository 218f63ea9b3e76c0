"""Inbound subjects carry their sender: the builders and `parse_inbound` agree, and anything
else is a malformed message (`bad_subject`)."""

from __future__ import annotations

import pytest

from interlock.contracts import subjects
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.subjects import Inbound


@pytest.mark.parametrize(
    ("subject", "inbound"),
    [
        (subjects.request("support", "upstream"), Inbound("request", "support", "upstream")),
        (subjects.signal("request", "gateway"), Inbound("signal", "request", "gateway")),
        (
            subjects.result("support", "execute_action"),
            Inbound("result", "support", "execute_action"),
        ),
        (subjects.timer("support"), Inbound("timer", "support", None)),
    ],
)
def test_an_inbound_subject_names_its_kind_type_and_sender(subject: str, inbound: Inbound) -> None:
    assert subjects.parse_inbound(subject) == inbound


@pytest.mark.parametrize(
    "subject",
    [
        "wf.in.request.support",  # no sender
        "wf.in.signal.support",
        "wf.in.result.support",
        "wf.in.timer.support.timer-service",  # a timer firing names nobody
        "wf.in.result.support.classify.extra",
        "wf.in.approval.support.upstream",  # no such kind
        "wf.job.support.classify",
        "wf.in.signal.support.*",
        "wf.in.signal..upstream",
        "",
    ],
)
def test_anything_else_is_a_bad_subject(subject: str) -> None:
    with pytest.raises(MalformedMessage) as refused:
        subjects.parse_inbound(subject)
    assert refused.value.reason == "bad_subject"


def test_each_identity_has_its_own_inbox() -> None:
    assert subjects.inbox_prefix("upstream") == "_INBOX_upstream"
    assert subjects.inbox_prefix("stage-support-classify") != subjects.inbox_prefix("upstream")
