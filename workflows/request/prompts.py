"""The request workflow's model task: its released prompt. It has no deterministic rules:
the ``rules`` model refuses it (`unsupported_task`); configure a recorded or OpenAI-compatible
model for this workflow."""

from __future__ import annotations

from interlock import ModelTask, Prompt

REQUEST_CLASSIFY_V1 = "request-classify-v1"

CLASSIFY_REQUEST = ModelTask(
    name="classify_request",
    prompts=(
        Prompt(
            version=REQUEST_CLASSIFY_V1,
            instructions=(
                "Classify the inbound business request below.\n"
                'category is one of "support", "billing", "sales" or "security"; '
                'recommended_route is the team for it: "service_desk", "finance", '
                '"commercial" or "security_review"; requested_effect is the operation the '
                'request asks for: "create_follow_up", "queue_account_review" or '
                '"send_internal_notification"; reason_code is a short snake_case reason for '
                "your classification."
            ),
        ),
    ),
)
MODEL_TASKS = (CLASSIFY_REQUEST,)
