"""What became of each hostile message, read back from where the stack records it: the
broker's answer to the publication, the dead letters (which keep the message's number), the
audit trail (refusals, by event id), the workflows' counted replays, the gateway's answer."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.contracts import subjects
from interlock.ops import queries
from interlock.tools.hostile.doorway import FOREIGN
from interlock.tools.hostile.forge import HEADER, Hostile
from interlock.tools.hostile.messages import ACCEPTED, UNACCOUNTED

__all__ = ["ACCEPTED", "UNACCOUNTED", "Fates", "dead_letters", "decisions", "replays"]


@dataclass
class Fates:
    """Each message's fate by its number (a refusal reason, a dead-letter reason, ...)."""

    by_number: dict[int, str] = field(default_factory=dict)

    def record(self, number: int, fate: str) -> None:
        self.by_number.setdefault(number, fate)

    def of(self, numbers: set[int]) -> Fates:
        """The fates of these messages only (the dead letters hold other rounds' too)."""
        return Fates({n: f for n, f in self.by_number.items() if n in numbers})

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(self.by_number.values()).items()))


async def dead_letters(js: JetStreamContext, fates: Fates) -> None:
    """Every dead letter of a hostile message: its reason."""
    try:
        state = (await js.stream_info(subjects.STREAM_DLQ)).state
    except NotFoundError:
        return
    for seq in range(max(1, state.first_seq), state.last_seq + 1):  # empty: first 0, last 0
        try:
            letter = await js.get_msg(subjects.STREAM_DLQ, seq)
        except NotFoundError:
            continue
        headers = letter.headers or {}
        if HEADER in headers:
            fates.record(int(headers[HEADER]), headers.get(subjects.HEADER_DLQ_REASON, "?"))


async def decisions(engine: AsyncEngine, sent: list[Hostile], fates: Fates) -> None:
    """Refusals audited for the messages' event ids; an accepted one is a violation (a
    replayed request is the workflow's own: its repeats are counted, see `replays`)."""
    ids = sorted({h.event_id for h in sent if h.event_id and h.kind != "replayed"})
    found = await queries.refusals_of(engine, ids)
    for h in sent:
        decided = found.get(h.event_id or "")
        if h.kind == "replayed" or decided is None:
            continue
        if h.kind == FOREIGN:
            # A refusal of a client that may not act for the tenant, written into that
            # tenant's workflow audit, is itself what must not happen.
            fates.by_number[h.number] = ACCEPTED
            continue
        # A forged result may share its id with the real one, accepted from the real stage:
        # its refusal is what counts.
        fates.record(h.number, decided or ACCEPTED)


async def replays(
    engine: AsyncEngine, workflow_ids: list[str], sent: list[Hostile], fates: Fates
) -> None:
    """Replayed requests the broker did not drop: as many as the workflows counted."""
    counted = await queries.counted_replays(engine, workflow_ids)
    pending = [h for h in sent if h.kind == "replayed" and h.number not in fates.by_number]
    for h in pending[:counted]:
        fates.record(h.number, "idempotent_replay")
