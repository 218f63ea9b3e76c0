"""How a stack is shaped into processes: its projector partitions, and whether several
partitions or the stage services share one process (their fields are part of `Settings`,
read from the same `INTERLOCK_*` variables)."""

import os
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings

SMALL_MACHINE_CPUS = 4
"""Up to this many CPUs, one process per stage or per projector partition costs more (memory,
context switches, a loop waking for each message of a small share) than the isolation it
buys: `stage_host=auto` hosts the stages in one process, `projector_host=auto` the
partitions."""


class ShapeSettings(BaseSettings):
    """The stack-shape fields of `Settings`."""

    projector_partitions: int = Field(
        1, ge=1, le=64, description="Projector processes (`projector.0` ..), each deciding the "
        "workflows that hash to it; 1: one `projector`. Changing it: see the README."
    )  # fmt: skip
    stage_host: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="How `up`, `demo` and `bench` run the stage services: `on`, every stage in "
        "one process (`interlock service stages`), each still its own durable consumer; "
        "`off`, one process per stage; `auto`, `on` on a machine with at most 4 CPUs.",
    )
    projector_host: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="How `up` and `bench` run several projector partitions: `on`, "
        "every partition in one process (`interlock service projectors`), each still its own "
        "consumer of its own stream; `off`, one process per partition; `auto`, `on` on a "
        "machine with at most 4 CPUs.",
    )

    def hosts_partitions(self) -> bool:
        """Whether the stack runs its projector partitions in one process (`projector_host`)."""
        if self.projector_partitions == 1:
            return False
        if self.projector_host == "auto":
            return (os.cpu_count() or 1) <= SMALL_MACHINE_CPUS
        return self.projector_host == "on"

    def hosts_stages(self) -> bool:
        """Whether the stack runs its stage services in one process (`stage_host`)."""
        if self.stage_host == "auto":
            return (os.cpu_count() or 1) <= SMALL_MACHINE_CPUS
        return self.stage_host == "on"
