"""Asking the projector to decide a result at once (`contracts.result_requests`).

A stage asks first and publishes on the durable path only when the answer is not `decided`:
its job is acknowledged only after one of the two. An ask no partition hears (a projector
restarting) is answered at once by the broker; one that goes unanswered for `wait` seconds
(a projector far behind, a broker whose configuration predates result requests and drops
the publish) also makes the stage send the next results of the next `pause` seconds the
durable way alone, so a stack that cannot answer costs one wait, not one per result.
"""

from __future__ import annotations

import logging
import time

from nats.aio.client import Client
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

from interlock.contracts import result_requests

log = logging.getLogger("interlock.stage")
WAIT_S = 5.0
"""How long a stage waits for the answer before it sends the result the durable way (well
inside the job's ack wait, which the stage keeps alive meanwhile)."""
PAUSE_S = 30.0
"""How long a stage sends results the durable way alone after an ask went unanswered."""


class Asking:
    def __init__(self, wait: float = WAIT_S, pause: float = PAUSE_S) -> None:
        self._wait = wait
        self._pause = pause
        self._until = 0.0

    async def decided(self, nc: Client, subject: str, body: bytes, headers: dict[str, str]) -> bool:
        """Ask for the result `body` on `subject`; True only if it was decided."""
        if time.monotonic() < self._until:
            return False
        try:
            answer = await nc.request(subject, body, timeout=self._wait, headers=headers)
        except NoRespondersError:
            return False
        except (NatsTimeout, TimeoutError):
            log.warning(
                "no answer to a result request within %.0f s: results go the durable way "
                "alone for %.0f s",
                self._wait,
                self._pause,
            )
            self._until = time.monotonic() + self._pause
            return False
        except Exception as exc:  # the connection: the durable path waits that out
            log.info("result request not sent: %r", exc)
            return False
        return answer.data == result_requests.DECIDED


ASKING = Asking()
"""The process's one: every stage of a stage host asks the same projectors."""
