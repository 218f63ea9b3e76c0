"""Model requests and recorded-answer fixtures as the model-client tests build them: shared
by the tests of the rules, recorded and OpenAI-wire model clients."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from interlock.services.models import SUPPORT_CLASSIFY_V1
from interlock.services.ports import ModelRequest


def classify(subject: str, body: str = "", repair: list[str] | None = None) -> ModelRequest:
    return ModelRequest(
        task="classify",
        prompt_version=SUPPORT_CLASSIFY_V1,
        inputs={"subject": subject, "body": body},
        output_schema={},
        repair_errors=repair or [],
    )


def seed_fixture(tmp_path: Path, cases: list[dict[str, Any]], **top: Any) -> Path:
    path = tmp_path / "fixture.json"
    document = {"dataset": "test", "max_classifier_attempts": 2, **top, "cases": cases}
    path.write_text(json.dumps(document))
    return path
