"""Span names stay few: a publish on a keyed subject is named by the subject's template, its
routing key (one per workflow) and the slot the broker maps it to written as `{key}` and
`{slot}`; the subject itself stays in `messaging.destination.name`. A tracing backend groups
operations by span name, and one name per workflow would grow its operation list without
bound."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from interlock.contracts import subjects
from interlock.contracts.jobs import JobPayload
from interlock.services.runtime import results
from interlock.services.runtime.asking import ASKING
from interlock.services.runtime.worker import StageResult, StageWorker
from tests.support.telemetry import recorded
from tests.unit.test_stage_failure_reports import ENVELOPE

KEY = "0123456789abcdef"


@pytest.mark.parametrize(
    ("subject", "template"),
    [
        (f"wf.in.result.support.{KEY}.classify", "wf.in.result.support.{key}.classify"),
        (f"wf.in.signal.support.{KEY}.approvals", "wf.in.signal.support.{key}.approvals"),
        (f"wf.in.timer.support.{KEY}", "wf.in.timer.support.{key}"),
        (f"wf.in.slot.17.timer.support.{KEY}", "wf.in.slot.{slot}.timer.support.{key}"),
        ("wf.in.request.support.upstream", "wf.in.request.support.upstream"),
        ("wf.job.support.classify", "wf.job.support.classify"),
        ("wf.in.nonsense", "wf.in.nonsense"),
    ],
)
def test_a_subjects_template_hides_its_key_and_slot(subject: str, template: str) -> None:
    assert subjects.template(subject) == template


async def test_a_stages_result_publish_is_named_by_its_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def decided(*_: Any) -> bool:
        return True

    monkeypatch.setattr(ASKING, "decided", decided)
    spans = recorded()
    before = len(spans.finished())
    job = JobPayload(job_id="job-1", stage="classify", state="S", definition_version=1)
    envelope = ENVELOPE.model_copy(update={"workflow_type": "support"})
    stage = StageWorker("support", "classify", cast(Any, None))
    broker = SimpleNamespace(connection=object())

    await results.submit(cast(Any, broker), stage, envelope, job, StageResult("DONE", {}))

    (span,) = spans.finished()[before:]
    subject = str((span.attributes or {})["messaging.destination.name"])
    assert subjects.parse_inbound(subject).key is not None  # the subject carries the key
    assert span.name == "wf.in.result.support.{key}.classify publish"
    assert (span.attributes or {})["messaging.destination.template"] == (
        "wf.in.result.support.{key}.classify"
    )
