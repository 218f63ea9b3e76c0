"""Subject, stream, consumer and bucket names: the addressing half of the public contract."""

from __future__ import annotations

IN_PREFIX = "wf.in"
JOB_PREFIX = "wf.job"
OUT_PREFIX = "wf.out"
DLQ_PREFIX = "wf.dlq"

STREAM_IN = "WF_IN"
"""Requests, signals, stage results and timer firings: everything the projector consumes."""
STREAM_JOBS = "WF_JOBS"
"""Stage jobs, one work-queue consumer per stage."""
STREAM_OUT = "WF_OUT"
"""Announcements for downstream systems: approval tasks, outcomes."""
STREAM_DLQ = "WF_DLQ"
"""Dead letters, each with its reason in headers."""

CONSUMER_PROJECTOR = "projector"
JOBS_BUCKET = "wf_open_jobs"
"""Per-workflow record of open jobs, written through the outbox; services use it to skip
stale jobs before doing any work."""

STAGE_ACK_WAIT_S = 10.0
"""How long a stage may hold a job without acking before it is redelivered; stages send
`in_progress` heartbeats during long calls, so this bounds recovery after a crash, not work."""
PROJECTOR_ACK_WAIT_S = 10.0
STAGE_MAX_DELIVER = 6
"""Deliveries of a job before its stage gives up (the last one submits ESCALATE instead)."""
PROJECTOR_MAX_DELIVER = 8
"""Deliveries of an inbound event before the projector dead-letters it."""

HEADER_MSG_ID = "Nats-Msg-Id"
HEADER_DLQ_REASON = "Interlock-Dlq-Reason"
HEADER_DLQ_DETAIL = "Interlock-Dlq-Detail"
HEADER_DLQ_SUBJECT = "Interlock-Dlq-Subject"


def request(workflow_type: str) -> str:
    return f"{IN_PREFIX}.request.{workflow_type}"


def signal(workflow_type: str) -> str:
    return f"{IN_PREFIX}.signal.{workflow_type}"


def result(workflow_type: str) -> str:
    return f"{IN_PREFIX}.result.{workflow_type}"


def timer(workflow_type: str) -> str:
    return f"{IN_PREFIX}.timer.{workflow_type}"


def job(workflow_type: str, stage: str) -> str:
    return f"{JOB_PREFIX}.{workflow_type}.{stage}"


def out(workflow_type: str, event: str) -> str:
    return f"{OUT_PREFIX}.{workflow_type}.{event}"


def dlq(source: str) -> str:
    return f"{DLQ_PREFIX}.{source}"


def stage_consumer(workflow_type: str, stage: str) -> str:
    """Durable consumer name of one stage service."""
    return f"{workflow_type}-{stage}"
