"""The newest dead letters, read (never consumed) from the dead-letter stream: where each
came from, why, and when. Bodies are not shown: they may hold payload values."""

from __future__ import annotations

from typing import Any

import nats
from nats.errors import Error as NatsError
from nats.js.errors import NotFoundError

from interlock.contracts import subjects


async def newest(nats_url: str, limit: int = 20) -> dict[str, Any]:
    """`{"total", "letters": [{"seq", "source", "reason", "detail", "subject", "at"}]}`, newest
    first; `{"error": ...}` when the broker cannot be asked."""
    try:
        nc = await nats.connect(
            nats_url, name="interlock-console", connect_timeout=2, max_reconnect_attempts=0
        )
    except (OSError, NatsError, TimeoutError) as exc:
        return {"total": 0, "letters": [], "error": f"broker unreachable: {type(exc).__name__}"}
    try:
        js = nc.jetstream()
        try:
            state = (await js.stream_info(subjects.STREAM_DLQ)).state
        except NotFoundError:
            return {"total": 0, "letters": []}
        except (NatsError, TimeoutError) as exc:
            # The console's identity may not be allowed to read the dead-letter stream.
            return {"total": 0, "letters": [], "error": f"not readable here: {type(exc).__name__}"}
        letters = []
        oldest = max(state.first_seq, state.last_seq - limit + 1, 1)
        for seq in range(state.last_seq, oldest - 1, -1):
            try:
                msg = await js.get_msg(subjects.STREAM_DLQ, seq)
            except NotFoundError:
                continue
            headers = msg.headers or {}
            letters.append(
                {
                    "seq": seq,
                    "source": (msg.subject or "").removeprefix(f"{subjects.DLQ_PREFIX}."),
                    "reason": headers.get(subjects.HEADER_DLQ_REASON, ""),
                    "detail": headers.get(subjects.HEADER_DLQ_DETAIL, ""),
                    "subject": headers.get(subjects.HEADER_DLQ_SUBJECT, ""),
                    "at": msg.time,
                }
            )
        return {"total": state.messages, "letters": letters}
    finally:
        await nc.close()
