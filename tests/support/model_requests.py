"""Model requests and recorded-answer fixtures as the model-client tests build them: shared
by the tests of the rules, recorded and OpenAI-wire model clients."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from interlock.app.wiring import task_catalog
from interlock.config.plugins import installed
from interlock.services.models import RulesModel, TaskCatalog
from interlock.services.ports import ModelRequest
from interlock.workflows.request.prompts import REQUEST_CLASSIFY_V1
from interlock.workflows.support.prompts import SUPPORT_CLASSIFY_V1, SUPPORT_RECOMMEND_V1

__all__ = [
    "BUILT_IN",
    "REQUEST_CLASSIFY_V1",
    "SUPPORT_CLASSIFY_V1",
    "SUPPORT_RECOMMEND_V1",
    "classify",
    "rules_model",
    "seed_fixture",
]


def _built_in() -> TaskCatalog:
    support, request = (task_catalog(installed().plugin(t)) for t in ("support", "request"))
    return TaskCatalog(
        templates={**support.templates, **request.templates},
        rules={**support.rules, **request.rules},
    )


BUILT_IN = _built_in()
"""The model tasks of the built-in plugins, as the runtime hands them to a model client."""


def rules_model() -> RulesModel:
    return RulesModel(BUILT_IN.rules)


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
