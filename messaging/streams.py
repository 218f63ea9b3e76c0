"""Idempotent provisioning of Interlock's JetStream streams, consumers and KV bucket.

Safe to run from every process at start-up: an existing stream or consumer is updated to the
configuration below, never recreated (which would drop its messages or its ack state); the one
exception, an empty inbound stream rebuilt for projector partitions when asked, is `inbound`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import BadRequestError, NotFoundError

from interlock.contracts import subjects
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
        subjects=[f"{subjects.OUT_PREFIX}.>"],
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
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
        await js.stream_info(config.name or "")
    except NotFoundError:
        await js.add_stream(config)
        return
    await js.update_stream(config)


async def provision(
    js: JetStreamContext,
    stages: Iterable[tuple[str, str]],
    *,
    partitions: int = 1,
    repartition: bool = False,
) -> None:
    """Create or update every stream, consumer and bucket Interlock uses; `stages` are the
    (workflow type, stage) pairs of the installed definitions, each with its consumer;
    `partitions`: the projector's (see `inbound`), `repartition`: rebuild the inbound stream
    for them if it must be and may be."""
    await provision_inbound(js, partitions, repartition=repartition)
    for config in STREAMS:
        await _ensure_stream(js, config)
    await _ensure_bucket(js)
    for workflow_type, stage in stages:
        await ensure_consumer(js, subjects.STREAM_JOBS, stage_consumer(workflow_type, stage))


async def _ensure_bucket(js: JetStreamContext) -> None:
    """The open-jobs bucket, bounded; one made before it had its bounds gets them."""
    max_bytes, max_value = GIB, 256 * 1024
    try:
        await js.create_key_value(
            bucket=subjects.JOBS_BUCKET,
            history=1,
            ttl=DAY,
            max_bytes=max_bytes,
            max_value_size=max_value,
        )
    except BadRequestError:  # it exists with an older configuration
        info = await js.stream_info(f"KV_{subjects.JOBS_BUCKET}")
        await js.update_stream(replace(info.config, max_bytes=max_bytes, max_msg_size=max_value))
