"""The redrive attack of a hostile round: a configured sender's webhook, signed with its
secret, refused by the gateway and recorded on `wf.dlq.gateway`, then redriven as an operator
would (`interlock dlq redrive`). The record must not be redrivable; were it redriven, the
projector's decision on its event id is its fate (read back like any other message's)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
from nats.js import JetStreamContext

from interlock.contracts import subjects
from interlock.messaging import letters
from interlock.messaging.errors import NotRedrivable
from interlock.tools.hostile import account
from interlock.tools.hostile.forge import Hostile
from interlock.tools.hostile.web import sign

LOOK_BACK = 500
"""Dead letters searched, newest first, for the webhook's record (a round sends in chunks of
100, so its record is among the newest)."""


async def attempt(
    http: httpx.AsyncClient, js: JetStreamContext, h: Hostile, secret: str
) -> str | None:
    """Post `h` signed as its sender, then redrive its record; the fate when it is settled here
    (`not_redrivable`, or the gateway's acceptance), None when the projector decides it."""
    at, webhook_id = datetime.now(UTC), h.headers["webhook-id"]
    signature = sign(secret, webhook_id, at, h.body)
    signed = {
        **h.headers,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": signature,
    }
    response = await http.post(h.subject, content=h.body, headers=signed)
    if response.status_code == 202:
        return account.ACCEPTED
    if response.status_code == 429:
        return "gateway_rate_limited"  # refused unrecorded: there is nothing to redrive
    record = await _record_of(js, webhook_id)
    if record is None:
        return account.UNACCOUNTED
    try:
        await letters.redrive(js, record)
    except NotRedrivable:
        return "not_redrivable"
    return None


async def _record_of(js: JetStreamContext, webhook_id: str) -> letters.Letter | None:
    last = (await js.stream_info(subjects.STREAM_DLQ)).state.last_seq
    for sequence in range(last, max(0, last - LOOK_BACK), -1):
        found = await letters.letter(js, sequence)
        if found is None or found.source != letters.GATEWAY_SOURCE:
            continue
        if found.headers.get(letters.HEADER_GATEWAY_WEBHOOK_ID) == webhook_id:
            return found
    return None
