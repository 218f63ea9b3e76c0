"""The components a stack is made of, by name.

The runtime's own components are `CORE` and the stage services of the installed
workflow types. The composition root adds the extras, the table's `extra` rows
(`interlock.config.components`): the simulator of the outside systems the stage services call
(which `up`, the demo and the bench start by default), and the approval/webhook gateway and
the operator console (which `up` starts). What runs under each name is its row's runner
(`runners.components`).
"""

from __future__ import annotations

from collections.abc import Sequence

from interlock.config import components
from interlock.config.components import SIMULATOR
from interlock.config.plugins import installed
from interlock.contracts.partitions import PROJECTOR, is_projector
from interlock.contracts.partitions import components as projector_components

EXTRAS = tuple(components.placed("extra"))
CORE = components.placed("core")
"""The runtime's own components (the table's `core` rows). With the stage services of the
installed workflow types they decide, record, publish and time everything; outside systems
are composed in by the root. With several projector partitions, `projector` is `projector.0`
.. `projector.<n-1>`."""


def core(partitions: int = 1) -> list[str]:
    """The core components with `partitions` projector partitions."""
    return with_partitions(components.placed("core"), partitions)


def default_components(
    *workflow_types: str,
    extras: Sequence[str] = (),
    partitions: int = 1,
    stage_host: bool = False,
) -> list[str]:
    """The core components (`partitions` projectors), then `extras`, then the stage services
    of `workflow_types` (default: every installed type), each its own process, or with
    `stage_host` the stage host running every installed type's stages in one."""
    if stage_host:
        return [*core(partitions), *extras, *components.placed("host")]
    return [
        *core(partitions),
        *extras,
        *(
            row.name
            for row in components.rows()
            if row.stage is not None and (not workflow_types or row.stage[0] in workflow_types)
        ),
    ]


def with_partitions(names: list[str], partitions: int) -> list[str]:
    """`names` with `projector` standing for every partition of a partitioned projector."""
    if partitions == 1:
        return names
    expanded: list[str] = []
    for name in names:
        expanded += projector_components(partitions) if name == PROJECTOR else [name]
    return expanded


def default_stack(*workflow_types: str, partitions: int = 1, stage_host: bool = False) -> list[str]:
    """What `up`, the demo and the bench start: the runtime's components for
    `workflow_types` (default: all), with `partitions` projector partitions, and the
    simulator their stage services call; with `stage_host`, every stage service in one
    process (see `Settings.hosts_stages`)."""
    return default_components(
        *workflow_types, extras=[SIMULATOR], partitions=partitions, stage_host=stage_host
    )


def names() -> list[str]:
    """Every component name `interlock service` accepts (and `projector.<k>`, a partition)."""
    return [*default_components(extras=components.placed("extra")), *components.placed("host")]


def resolve_name(name: str) -> str:
    """Accept `classify` for `support.classify` when unambiguous."""
    known = names()
    if name in known or is_projector(name):
        return name
    matches = [k for k in known if k.split(".", 1)[-1] == name]
    if len(matches) == 1:
        return matches[0]
    installed().require(name)  # a stage of a refused plugin: that plugin's problem, exit 2
    hint = f"one of: {', '.join(sorted(known))}"
    raise ValueError(f"unknown or ambiguous component {name!r}; {hint}")
