"""Idempotent provisioning of Interlock's JetStream streams and consumers.

Safe to run from every process at start-up: an existing stream or consumer is updated to the
configuration below, never recreated (which would drop its messages or its ack state); the one
exception, an empty inbound stream rebuilt for projector partitions when asked, is `inbound`'s.
Streams are kept at `replicas` copies (INTERLOCK_STREAM_REPLICAS; 3 or 5 on a cluster);
consumers inherit their stream's. The open-jobs bucket of earlier releases is deleted
(`LEGACY_BUCKET_STREAM`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from contextlib import suppress
from dataclasses import replace
from functools import partial

import nats.errors
from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import APIError, BadRequestError, NotFoundError, ServiceUnavailableError

from interlock.contracts import subjects
from interlock.messaging.errors import ReplicasRefused
from interlock.messaging.inbound import (
    DUPLICATE_WINDOW_S,
    GIB,
    ensure_consumer,
    provision_inbound,
)

DAY = 24 * 3600.0
# Byte limits: a stream that fills refuses new messages (work queues: publishers see the
# error and retry) or drops its oldest (announcements, dead letters); none grows without
# bound on disk.

STREAMS = (
    StreamConfig(
        name=subjects.STREAM_JOBS,
        description="Stage jobs; one work-queue consumer per stage",
        subjects=[f"{subjects.JOB_PREFIX}.>"],
        retention=RetentionPolicy.WORK_QUEUE,
        storage=StorageType.FILE,
        duplicate_window=DUPLICATE_WINDOW_S,
        max_msg_size=1024 * 1024,
        max_bytes=4 * GIB,
        discard=DiscardPolicy.NEW,
    ),
    StreamConfig(
        name=subjects.STREAM_OUT,
        description="Announcements for downstream systems",
        subjects=[f"{subjects.OUT_PREFIX}.>", f"{subjects.TENANT_OUT_PREFIX}.>"],
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        max_consumers=subjects.OUT_MAX_CONSUMERS,
        max_age=7 * DAY,
        max_bytes=GIB,
        discard=DiscardPolicy.OLD,
        duplicate_window=DUPLICATE_WINDOW_S,
    ),
    StreamConfig(
        name=subjects.STREAM_DLQ,
        description="Dead letters with their reasons",
        subjects=[f"{subjects.DLQ_PREFIX}.>"],
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        max_age=30 * DAY,
        max_bytes=GIB,
        max_msg_size=1024 * 1024,
        discard=DiscardPolicy.OLD,
        duplicate_window=DUPLICATE_WINDOW_S,
    ),
)


# No `backoff` lists: a consumer's backoff also shortens the ack wait of the first delivery
# (to backoff[0]), which would redeliver long calls. Failures nak with their own delay instead;
# the ack wait only bounds how long a crashed consumer's messages stay invisible.
# No server-side `max_deliver` either: a message the server stops delivering stays in its
# work-queue stream, acked by nobody and dead-lettered by nobody. The consumers count
# deliveries themselves (`PROJECTOR_MAX_DELIVER`, `STAGE_MAX_DELIVER`) and end every message
# in an ack, a nak or a dead letter; a crash on the last counted delivery is redelivered.
def stage_consumer(workflow_type: str, stage: str) -> ConsumerConfig:
    """Durable pull consumer of one stage service; `in_progress` extends long calls."""
    return ConsumerConfig(
        durable_name=subjects.stage_consumer(workflow_type, stage),
        filter_subject=subjects.job(workflow_type, stage),
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=subjects.STAGE_ACK_WAIT_S,
        max_deliver=-1,
        max_ack_pending=1000,
    )


async def _ensure_stream(js: JetStreamContext, config: StreamConfig) -> None:
    try:
        existing = await js.stream_info(config.name or "")
    except NotFoundError:
        await js.add_stream(config)
        return
    try:
        await js.update_stream(config)
    except BadRequestError as exc:
        # An older nats-server cannot change a stream's consumer limit: keep the one it has.
        if "consumers" not in (exc.description or "").lower():
            raise
        await js.update_stream(replace(config, max_consumers=existing.config.max_consumers))


async def provision(
    js: JetStreamContext,
    stages: Iterable[tuple[str, str]],
    *,
    partitions: int = 1,
    repartition: bool = False,
    replicas: int = 1,
) -> None:
    """Create or update every stream and consumer Interlock uses; `stages` are the (workflow
    type, stage) pairs of the installed definitions, each with its consumer; `partitions`: the
    projector's (see `inbound`), `repartition`: rebuild the inbound stream for them if it must
    be and may be; every stream at `replicas` copies (an existing one is scaled to it). The
    open-jobs bucket of an earlier release is deleted (`drop_legacy_bucket`)."""
    deadline = asyncio.get_running_loop().time() + PATIENCE_S
    steps: list[Callable[[], Awaitable[None]]] = [
        partial(provision_inbound, js, partitions, repartition=repartition, replicas=replicas),
        *(partial(_ensure_stream, js, replace(c, num_replicas=replicas)) for c in STREAMS),
        partial(drop_legacy_bucket, js),
        *(
            partial(ensure_consumer, js, subjects.STREAM_JOBS, stage_consumer(t, s))
            for t, s in stages
        ),
    ]
    try:
        for step in steps:
            await _patiently(step, deadline)
    except APIError as exc:
        if replicas == 1 or not _about_replicas(exc):
            raise
        raise ReplicasRefused(
            f"INTERLOCK_STREAM_REPLICAS={replicas}: the broker refused: {exc.description}",
            hint="run a NATS cluster of at least that many nodes, or set it to 1",
        ) from exc


INSUFFICIENT_RESOURCES = 10023
"""JetStream's error code for a placement it cannot make (fewer nodes than replicas)."""


def _about_replicas(exc: APIError) -> bool:
    return exc.err_code == INSUFFICIENT_RESOURCES or "replica" in (exc.description or "").lower()


PATIENCE_S = 60.0
"""How long provisioning as a whole waits out a JetStream that answers "temporarily
unavailable", or not at all: a cluster electing a leader, or one that was just started."""


NO_SUITABLE_PEERS = 10005
"""JetStream's error code for a placement its peers cannot take now: in a cluster just started
or with a node restarting, "no suitable peers for placement, peer offline" until the peer is
seen online again (a cluster with too few nodes at all answers `INSUFFICIENT_RESOURCES`)."""


async def _patiently(step: Callable[[], Awaitable[None]], deadline: float) -> None:
    """`step` (idempotent), again after a short wait while JetStream is unavailable or a
    peer its placement needs is offline, until the loop time `deadline`."""
    loop = asyncio.get_running_loop()
    delay = 0.2
    while True:
        try:
            await step()
            return
        except (ServiceUnavailableError, nats.errors.TimeoutError):
            if loop.time() >= deadline:
                raise
        except BadRequestError as exc:
            if exc.err_code != NO_SUITABLE_PEERS or loop.time() >= deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(2.0, delay * 2)


LEGACY_BUCKET_STREAM = "KV_wf_open_jobs"
"""The open-jobs bucket of releases before job questions: its records are no longer updated,
so a stage of such a release reading one could act on a job a later decision revoked."""


async def drop_legacy_bucket(js: JetStreamContext) -> None:
    """Delete the open-jobs bucket of an earlier release, if there is one: a stage of that
    release left running then finds no record and refuses its effect jobs rather than trust
    a record nothing updates any more."""
    with suppress(NotFoundError):
        await js.delete_stream(LEGACY_BUCKET_STREAM)
