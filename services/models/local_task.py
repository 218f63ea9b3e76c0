"""`LocalTask`: what the ``local`` model needs to answer a task."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LocalTask:
    """A task the local model answers: its labelled examples and the field it predicts."""

    examples: Path
    label: str
