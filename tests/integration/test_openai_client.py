"""`OpenAIChatModel` against a local server speaking the chat-completions protocol.

The server (tests/support/fake_openai.py) checks every request's shape; each test also checks
that neither the prompt nor the API key leaks into an error or a log line.
"""

from __future__ import annotations

import json
import logging
import socket
import traceback
from collections.abc import AsyncIterator, Iterator

import pytest

from interlock.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable
from interlock.services.models import OpenAIChatModel
from interlock.services.ports import ModelRequest
from tests.support.fake_openai import FakeOpenAI, Reply, completion, error
from tests.support.model_requests import BUILT_IN, SUPPORT_CLASSIFY_V1

TEMPLATES = BUILT_IN.templates

API_KEY = "sk-test-7c1e-never-print-me"
SECRET_SUBJECT = "Refund for order ZX-99431-confidential"
MODEL = "fake-model"
SCHEMA = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "enum": ["billing", "access", "technical"]},
        "confidence": {"type": "number"},
        "rationale": {"type": "string"},
    },
    "required": ["category", "confidence", "rationale"],
    "additionalProperties": False,
}
ANSWER = {"category": "billing", "confidence": 0.9, "rationale": "mentions a refund"}


def classify_request(**changes: object) -> ModelRequest:
    fields: dict[str, object] = {
        "task": "classify",
        "prompt_version": SUPPORT_CLASSIFY_V1,
        "inputs": {"subject": SECRET_SUBJECT, "body": "I was charged twice."},
        "output_schema": SCHEMA,
        "case_key": "evt-1",
    }
    return ModelRequest.model_validate(fields | changes)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(model=MODEL, api_key=API_KEY) as server:
        yield server
    assert server.problems == [], "the client sent a request of the wrong shape"


@pytest.fixture
async def client(fake: FakeOpenAI) -> AsyncIterator[OpenAIChatModel]:
    async with OpenAIChatModel(
        base_url=fake.base_url,
        model=MODEL,
        templates=TEMPLATES,
        api_key=API_KEY,
        timeout=2.0,
        retry_backoff=0.01,
    ) as model:
        yield model


def assert_nothing_leaks(exc: BaseException, caplog: pytest.LogCaptureFixture) -> None:
    """Neither the prompt (system or user text) nor the key is in the error or the logs."""
    shown = "".join(traceback.format_exception(exc)) + repr(exc) + caplog.text
    system_text = TEMPLATES[SUPPORT_CLASSIFY_V1].system
    for secret in (API_KEY, SECRET_SUBJECT, system_text[:40], "charged twice"):
        assert secret not in shown


async def test_completion_returns_the_json_object_with_usage_and_versions(
    fake: FakeOpenAI, client: OpenAIChatModel
) -> None:
    fake.enqueue(completion(json.dumps(ANSWER), prompt_tokens=42, completion_tokens=7))

    reply = await client.complete(classify_request())

    assert reply.output == ANSWER
    assert (reply.model, reply.model_version) == (MODEL, "fake-model-2024-01-01")
    assert (reply.prompt_tokens, reply.completion_tokens) == (42, 7)
    assert reply.latency_ms > 0
    sent = fake.requests[0]
    assert sent["response_format"]["json_schema"] == {
        "name": "classify",
        "schema": SCHEMA,
        "strict": True,
    }
    assert SECRET_SUBJECT in sent["messages"][1]["content"]
    assert fake.headers[0]["authorization"] == f"Bearer {API_KEY}"


async def test_repair_attempt_sends_the_previous_validation_errors(
    fake: FakeOpenAI, client: OpenAIChatModel
) -> None:
    fake.enqueue(completion(json.dumps(ANSWER)))
    errors = ["category: Input should be 'billing', 'access' or 'technical'"]

    await client.complete(classify_request(repair_errors=errors, attempt=2))

    user_text = fake.requests[0]["messages"][1]["content"]
    assert "rejected by validation" in user_text
    assert errors[0] in user_text


@pytest.mark.parametrize(
    ("content", "output"),
    [
        ("Sure! It is billing.", {"_unparseable": "Sure! It is billing."}),
        ("[1, 2]", {"_unparseable": "[1, 2]"}),
        ("x" * 500, {"_unparseable": "x" * 200}),
        ("```json\n" + json.dumps(ANSWER) + "\n```", ANSWER),
    ],
)
async def test_content_that_is_not_a_json_object_becomes_an_output_validation_rejects(
    fake: FakeOpenAI, client: OpenAIChatModel, content: str, output: dict[str, object]
) -> None:
    fake.enqueue(completion(content))

    reply = await client.complete(classify_request())

    assert reply.output == output


async def test_a_refusal_becomes_an_output_validation_rejects(
    fake: FakeOpenAI, client: OpenAIChatModel
) -> None:
    fake.enqueue(completion(None, refusal="I can't help with that."))

    reply = await client.complete(classify_request())

    assert reply.output == {"_refusal": "I can't help with that."}


