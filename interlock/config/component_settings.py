"""The settings each component process is given, by `Settings` field name: what every one
reads (`COMMON`), what the projector's and the stages' rows name, and the model's, given to a
process whose stages ask a model."""

from __future__ import annotations

from interlock.config.plugins import installed

COMMON = (
    "home", "log_level", "local_traces", "insecure_nats", "shutdown_grace", "event_loop",
)  # fmt: skip
"""What every component process is given."""
PROJECTOR_SETTINGS = (
    "projector_workers",
    "commit_batch",
    "projector_partitions",
    "parameters",
    "unknown_workflow_grace",
    "publish_grace",
    "occurred_at_past_days",
    "occurred_at_future_s",
)
PROJECTOR_GIVEN = ("clients", "job_signing_key", "gateway_claims_public_key")
STAGE = ("stage_workers", "external_timeout", "stage_redelivery_s", "adapters")
MODEL = (
    "model",
    "models",
    "openai_base_url",
    "openai_model",
    "openai_api_key",
    "model_timeout",
    "model_prices",
)


def model_stages() -> frozenset[str]:
    """The stages that ask a model, as their plugins declare (tests/unit check this against
    the wired stages)."""
    return frozenset(
        f"{workflow_type}.{stage}"
        for workflow_type, loaded in installed().plugins.items()
        for stage in loaded.plugin.stages_asking_a_model()
    )
