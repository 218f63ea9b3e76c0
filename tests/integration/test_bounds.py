"""Nothing grows without bound: every stream has a byte limit (the dead letters an age limit
too), and a dead letter keeps its reason and ids but not an oversized body."""

from __future__ import annotations

import json

import nats
from nats.js import JetStreamContext
from nats.js.api import RawStreamMsg
from nats.js.errors import NotFoundError

from interlock.contracts import subjects
from interlock.contracts.envelope import MAX_MESSAGE_BYTES
from interlock.messaging.streams import provision
from tests.support.harness import Harness
from tests.support.polling import eventually
from tests.support.workflows import STAGES


async def test_every_stream_has_a_byte_limit_and_dead_letters_an_age_limit_too(
    js: JetStreamContext,
) -> None:
    streams = {s.config.name: s.config for s in await js.streams_info()}

    assert {subjects.STREAM_IN, subjects.STREAM_JOBS, subjects.STREAM_OUT} <= set(streams)
    assert all((config.max_bytes or -1) > 0 for config in streams.values()), {
        name: config.max_bytes for name, config in streams.items()
    }
    assert (streams[subjects.STREAM_DLQ].max_age or 0) > 0


async def test_an_oversized_message_is_dead_lettered_with_its_reason_but_not_its_body(
    h: Harness,
) -> None:
    huge = json.dumps({"padding": "x" * (MAX_MESSAGE_BYTES + 10)}).encode()
    headers = {subjects.HEADER_MSG_ID: "huge-1"}
    await h.nc.jetstream().publish(subjects.signal("support", "approvals"), huge, headers=headers)

    async def letter() -> RawStreamMsg | None:
        try:
            return await h.nc.jetstream().get_last_msg(
                subjects.STREAM_DLQ, subjects.dlq("projector")
            )
        except NotFoundError:
            return None

    found = await eventually(letter, what="the dead letter")
    letter_headers = found.headers or {}
    assert letter_headers[subjects.HEADER_DLQ_REASON] == "oversized"
    assert letter_headers[subjects.HEADER_DLQ_BODY_BYTES] == str(len(huge))
    assert not found.data


async def test_an_open_jobs_bucket_made_before_it_had_bounds_gets_them(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await js.create_key_value(bucket=subjects.JOBS_BUCKET, history=1, ttl=24 * 3600.0)

        await provision(js, STAGES)

        info = await js.stream_info(f"KV_{subjects.JOBS_BUCKET}")
        assert (info.config.max_bytes or -1) > 0
    finally:
        await nc.close()
