"""`ModelTask`: what a plugin's stages ask a model, declared by the plugin, not the runtime.

The runtime's model clients are generic: the OpenAI-compatible client renders the prompt the
request's `prompt_version` names from the plugin's released prompts, and the deterministic
``rules`` model answers a task with the plugin's rules function, if it has one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Rules = Callable[[Mapping[str, Any], bool], dict[str, Any]]
"""`rules(inputs, repairing) -> output`: deterministic, no I/O. `repairing` is true when the
previous answer failed validation. A pydantic `ValidationError` it raises is reported as
invalid model inputs (the fields only, never their values)."""


@dataclass(frozen=True)
class Prompt:
    """One released prompt. Immutable once released: changing what the model is asked means a
    new version, so a recorded model call's `prompt_version` names the exact words used."""

    version: str
    instructions: str


@dataclass(frozen=True)
class ModelTask:
    """A task (`ModelRequest.task`) the plugin's stages ask a model: its released prompts and,
    optionally, the rules the ``rules`` model (no network, the default) answers it with."""

    name: str
    prompts: tuple[Prompt, ...]
    rules: Rules | None = None
