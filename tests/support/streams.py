"""Reading a JetStream stream back exactly as a consumer would see it."""

from __future__ import annotations

from nats.js import JetStreamContext
from nats.js.api import RawStreamMsg
from nats.js.errors import NotFoundError


async def messages_of(js: JetStreamContext, stream: str) -> list[RawStreamMsg]:
    """Every message `stream` holds, in stream (publication) order; none if it is absent."""
    try:
        state = (await js.stream_info(stream)).state
    except NotFoundError:
        return []
    if not state.messages:
        return []
    seqs = range(state.first_seq, state.last_seq + 1)
    return [await js.get_msg(stream, seq) for seq in seqs]
