"""A bounded cache of the latest checkpoint of recently active workflows, by tenant and id.

Correctness never depends on it: a commit is a compare-and-set on the version, so a stale
entry costs one failed commit and a reload. It saves the load round trip on the hot path
(one workflow's events arrive one after another at the same projector). A refusal decided on
a cached entry is written only while the workflow is still at its version (else it is decided
again on a freshly loaded checkpoint): a stale entry must not turn a valid event away.
"""

from __future__ import annotations

from collections import OrderedDict

from interlock.projector.store.types import Stored


class CheckpointCache:
    def __init__(self, capacity: int = 10_000) -> None:
        self._entries: OrderedDict[tuple[str, str], Stored] = OrderedDict()
        self._capacity = capacity

    def get(self, tenant_id: str, workflow_id: str) -> Stored | None:
        found = self._entries.get((tenant_id, workflow_id))
        if found is not None:
            self._entries.move_to_end((tenant_id, workflow_id))
        return found

    def put(self, stored: Stored) -> None:
        key = (stored.workflow.tenant_id, stored.workflow.workflow_id)
        self._entries[key] = stored
        self._entries.move_to_end(key)
        if len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def forget(self, tenant_id: str, workflow_id: str) -> None:
        self._entries.pop((tenant_id, workflow_id), None)
