"""The model client's settings: which model answers a workflow type's stages, where an
OpenAI-compatible endpoint is, and what its tokens cost (fields of `Settings`, read from the
same `INTERLOCK_*` variables)."""

from typing import Annotated, Self

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings

from interlock.config.setting_checks import HttpUrl, ModelSpec, ModelSpecs, NotEmpty, openai_missing
from interlock.services.models.pricing import Price


class ModelSettings(BaseSettings):
    """The model client's fields of `Settings`."""

    model: ModelSpec = Field(
        default="rules",
        description="Model client: `rules` (deterministic, no network), `local` (a text "
        "classifier trained from the plugins' examples, offline; other tasks by their rules), "
        "`recorded:PATH` (answers from a fixture file) or `openai` (an OpenAI-compatible "
        "endpoint).",
    )
    models: ModelSpecs = Field(
        default_factory=dict,
        description="Per workflow type, a model client for its stages overriding `model`, as "
        'JSON, e.g. {"<type>": "recorded:cases.json"}.',
    )
    openai_base_url: HttpUrl = Field(
        default=None, description="Base URL of the chat-completions endpoint (…/v1)."
    )
    openai_model: Annotated[str | None, NotEmpty] = Field(
        default=None, description="Model name to request."
    )
    openai_api_key: Annotated[SecretStr | None, NotEmpty] = Field(
        default=None, description="Bearer key, if any."
    )
    model_timeout: float = Field(default=30.0, gt=0, description="Seconds per model call.")
    model_prices: dict[str, Price] = Field(
        default_factory=dict,
        description="Per model name, prices per million tokens, as JSON, e.g. "
        '{"gpt-4o-mini": {"input_per_1m": "0.15", "output_per_1m": "0.60"}}; a model not '
        "listed (the local `rules` and `recorded` by default) costs nothing.",
    )

    @model_validator(mode="after")
    def _check_openai(self) -> Self:
        if missing := openai_missing(
            self.model, self.models, self.openai_base_url, self.openai_model
        ):
            raise ValueError(missing)
        return self
