"""Job questions: a stage asks the projector partition that owns a workflow whether the
workflow still waits for a job, before it acts on it.

The projector is the one writer of a workflow's state, so its answer is the committed state
itself: a job revoked by a decision (a cancellation, a newer job, a terminal state) is
`stale` as soon as that decision is committed, with nothing to publish first and nothing that
can lag. A stage with effects asks before every job; a read-only stage only about a job
delivered again (a first delivery is rarely stale, and a stale result is refused anyway).

`wf.rq.<slot>.job.<type>.<key>.<stage>` with a `JobQuestion` as its body; the answer is
`open` or `stale`: the workflow no longer waits for it, or there is no such workflow of that
tenant and type any more (a signed job of a workflow since deleted is stale, and no stage
learns whether another tenant has a workflow of that id). No answer (no partition
subscribed, a lost reply) leaves the stage not knowing: an effect is not done and its job is
asked about again later, a read-only stage does the work.

Only stages may publish on these subjects, each only on its own; the partition re-checks the
key against the body's tenant and workflow and the slot against the key, and answers about a
job of its own stage only (another stage's job is `stale` to it).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from interlock.contracts.envelope import Identifier
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.partitions import Partition, routing_key, slot_of
from interlock.contracts.result_requests import QUEUE, RQ_PREFIX, request_grant, slot_subjects

JOB = "job"
JobStatus = Literal["open", "stale"]
ANSWERS: frozenset[str] = frozenset({"open", "stale"})
QUESTION_QUEUE = QUEUE
"""The same queue group as result requests: one partition answers each question."""
MAX_QUESTION_BYTES = 1024


class JobQuestion(BaseModel):
    """What the stage asks about: the job, and the tenant's workflow that issued it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: Identifier
    workflow_id: Identifier
    job_id: Identifier


def job_question(workflow_type: str, stage: str, question: JobQuestion) -> str:
    """Where `stage` asks about a job of the workflow `question` names."""
    key = routing_key(question.tenant_id, question.workflow_id)
    return f"{RQ_PREFIX}.{slot_of(key)}.{JOB}.{workflow_type}.{key}.{stage}"


def job_question_grant(workflow_type: str, stage: str) -> str:
    """What a stage may publish to ask about its own jobs (any slot, any key)."""
    return request_grant(JOB, workflow_type, stage)


def partition_questions(partition: Partition) -> list[str]:
    """The question subjects a partition subscribes to."""
    return slot_subjects(JOB, partition)


def asked_about(subject: str, body: bytes, partition: Partition) -> tuple[str, str, JobQuestion]:
    """(workflow type, stage, question) of a question `partition` must answer;
    `MalformedMessage` for a subject or body that does not hold together."""
    tokens = subject.split(".")
    if len(tokens) != 7 or ".".join(tokens[:2]) != RQ_PREFIX or tokens[3] != JOB:
        raise MalformedMessage("bad_subject", "not a job question subject")
    slot, workflow_type, key, stage = tokens[2], tokens[4], tokens[5], tokens[6]
    if len(body) > MAX_QUESTION_BYTES:
        raise MalformedMessage("oversized", "a job question over its size")
    try:
        question = JobQuestion.model_validate_json(body)
    except ValueError as exc:
        raise MalformedMessage("schema_mismatch", "not a job question") from exc
    if routing_key(question.tenant_id, question.workflow_id) != key:
        raise MalformedMessage("partition_mismatch", "the key is not the workflow's")
    if str(slot_of(key)) != slot or not partition.owns_slot(int(slot)):
        raise MalformedMessage("partition_mismatch", "the slot is not this partition's")
    return workflow_type, stage, question


def status_of(listed_for: str | None, stage: str) -> JobStatus:
    """Whether the workflow still waits for the job, given the stage the committed workflow
    lists it open for (None: not listed, or no such workflow in that tenant and type): a job is
    listed from the commit that issued it until the one that took its result or revoked it."""
    return "open" if listed_for == stage else "stale"
