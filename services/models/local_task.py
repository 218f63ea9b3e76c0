"""`LocalTask`: what the ``local`` model needs to answer a task."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

FaultsFn = Callable[[Mapping[str, object], Mapping[str, object], bool], Mapping[str, object]]


@dataclass(frozen=True)
class LocalTask:
    """A task the local model answers: its labelled examples and the field it predicts."""

    examples: Path
    label: str
    faults: FaultsFn | None = None
    """The plugin's test markers, applied to the classifier's answer (`ModelTask.faults`)."""
