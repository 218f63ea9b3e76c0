"""Implementations of the `ModelClient` port, and `model_client`, which picks one by name.

- ``rules`` — `RulesModel`: deterministic keyword rules, no network (the default);
- ``recorded:<path>`` — `RecordedModel`: outcomes replayed from a fixture file;
- ``openai`` — `OpenAIChatModel`: any OpenAI-compatible chat-completions endpoint.

Nothing is created at import time; the composition root calls `model_client` with its
settings.
"""

from __future__ import annotations

from interlock.services.errors import RecordedFixtureError
from interlock.services.models.openai import OpenAIChatModel
from interlock.services.models.prompts import (
    REQUEST_CLASSIFY_V1,
    SUPPORT_CLASSIFY_V1,
    SUPPORT_RECOMMEND_V1,
    TEMPLATES,
)
from interlock.services.models.recorded import RecordedModel
from interlock.services.models.rules import RulesModel
from interlock.services.ports import ModelClient

__all__ = [
    "REQUEST_CLASSIFY_V1",
    "SUPPORT_CLASSIFY_V1",
    "SUPPORT_RECOMMEND_V1",
    "TEMPLATES",
    "OpenAIChatModel",
    "RecordedFixtureError",
    "RecordedModel",
    "RulesModel",
    "model_client",
]

SPECS = ("rules", "recorded:<path>", "openai")


def model_client(
    spec: str,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    timeout: float = 30.0,
) -> ModelClient:
    """The model client `spec` names: ``rules``, ``recorded:<path>`` or ``openai``.

    Raises `ValueError` for any other spec, for ``recorded:`` without a path and for
    ``openai`` without `base_url` and `model`; `RecordedFixtureError` if the fixture file is
    unreadable or malformed. An `OpenAIChatModel` should be closed with `aclose()`.
    """
    name, _, argument = spec.strip().partition(":")
    if name == "rules" and not argument:
        return RulesModel()
    if name == "recorded" and argument.strip():
        return RecordedModel(argument.strip())
    if name == "openai" and not argument:
        return _openai(base_url, model, api_key, timeout)
    raise ValueError(f"unknown model client {spec!r}: use one of {', '.join(SPECS)}")


def _openai(
    base_url: str | None, model: str | None, api_key: str | None, timeout: float
) -> OpenAIChatModel:
    if not base_url or not model:
        raise ValueError(
            "the openai model client needs an endpoint and a model name: set "
            "INTERLOCK_OPENAI_BASE_URL (e.g. https://api.openai.com/v1) and "
            "INTERLOCK_OPENAI_MODEL, and INTERLOCK_OPENAI_API_KEY if the endpoint wants a "
            f"bearer token (missing: {'base URL' if not base_url else 'model'}"
            f"{' and model' if not base_url and not model else ''})"
        )
    return OpenAIChatModel(base_url=base_url, model=model, api_key=api_key, timeout=timeout)
