"""The workflow definitions an installation can execute, old versions included.

A workflow records the definition version it started with and is always decided by that
version, so a deployment never silently reinterprets an in-flight workflow.

A `Registry` is a value: the composition root builds it from the installed plugins
(`interlock.config.plugins`) and hands it to whatever needs to know the workflow types (projector,
gateway, stream topology, gauges, tools). Nothing here knows any particular workflow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import Envelope, workflow_id_of
from interlock.contracts.errors import UnknownDefinition
from interlock.contracts.guards import GuardPredicate
from interlock.contracts.ids import derive

WorkflowKey = Callable[[Mapping[str, Any]], str | None]
"""A pure function of a request's payload: requests of one tenant with the same key are the
same workflow, whatever their event ids (None: no key, the event id decides)."""


class Registry:
    """Every executable definition, by (workflow type, version)."""

    def __init__(
        self,
        definitions: Iterable[WorkflowDefinition],
        guards: Mapping[str, Mapping[str, GuardPredicate]] | None = None,
        keys: Mapping[str, WorkflowKey] | None = None,
    ) -> None:
        """`guards`: per workflow type, its plugin's own guards by name; `keys`: the types
        whose workflow id derives from the request's content rather than its event id."""
        self._guards = {t: dict(g) for t, g in (guards or {}).items()}
        self._keys = dict(keys or {})
        self._by_key: dict[tuple[str, int], WorkflowDefinition] = {}
        for d in definitions:
            key = (d.workflow_type, d.version)
            if key in self._by_key:
                raise ValueError(f"two definitions of {d.workflow_type!r} v{d.version}")
            self._by_key[key] = d
        self._latest = {t: max(v for (tt, v) in self._by_key if tt == t) for t, _ in self._by_key}
        self._events = frozenset(
            (t, e.name) for (t, _), d in self._by_key.items() for e in d.events
        )

    def __iter__(self) -> Iterator[WorkflowDefinition]:
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)

    def get(self, workflow_type: str, version: int) -> WorkflowDefinition:
        try:
            return self._by_key[(workflow_type, version)]
        except KeyError:
            raise UnknownDefinition(f"no definition {workflow_type!r} v{version}") from None

    def latest(self, workflow_type: str) -> WorkflowDefinition:
        """The version new workflows of this type start with."""
        version = self._latest.get(workflow_type)
        if version is None:
            known = self.workflow_types()
            raise UnknownDefinition(f"unknown workflow type {workflow_type!r}; known: {known}")
        return self._by_key[(workflow_type, version)]

    def guards(self, workflow_type: str) -> Mapping[str, GuardPredicate]:
        """The plugin guards of `workflow_type` (none for most types)."""
        return self._guards.get(workflow_type, {})

    def request_key(self, request: Envelope) -> str | None:
        """The content key of a request whose type defines one (else None)."""
        key = self._keys.get(request.workflow_type)
        return None if key is None else key(request.payload)

    def workflow_id(self, event: Envelope) -> str:
        """The workflow `event` addresses: its `workflow_id`; for a request without one, the
        id its type derives from the content key, or else from the event id."""
        key = None if event.workflow_id else self.request_key(event)
        if key is None:
            return workflow_id_of(event)
        return derive("workflow-key", event.workflow_type, event.tenant_id, key)

    def versions(self, workflow_type: str) -> list[int]:
        return sorted(v for (t, v) in self._by_key if t == workflow_type)

    def workflow_types(self) -> list[str]:
        return sorted(self._latest)

    def knows_event(self, workflow_type: str, event_type: str) -> bool:
        """Whether any version of `workflow_type` defines `event_type`."""
        return (workflow_type, event_type) in self._events

    def stages(self) -> list[tuple[str, str]]:
        """(workflow_type, stage) for every stage of every definition."""
        found = {(d.workflow_type, s.name) for d in self for s in d.all_stages()}
        return sorted(found)
