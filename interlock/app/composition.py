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
from interlock.config.components import PARTITION_HOST, SIMULATOR
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.partitions import PROJECTOR, is_projector
from interlock.contracts.partitions import components as projector_components

EXTRAS = tuple(components.placed("extra"))
CORE = components.placed("core")
"""The runtime's own components (the table's `core` rows). With the stage services of the
installed workflow types they decide, record, publish and time everything; outside systems
are composed in by the root. With several projector partitions, `projector` is `projector.0`
.. `projector.<n-1>`."""


def core(partitions: int = 1, projector_host: bool = False) -> list[str]:
    """The core components with `partitions` projector partitions, each its own process, or
    with `projector_host` (and more than one) all in the partition host's."""
    if projector_host and partitions > 1:
        return [PARTITION_HOST if name == PROJECTOR else name for name in components.placed("core")]
    return with_partitions(components.placed("core"), partitions)


def default_components(
    *workflow_types: str,
    extras: Sequence[str] = (),
    partitions: int = 1,
    stage_host: bool = False,
    projector_host: bool = False,
) -> list[str]:
    """The core components (`partitions` projectors, or with `projector_host` the partition
    host running them all), then `extras`, then the stage services of `workflow_types`
    (default: every installed type), each its own process, or with `stage_host` the stage host
    running every installed type's stages in one."""
    if stage_host:
        return [*core(partitions, projector_host), *extras, *components.placed("host")]
    return [
        *core(partitions, projector_host),
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


def default_stack(
    *workflow_types: str,
    partitions: int = 1,
    stage_host: bool = False,
    projector_host: bool = False,
) -> list[str]:
    """What `up`, the demo and the bench start: the runtime's components for
    `workflow_types` (default: all), with `partitions` projector partitions, and the
    simulator their stage services call; with `stage_host`, every stage service in one
    process (see `Settings.hosts_stages`), with `projector_host` every partition in one
    (`Settings.hosts_partitions`)."""
    return default_components(
        *workflow_types,
        extras=[SIMULATOR],
        partitions=partitions,
        stage_host=stage_host,
        projector_host=projector_host,
    )


def stack_of(settings: Settings, *workflow_types: str) -> list[str]:
    """`default_stack` as `settings` ask for it: their partitions, hosted as they say."""
    return default_stack(
        *workflow_types,
        partitions=settings.projector_partitions,
        stage_host=settings.hosts_stages(),
        projector_host=settings.hosts_partitions(),
    )


def names() -> list[str]:
    """Every component name `interlock service` accepts (and `projector.<k>`, a partition)."""
    return [
        *default_components(extras=components.placed("extra")),
        *components.placed("host"),
        *components.placed("partitions"),
    ]


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
