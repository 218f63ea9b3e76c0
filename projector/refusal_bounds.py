"""How many refusal rows one client may write into workflow audits.

A refusal of a client that may act for the tenant is audited on the workflow it names (the
history shows every message about it). Without a bound, one client's flood of refusals for one
workflow (2,000 stale or unauthorised signals) filled that workflow's audit, and its console
page took seconds. So each client may write at most `per_workflow` refusal rows into one
workflow, and `per_sender` in all, per `window` seconds; past that its refusals are dead-lettered
`refusals_over_limit` (the original reason and detail kept, the sender named): recorded where
they belong to the sender, never in the workflow's audit.

Counted per process over a fixed window; the number of keys kept is bounded too (`max_keys`),
so a flood over many workflows cannot grow the count without bound (past it, a key not yet
counted is treated as over its limit until the window turns).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from interlock.contracts.envelope import Envelope
from interlock.contracts.subjects import Inbound
from interlock.projector.engine import Workflow
from interlock.projector.parking import sender
from interlock.projector.store.rows import COUNTED

OVER_LIMIT = "refusals_over_limit"


@dataclass
class RefusalBounds:
    per_workflow: int = 20
    per_sender: int = 500
    window: float = 60.0
    max_keys: int = 50_000
    clock: Callable[[], float] = time.monotonic
    _started: float = field(default=float("-inf"))
    _counts: dict[tuple[str, ...], int] = field(default_factory=dict)

    def admit(self, sender: str, tenant_id: str, workflow_id: str) -> str | None:
        """Count one refusal row of `sender` on the workflow: None if it may be written, else
        why not (the sender's count named)."""
        now = self.clock()
        if now - self._started >= self.window:
            self._started, self._counts = now, {}
        workflow = (sender, tenant_id, workflow_id)
        if self._count(workflow) >= self.per_workflow:
            return f"{sender} already had {self.per_workflow} refusals audited on this workflow"
        if self._count((sender,)) >= self.per_sender:
            return f"{sender} already had {self.per_sender} refusals audited"
        new = (workflow not in self._counts) + ((sender,) not in self._counts)
        if len(self._counts) + new > self.max_keys:
            return f"too many senders and workflows refused within {self.window:.0f} s"
        self._counts[workflow] = self._count(workflow) + 1
        self._counts[(sender,)] = self._count((sender,)) + 1
        return None

    def _count(self, key: tuple[str, ...]) -> int:
        return self._counts.get(key, 0)


def over_limit(
    bounds: RefusalBounds,
    inbound: Inbound | None,
    workflow: Workflow,
    event: Envelope,
    reason: str,
) -> str | None:
    """Why this refusal of a client may not be written into the workflow's audit (None: it
    may, or it is not a client's: components' refusals, duplicates, which write nothing, and
    repeated requests, which the store counts with one row per reason, are not bounded)."""
    if inbound is None or inbound.kind not in ("request", "signal"):
        return None
    if reason == "duplicate" or reason in COUNTED:
        return None
    return bounds.admit(sender(inbound, event.event_id), workflow.tenant_id, workflow.workflow_id)
