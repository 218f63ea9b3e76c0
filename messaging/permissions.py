"""Who may publish and subscribe to what on the broker: one NATS user per identity.

Every component and every external client connects as its own user and may do only what its
job needs: the projector and its backstop the relay alone publish jobs, announcements and the
open-jobs record (the outbox rows); the timer
service alone publishes timer firings; a stage pulls and acknowledges only its own jobs and
publishes only on its own result subject; clients publish requests or signals under their own
name and read their own tenants' and types' announcements (`readers`). Each identity may
subscribe to its own inbox prefix only, so no identity reads another's replies. `admin` may do
anything and is for provisioning, health checks and tests, never for a long-running component.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from interlock.contracts import subjects
from interlock.contracts.clients import ClientPolicy
from interlock.contracts.partitions import consumers
from interlock.messaging.readers import announcement_reads

ADMIN = "admin"
PROJECTOR = "projector"
RELAY = "relay"
TIMER = "timer"
SIMULATOR = "sim"
GATEWAY = "gateway"
CONSOLE = "console"
STAGE_HOST = "stages"
"""The stage host: every installed stage service in one process, each still its own durable
consumer on its own subject, all on one identity."""
COMPONENTS = (PROJECTOR, RELAY, TIMER, SIMULATOR, GATEWAY, CONSOLE, STAGE_HOST)
"""Identities of the components that are not stages (each stage has its own)."""

_JS_API = "$JS.API"


@dataclass(frozen=True)
class Permissions:
    publish: tuple[str, ...]
    subscribe: tuple[str, ...]
    allow_responses: bool = False
    """May answer requests on their reply subjects (the simulator)."""


OUTBOX_SUBJECTS = (
    f"{subjects.JOB_PREFIX}.>",
    f"{subjects.OUT_PREFIX}.>",
    f"{subjects.TENANT_OUT_PREFIX}.>",
    f"$KV.{subjects.JOBS_BUCKET}.>",
)
"""Where outbox rows go: jobs, announcements and the open-jobs record."""


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
    letters, reads of the open-jobs record, calls to the outside systems."""
    consumer = subjects.stage_consumer(workflow_type, stage)
    bucket_stream = f"KV_{subjects.JOBS_BUCKET}"
    return [
        *_pulls(subjects.STREAM_JOBS, consumer),
        subjects.result(workflow_type, stage),
        subjects.dlq(consumer),
        # Reading the open-jobs record: the bucket's info, then a direct or stream get.
        f"{_JS_API}.STREAM.INFO.{bucket_stream}",
        f"{_JS_API}.DIRECT.GET.{bucket_stream}.>",
        f"{_JS_API}.STREAM.MSG.GET.{bucket_stream}",
        # The outside systems a stage calls (the simulator answers there).
        "sim.>",
    ]


def _stage(workflow_type: str, stage: str) -> Permissions:
    return _own(stage_identity(workflow_type, stage), _stage_subjects(workflow_type, stage))


def _stage_host(stages: Iterable[tuple[str, str]]) -> Permissions:
    """The stage host runs every stage in one process, so it may do what each of them may
    (and no more): one process is one trust boundary, whatever identities it holds."""
    publish = {s for pair in stages for s in _stage_subjects(*pair)}
    return _own(STAGE_HOST, sorted(publish))


def _client(name: str, policy: ClientPolicy, installed: Iterable[str]) -> Permissions:
    types = policy.published_types(installed)
    builders = {"request": subjects.request, "signal": subjects.signal}
    publish = [builders[kind](t, name) for kind in sorted(policy.publish) for t in types]
    reads = announcement_reads(name, policy, installed)
    publish += reads.publish
    return Permissions(publish=tuple(publish), subscribe=(_inbox(name), *reads.subscribe))


def _console(redrive: bool) -> Permissions:
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
    return _own(CONSOLE, reads + (redrives if redrive else []))


def permissions(
    stages: Iterable[tuple[str, str]],
    clients: Mapping[str, ClientPolicy],
    installed: Iterable[str],
    *,
    console_redrive: bool = False,
    projector_partitions: int = 1,
) -> dict[str, Permissions]:
    """Every identity's permissions: the components, a stage each of `stages`
    ((workflow_type, stage) pairs), and `clients` for the `installed` workflow types;
    `console_redrive`: the console may send dead letters back; `projector_partitions`: the
    projector (every partition connects as `projector`) pulls from the consumers of that
    many partitions, and from no other consumer."""
    installed = list(installed)
    found = {
        ADMIN: Permissions(publish=(">",), subscribe=(">",)),
        # The projector publishes what it committed itself; the relay is its backstop.
        PROJECTOR: _own(
            PROJECTOR,
            [
                *(
                    pull
                    for consumer in consumers(projector_partitions)
                    for pull in _pulls(subjects.STREAM_IN, consumer)
                ),
                subjects.dlq(PROJECTOR),
                *OUTBOX_SUBJECTS,
            ],
        ),
        RELAY: _own(RELAY, [*OUTBOX_SUBJECTS, subjects.dlq(RELAY)]),
        TIMER: _own(TIMER, [f"{subjects.IN_PREFIX}.timer.>"]),
        SIMULATOR: Permissions(publish=(), subscribe=("sim.>",), allow_responses=True),
        GATEWAY: _own(
            GATEWAY,
            [subjects.request("*", GATEWAY), subjects.signal("*", GATEWAY), subjects.dlq(GATEWAY)],
        ),
        CONSOLE: _console(console_redrive),
    }
    stages = list(stages)
    for workflow_type, stage in stages:
        found[stage_identity(workflow_type, stage)] = _stage(workflow_type, stage)
    found[STAGE_HOST] = _stage_host(stages)
    for name, policy in clients.items():
        if name in found:
            raise ValueError(f"client name {name!r} is taken by an Interlock component")
        found[name] = _client(name, policy, installed)
    return found
