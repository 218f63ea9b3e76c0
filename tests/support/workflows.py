"""The installed workflow plugins' registry, as the composition root builds it."""

from __future__ import annotations

from interlock.plugins import installed

REGISTRY = installed().registry
STAGES = REGISTRY.stages()
