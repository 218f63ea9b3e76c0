"""The runtime's own workflow plugins' registry, as the composition root builds it.

Only the workflows the `interlock` distribution ships: the generic table and graph tests draw
their payloads and arrangements from this project's catalogues, so a third-party plugin
installed beside them (the invoice example) is tested by its own suite instead.
"""

from __future__ import annotations

from interlock.config.plugins import installed
from interlock.contracts.registry import Registry

_OWN = [
    loaded.plugin
    for loaded in installed().plugins.values()
    if loaded.distribution.split()[0] == "interlock"
]
REGISTRY = Registry(
    (d for p in _OWN for d in p.definitions),
    guards={p.workflow_type: p.guard_predicates() for p in _OWN},
)
STAGES = REGISTRY.stages()
