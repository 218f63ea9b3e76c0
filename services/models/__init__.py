"""Implementations of the `ModelClient` port, and `model_client`, which picks one by name.

- ``rules`` — `RulesModel`: the plugins' deterministic rules, no network (the default);
- ``recorded:<path>`` — `RecordedModel`: outcomes replayed from a fixture file;
- ``openai`` — `OpenAIChatModel`: any OpenAI-compatible chat-completions endpoint;
- ``local`` — `LocalModel`: a text classifier trained from the plugins' examples, offline.

Every client serves the model tasks of a `TaskCatalog`: the prompts and rules the workflows'
plugins declare. Nothing is created at import time; the composition root calls `model_client`
with its settings and the catalog of the workflow type's plugin.
"""

from __future__ import annotations

from interlock.services.errors import RecordedFixtureError
from interlock.services.models.catalog import RulesFn, TaskCatalog
from interlock.services.models.local import LocalModel
from interlock.services.models.local_task import LocalTask
from interlock.services.models.openai import OpenAIChatModel
from interlock.services.models.prompts import PromptTemplate
from interlock.services.models.recorded import RecordedModel
from interlock.services.models.rules import RulesModel
from interlock.services.ports import ModelClient

__all__ = [
    "LocalModel",
    "LocalTask",
    "OpenAIChatModel",
    "PromptTemplate",
    "RecordedFixtureError",
    "RecordedModel",
    "RulesFn",
    "RulesModel",
    "TaskCatalog",
    "model_client",
]

SPECS = ("rules", "local", "recorded:<path>", "openai")


def model_client(
    spec: str,
    *,
    tasks: TaskCatalog,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    timeout: float = 30.0,
) -> ModelClient:
    """The model client `spec` names (``rules``, ``local``, ``recorded:<path>`` or
    ``openai``), serving the model tasks of `tasks`.

    Raises `ValueError` for any other spec, for ``recorded:`` without a path and for
    ``openai`` without `base_url` and `model`; `RecordedFixtureError` if the fixture file is
    unreadable or malformed. An `OpenAIChatModel` should be closed with `aclose()`.
    """
    name, _, argument = spec.strip().partition(":")
    if name == "rules" and not argument:
        return RulesModel(tasks.rules)
    if name == "local" and not argument:
        return LocalModel(tasks.local, RulesModel(tasks.rules))
    if name == "recorded" and argument.strip():
        return RecordedModel(argument.strip())
    if name == "openai" and not argument:
        return _openai(tasks, base_url, model, api_key, timeout)
    raise ValueError(f"unknown model client {spec!r}: use one of {', '.join(SPECS)}")


def _openai(
    tasks: TaskCatalog,
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    timeout: float,
) -> OpenAIChatModel:
    if not base_url or not model:
        raise ValueError(
            "the openai model client needs an endpoint and a model name: set "
            "INTERLOCK_OPENAI_BASE_URL (e.g. https://api.openai.com/v1) and "
            "INTERLOCK_OPENAI_MODEL, and INTERLOCK_OPENAI_API_KEY if the endpoint wants a "
            f"bearer token (missing: {'base URL' if not base_url else 'model'}"
            f"{' and model' if not base_url and not model else ''})"
        )
    return OpenAIChatModel(
        base_url=base_url, model=model, templates=tasks.templates, api_key=api_key, timeout=timeout
    )
