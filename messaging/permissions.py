"""Who may publish and subscribe to what on the broker: one NATS user per identity.

Every component and every external client connects as its own user and may do only what its
job needs: the projector and its backstop the relay alone publish jobs and announcements
(the outbox rows); the timer service alone publishes timer firings; a stage pulls and
acknowledges only its own jobs and publishes only on its own result subject (and asks only
about its own jobs); clients publish requests or signals under their own
name and read their own tenants' and types' announcements (`readers`). Each identity may
subscribe to its own inbox prefix only, so no identity reads another's replies. `admin` may do
anything and is for provisioning, health checks and tests, never for a long-running component.

The functions here build one identity's permissions each; which component holds which (and
under what name) is the table of components' business (`interlock.config.components`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from interlock.contracts import job_questions, result_requests, subjects
from interlock.contracts.clients import ClientPolicy
from interlock.contracts.partitions import consumers
from interlock.messaging.partition_streams import streams_of
from interlock.messaging.readers import announcement_reads

ADMIN = "admin"
"""Not a component: provisioning, health checks and tests. The components' own identities
are named by the table of components (`interlock.config.components`), which builds each one's
permissions with the functions here."""

_JS_API = "$JS.API"


@dataclass(frozen=True)
class Permissions:
    publish: tuple[str, ...]
    subscribe: tuple[str, ...]
    allow_responses: bool = False
    """May answer requests on their reply subjects (the simulator, the projector)."""


OUTBOX_SUBJECTS = (
    f"{subjects.JOB_PREFIX}.>",
    f"{subjects.OUT_PREFIX}.>",
    f"{subjects.TENANT_OUT_PREFIX}.>",
)
"""Where outbox rows go: jobs and announcements."""


def stage_identity(workflow_type: str, stage: str) -> str:
    return f"stage-{workflow_type}-{stage}"


def _inbox(identity: str) -> str:
    return f"{subjects.inbox_prefix(identity)}.>"


def _pulls(stream: str, consumer: str) -> list[str]:
    """Fetch from and acknowledge on one durable consumer (and read its configuration)."""
    return [
        f"{_JS_API}.CONSUMER.INFO.{stream}.{consumer}",
        f"{_JS_API}.CONSUMER.MSG.NEXT.{stream}.{consumer}",
        f"$JS.ACK.{stream}.{consumer}.>",
    ]


def _own(identity: str, publish: Iterable[str]) -> Permissions:
    return Permissions(publish=tuple(publish), subscribe=(_inbox(identity),))


def _stage_subjects(workflow_type: str, stage: str) -> list[str]:
    """What one stage publishes: pulls and acks of its own jobs, its result, its dead
    letters, its questions whether a job is still open, calls to the outside systems."""
    consumer = subjects.stage_consumer(workflow_type, stage)
    return [
        *_pulls(subjects.STREAM_JOBS, consumer),
        *subjects.grants(subjects.RESULT, workflow_type, stage),
        result_requests.result_request_grant(workflow_type, stage),
        subjects.dlq(consumer),
        job_questions.job_question_grant(workflow_type, stage),
        # The outside systems a stage calls (the simulator answers there).
        "sim.>",
    ]


def stage(identity: str, workflow_type: str, stage: str) -> Permissions:
    """One stage service: its own jobs, its own result (see `_stage_subjects`)."""
    return _own(identity, _stage_subjects(workflow_type, stage))


def stage_host(identity: str, stages: Iterable[tuple[str, str]]) -> Permissions:
    """The stage host runs every stage in one process, so it may do what each of them may
    (and no more): one process is one trust boundary, whatever identities it holds."""
    publish = {s for pair in stages for s in _stage_subjects(*pair)}
    return _own(identity, sorted(publish))


def _client(name: str, policy: ClientPolicy, installed: Iterable[str]) -> Permissions:
    types = policy.published_types(installed)
    publish = [
        subject
        for kind in sorted(policy.publish)
        for t in types
        for subject in subjects.grants(kind, t, name)
    ]
    reads = announcement_reads(name, policy, installed)
    publish += reads.publish
    return Permissions(publish=tuple(publish), subscribe=(_inbox(name), *reads.subscribe))


def console(identity: str, redrive: bool) -> Permissions:
    """The operator console reads the dead letters (its signals go out as the CLI's client).
    Redriving a letter republishes it, unchanged, on the subject it came from, so a console
    allowed to redrive may publish on every ingress and job subject: only when configured."""
    dlq = subjects.STREAM_DLQ
    reads = [
        f"{_JS_API}.STREAM.INFO.{dlq}",
        f"{_JS_API}.STREAM.MSG.GET.{dlq}",
        f"{_JS_API}.DIRECT.GET.{dlq}",
        f"{_JS_API}.DIRECT.GET.{dlq}.>",
    ]
    redrives = [
        f"{_JS_API}.STREAM.MSG.DELETE.{dlq}",
        f"{subjects.IN_PREFIX}.>",
        f"{subjects.JOB_PREFIX}.>",
    ]
    return _own(identity, reads + (redrives if redrive else []))


def admin() -> Permissions:
    return Permissions(publish=(">",), subscribe=(">",))


def projector(identity: str, partitions: int = 1) -> Permissions:
    """The projector (every partition connects as one identity) pulls from the consumers of
    `partitions` partitions, and from no other consumer; it publishes what it committed
    itself (the relay is its backstop). It takes the results stages ask it to decide at once
    (`contracts.result_requests`) and answers them, and the stages' questions whether a job
    is still open (`contracts.job_questions`)."""
    pulls = [
        pull
        for index, consumer in enumerate(consumers(partitions))
        for stream in streams_of(index, partitions)
        for pull in _pulls(stream, consumer)
    ]
    return Permissions(
        publish=(*pulls, subjects.dlq(identity), *OUTBOX_SUBJECTS),
        subscribe=(
            _inbox(identity),
            f"{result_requests.RQ_PREFIX}.*.{subjects.RESULT}.>",
            f"{result_requests.RQ_PREFIX}.*.{job_questions.JOB}.>",
        ),
        allow_responses=True,
    )


def outbox_backstop(identity: str) -> Permissions:
    """The relay: it publishes the outbox rows the projector did not."""
    return _own(identity, [*OUTBOX_SUBJECTS, subjects.dlq(identity)])


def timer(identity: str) -> Permissions:
    """The timer service alone publishes timer firings."""
    return _own(
        identity, [f"{subjects.IN_PREFIX}.timer.>", subjects.grants(subjects.TIMER, "*", None)[2]]
    )


def responder() -> Permissions:
    """The simulator of the outside systems: it answers the requests on their subjects."""
    return Permissions(publish=(), subscribe=("sim.>",), allow_responses=True)


def gateway(identity: str) -> Permissions:
    """The approval/webhook gateway: requests and signals under its own name."""
    return _own(
        identity,
        [
            *subjects.grants(subjects.REQUEST, "*", identity),
            *subjects.grants(subjects.SIGNAL, "*", identity),
            subjects.dlq(identity),
        ],
    )


def with_clients(
    components: Mapping[str, Permissions],
    clients: Mapping[str, ClientPolicy],
    installed: Iterable[str],
) -> dict[str, Permissions]:
    """Every identity's permissions: `admin`, the `components`' (by identity) and `clients`
    for the `installed` workflow types (a client may not take a component's name)."""
    installed = list(installed)
    found = {ADMIN: admin(), **components}
    for name, policy in clients.items():
        if name in found:
            raise ValueError(f"client name {name!r} is taken by an Interlock component")
        found[name] = _client(name, policy, installed)
    return found
