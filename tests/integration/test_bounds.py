"""Nothing grows without bound: every stream has a byte limit (the dead letters an age limit
too), and a dead letter keeps its reason and ids but not an oversized body."""

from __future__ import annotations

import json

from nats.js import JetStreamContext
from nats.js.api import RawStreamMsg
from nats.js.errors import NotFoundError

from interlock.contracts import subjects
from interlock.contracts.envelope import MAX_MESSAGE_BYTES
from tests.support.harness import Harness
from tests.support.polling import eventually


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
