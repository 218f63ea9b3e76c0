"""What the model clients share with the OpenAI wire, without a network: the prompt
templates and their rendering, the chat wire helpers (provider errors, empty content), and
the `model_client` factory with its refusals of incomplete or unsafe OpenAI settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interlock.errors import ExternalRejected
from interlock.services.models import (
    OpenAIChatModel,
    RecordedModel,
    RulesModel,
    model_client,
)
from interlock.services.models.chat_wire import Message, output_of, provider_error
from interlock.services.models.prompts import render_messages
from interlock.services.ports import ModelRequest
from tests.support.model_requests import (
    BUILT_IN,
    REQUEST_CLASSIFY_V1,
    SUPPORT_CLASSIFY_V1,
    SUPPORT_RECOMMEND_V1,
    classify,
    seed_fixture,
)

TEMPLATES = BUILT_IN.templates

# --- prompts and the wire format ----------------------------------------------------------


def test_every_template_serves_a_task_a_model_request_can_name() -> None:
    assert set(TEMPLATES) == {SUPPORT_CLASSIFY_V1, SUPPORT_RECOMMEND_V1, REQUEST_CLASSIFY_V1}
    for template in TEMPLATES.values():
        fields = {"task": template.task, "prompt_version": template.version}
        request = ModelRequest.model_validate(fields | {"inputs": {"k": 1}, "output_schema": {}})
        messages = render_messages(TEMPLATES, request)
        assert [m["role"] for m in messages] == ["system", "user"]
        assert '"k": 1' in messages[1]["content"]


def test_prompt_version_of_another_task_is_rejected() -> None:
    request = classify("x").model_copy(update={"prompt_version": SUPPORT_RECOMMEND_V1})

    with pytest.raises(ExternalRejected) as raised:
        render_messages(TEMPLATES, request)

    assert raised.value.error_class == "prompt_task_mismatch"


def test_repair_prompt_lists_the_previous_errors_and_first_prompt_does_not() -> None:
    first = render_messages(TEMPLATES, classify("Refund"))[1]["content"]
    repair = render_messages(
        TEMPLATES, classify("Refund", repair=["category: bad", "confidence: missing"])
    )

    assert "rejected by validation" not in first
    assert "- category: bad\n- confidence: missing" in repair[1]["content"]


def test_provider_error_keeps_only_safe_type_and_code_tokens() -> None:
    body = {"error": {"type": "invalid_request_error", "code": "has spaces", "message": "p"}}

    assert provider_error(json.dumps(body).encode()) == " (invalid_request_error)"
    assert provider_error(b"not json") == ""


def test_empty_content_is_unparseable() -> None:
    assert output_of(Message(content="")) == {"_unparseable": ""}


# --- the factory --------------------------------------------------------------------------


async def test_model_client_builds_each_kind(tmp_path: Path) -> None:
    path = seed_fixture(tmp_path, [])
    openai = model_client(
        "openai", tasks=BUILT_IN, base_url="http://127.0.0.1:9/v1", model="m", api_key="k"
    )

    assert isinstance(model_client("rules", tasks=BUILT_IN), RulesModel)
    assert isinstance(model_client(f"recorded:{path}", tasks=BUILT_IN), RecordedModel)
    assert isinstance(openai, OpenAIChatModel)
    await openai.aclose()


@pytest.mark.parametrize("spec", ["gpt-4", "recorded:", "rules:x", "local:x", "openai:x", ""])
def test_unknown_model_client_names_the_accepted_forms(spec: str) -> None:
    with pytest.raises(ValueError, match=r"rules, local, recorded:<path>, openai"):
        model_client(spec, tasks=BUILT_IN)


@pytest.mark.parametrize(("base_url", "model"), [(None, None), (None, "m"), ("http://h/v1", None)])
def test_openai_without_endpoint_or_model_names_the_environment_variables(
    base_url: str | None, model: str | None
) -> None:
    with pytest.raises(ValueError, match="INTERLOCK_OPENAI_BASE_URL") as raised:
        model_client("openai", tasks=BUILT_IN, base_url=base_url, model=model)

    for env in ("INTERLOCK_OPENAI_BASE_URL", "INTERLOCK_OPENAI_MODEL", "INTERLOCK_OPENAI_API_KEY"):
        assert env in str(raised.value)


def test_openai_base_url_that_is_not_http_is_refused_without_repeating_it() -> None:
    with pytest.raises(ValueError, match="http") as raised:
        OpenAIChatModel(base_url="ftp://user:pw-secret@host/v1", model="m", templates={})

    assert "pw-secret" not in str(raised.value)
