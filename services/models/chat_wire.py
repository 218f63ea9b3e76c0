"""The OpenAI chat-completions wire format: the request body and the parsing of replies.

Pure functions, no I/O: `OpenAIChatModel` does the HTTP. Parsing never trusts the reply:
a message whose content is not a JSON object becomes a marker output the caller's schema
validation rejects, and a provider's error is reduced to its type and code.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from interlock.services.models.prompts import Templates, render_messages
from interlock.services.ports import ModelRequest

SNIPPET = 200
"""How much of an unusable content is kept in the marker output."""
_SAFE_TOKEN = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
_FENCE = re.compile(r"^```[A-Za-z]*\s*\n(.*)\n```$", re.DOTALL)


class _Open(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Message(_Open):
    content: str | None = None
    refusal: str | None = None


class Choice(_Open):
    message: Message


class Usage(_Open):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Completion(_Open):
    """The fields of a chat completion Interlock reads; everything else is ignored."""

    model: str | None = None
    choices: list[Choice] = Field(min_length=1)
    usage: Usage | None = None


def request_body(model: str, templates: Templates, request: ModelRequest) -> dict[str, Any]:
    """The JSON body of a schema-constrained, deterministic (temperature 0) completion, with
    the prompt of `templates` the request names.

    Raises `ExternalRejected` if the request's prompt version is unknown or for another task.
    """
    return {
        "model": model,
        "messages": render_messages(templates, request),
        "temperature": 0,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": request.task, "schema": request.output_schema, "strict": True},
        },
    }


def output_of(message: Message) -> dict[str, Any]:
    """The content as a JSON object (a Markdown code fence around it is tolerated), else
    ``{"_unparseable": <first 200 characters>}`` or, for a refusal, ``{"_refusal": ...}``."""
    if message.content is None:
        return {"_refusal": (message.refusal or "")[:SNIPPET]}
    text = message.content.strip()
    fenced = _FENCE.match(text)
    try:
        value = json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    return {"_unparseable": message.content[:SNIPPET]}


def provider_error(body: bytes) -> str:
    """The provider's error type and code as ``" (type, code)"``, if they are short safe
    tokens, else ``""``. Never its message: that may quote the request."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(error, dict):
        return ""
    tokens = [error.get(k) for k in ("type", "code")]
    safe = [t for t in tokens if isinstance(t, str) and _SAFE_TOKEN.match(t)]
    return f" ({', '.join(safe)})" if safe else ""
