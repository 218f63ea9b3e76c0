"""Interlock's metrics, through the OpenTelemetry metrics API (no-ops until a provider is set).

Instruments are created on first use from the global meter, so configuring the provider at
process start (`otel.setup.configure_metrics`) is all it takes to export them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Counter, Histogram, Observation

METER = "interlock"


@cache
def _counter(name: str, unit: str, description: str) -> Counter:
    return metrics.get_meter(METER).create_counter(name, unit=unit, description=description)


@cache
def _histogram(name: str, unit: str, description: str) -> Histogram:
    return metrics.get_meter(METER).create_histogram(name, unit=unit, description=description)


def transition(workflow_type: str, event_type: str, accepted: bool, reason: str | None) -> None:
    _counter("interlock.transitions", "{event}", "Events decided, by outcome").add(
        1,
        {
            "workflow_type": workflow_type,
            "event_type": event_type,
            "accepted": accepted,
            "reason": reason or "accepted",
        },
    )


def outcome(workflow_type: str, state: str) -> None:
    _counter("interlock.workflows.outcome", "{workflow}", "Workflows reaching an outcome").add(
        1, {"workflow_type": workflow_type, "outcome": state}
    )


def time_in_state(workflow_type: str, state: str, seconds: float) -> None:
    _histogram("interlock.state.duration", "s", "Time a workflow spent in a state").record(
        seconds, {"workflow_type": workflow_type, "state": state}
    )


def approval_wait(workflow_type: str, seconds: float, decision: str) -> None:
    _histogram("interlock.approval.wait", "s", "Time from approval request to decision").record(
        seconds, {"workflow_type": workflow_type, "decision": decision}
    )


def retry(workflow_type: str, state: str, error_class: str) -> None:
    _counter("interlock.retries", "{retry}", "Durable retries scheduled").add(
        1, {"workflow_type": workflow_type, "state": state, "error_class": error_class}
    )


def model_call(task: str, model: str, latency_ms: float, valid: bool) -> None:
    _histogram("interlock.model.latency", "ms", "Model call latency").record(
        latency_ms, {"task": task, "model": model}
    )
    if not valid:
        _counter(
            "interlock.model.schema_failures",
            "{call}",
            "Model outputs refused by schema validation",
        ).add(1, {"task": task})


def dead_letter(source: str, reason: str) -> None:
    _counter("interlock.dead_letters", "{message}", "Messages moved to a dead-letter subject").add(
        1, {"source": source, "reason": reason}
    )


def unrecorded_refusal(source: str, reason: str) -> None:
    _counter("interlock.refusals.unrecorded", "{message}", "Messages refused without a record").add(
        1, {"source": source, "reason": reason}
    )


def human_wait_reminder(workflow_type: str, state: str) -> None:
    _counter(
        "interlock.human_waits.reminders",
        "{reminder}",
        "Overdue waits on a person announced again",
    ).add(1, {"workflow_type": workflow_type, "state": state})


def job_redelivered(workflow_type: str, stage: str) -> None:
    _counter(
        "interlock.jobs.redelivered",
        "{delivery}",
        "Jobs delivered again: a lease (ack wait) expired or a failed attempt was retried",
    ).add(1, {"workflow_type": workflow_type, "stage": stage})


def job_question_unanswered(workflow_type: str, stage: str) -> None:
    _counter(
        "interlock.jobs.unanswered",
        "{question}",
        "Effect jobs handed back because no projector partition said whether they are open",
    ).add(1, {"workflow_type": workflow_type, "stage": stage})


def jobs_redispatched(count: int) -> None:
    _counter(
        "interlock.jobs.redispatched",
        "{job}",
        "Open jobs the sweeper dispatched again after their workflow sat idle",
    ).add(count)


def gauge(
    name: str,
    unit: str,
    description: str,
    read: Callable[[], Iterable[tuple[float, dict[str, str]]]],
) -> None:
    """An observable gauge whose values come from `read()` at collection time."""

    def callback(options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(value, attributes) for value, attributes in read()]

    metrics.get_meter(METER).create_observable_gauge(
        name, callbacks=[callback], unit=unit, description=description
    )