async def test_rate_limited_call_is_retried_and_then_succeeds(
    fake: FakeOpenAI, client: OpenAIChatModel
) -> None:
    fake.enqueue(
        error(429, kind="rate_limit_exceeded"),
        error(429, kind="rate_limit_exceeded"),
        completion(json.dumps(ANSWER)),
    )

    reply = await client.complete(classify_request())

    assert reply.output == ANSWER
    assert len(fake.requests) == 3


@pytest.mark.parametrize(
    ("replies", "message", "requests"),
    [
        pytest.param(
            [error(429, kind="rate_limit_exceeded", message=SECRET_SUBJECT)] * 3,
            "429",
            3,
            id="rate-limit-outlasting-the-retries",
        ),
        pytest.param(
            [error(500, kind="server_error", message=f"failed on: {SECRET_SUBJECT}")],
            "HTTP 500 (server_error)",
            1,
            id="server-error-left-to-durable-retries",
        ),
    ],
)
async def test_an_unavailable_provider_is_reported_without_leaking_the_request(
    fake: FakeOpenAI,
    client: OpenAIChatModel,
    caplog: pytest.LogCaptureFixture,
    *,
    replies: list[Reply],
    message: str,
    requests: int,
) -> None:
    """A rate limit outlasting the client's retries, or a server error (not retried here but
    left to the durable retries), is unavailable, after exactly `requests` requests."""
    fake.enqueue(*replies)

    with caplog.at_level(logging.DEBUG), pytest.raises(ExternalUnavailable) as raised:
        await client.complete(classify_request())

    assert message in str(raised.value)
    assert len(fake.requests) == requests
    assert_nothing_leaks(raised.value, caplog)


async def test_a_long_retry_after_is_not_waited_for(
    fake: FakeOpenAI, client: OpenAIChatModel
) -> None:
    fake.enqueue(Reply(status=429, headers={"retry-after": "3600"}, body={"error": {}}))

    with pytest.raises(ExternalUnavailable):
        await client.complete(classify_request())

    assert len(fake.requests) == 1


async def test_a_reply_that_is_not_a_chat_completion_is_unavailable(
    fake: FakeOpenAI, client: OpenAIChatModel
) -> None:
    fake.enqueue(Reply(body=b"<html>gateway</html>"), Reply(body={"choices": []}))

    for _ in range(2):
        with pytest.raises(ExternalUnavailable, match="not a chat completion"):
            await client.complete(classify_request())


async def test_slow_answer_is_a_timeout(fake: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    fake.enqueue(Reply(stall=True))
    model = OpenAIChatModel(
        base_url=fake.base_url, model=MODEL, templates=TEMPLATES, api_key=API_KEY, timeout=0.3
    )

    try:
        with caplog.at_level(logging.DEBUG), pytest.raises(ExternalTimeout) as raised:
            await model.complete(classify_request())
    finally:
        fake.release()
        await model.aclose()

    assert_nothing_leaks(raised.value, caplog)


async def test_bad_request_is_rejected_without_quoting_the_provider_message(
    fake: FakeOpenAI, client: OpenAIChatModel, caplog: pytest.LogCaptureFixture
) -> None:
    message = f"Invalid schema for response_format 'classify' in: {SECRET_SUBJECT} {API_KEY}"
    fake.enqueue(error(400, kind="invalid_request_error", code="bad_schema", message=message))

    with caplog.at_level(logging.DEBUG), pytest.raises(ExternalRejected) as raised:
        await client.complete(classify_request())

    assert raised.value.error_class == "model_request_rejected"
    assert "HTTP 400 (invalid_request_error, bad_schema)" in str(raised.value)
    assert_nothing_leaks(raised.value, caplog)


async def test_unreachable_endpoint_is_unavailable_after_bounded_retries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the client connects
    model = OpenAIChatModel(
        base_url=f"http://127.0.0.1:{port}/v1",
        model=MODEL,
        templates=TEMPLATES,
        api_key=API_KEY,
        retry_backoff=0.01,
    )

    async with model:
        with caplog.at_level(logging.DEBUG), pytest.raises(ExternalUnavailable) as raised:
            await model.complete(classify_request())

    assert "unreachable" in str(raised.value)
    assert caplog.text.count("retry") == 2
    assert_nothing_leaks(raised.value, caplog)


async def test_without_an_api_key_no_authorization_header_is_sent() -> None:
    with FakeOpenAI(model=MODEL, api_key=None) as fake:
        fake.enqueue(completion(json.dumps(ANSWER)))
        async with OpenAIChatModel(
            base_url=fake.base_url, model=MODEL, templates=TEMPLATES
        ) as model:
            reply = await model.complete(classify_request())

    assert reply.output == ANSWER
    assert fake.problems == []
    assert "authorization" not in fake.headers[0]


async def test_unknown_prompt_version_is_rejected_before_any_call(
    fake: FakeOpenAI, client: OpenAIChatModel
) -> None:
    with pytest.raises(ExternalRejected) as raised:
        await client.complete(classify_request(prompt_version="support-classify-v0"))

    assert raised.value.error_class == "unknown_prompt_version"
    assert fake.requests == []
