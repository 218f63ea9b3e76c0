"""A local server that speaks the OpenAI chat-completions protocol, for client tests.

It runs `http.server` in a thread on 127.0.0.1 and answers ``POST /v1/chat/completions``
with scripted replies, in order. Every request is checked for the shape Interlock promises
(model, a system and a user message, temperature 0, a strict ``json_schema`` response format,
the bearer token or none): a request of the wrong shape is answered 400 with error type
``fake_shape_mismatch`` and noted in `problems`, so a test sees it.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: dict[str, Any] | bytes = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    stall: bool = False
    """Hold the answer until `FakeOpenAI.release()` (or the server stops)."""


def completion(
    content: str | None,
    *,
    prompt_tokens: int = 42,
    completion_tokens: int = 7,
    model: str = "fake-model-2024-01-01",
    refusal: str | None = None,
) -> Reply:
    """A successful chat completion whose message content is `content`."""
    return Reply(
        body={
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def error(status: int, *, kind: str, code: str | None = None, message: str = "") -> Reply:
    """An error reply in the provider's format (`message` may quote the request, as real
    providers' messages do)."""
    return Reply(status=status, body={"error": {"message": message, "type": kind, "code": code}})


class FakeOpenAI:
    """Use as a context manager; `base_url` ends in ``/v1`` like a real provider's."""

    def __init__(self, *, model: str, api_key: str | None) -> None:
        self.model = model
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.problems: list[str] = []
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def release(self) -> None:
        """Let every stalled reply go."""
        self._released.set()

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def answer(self, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        """Record the request, check its shape, and pick the next scripted reply."""
        with self._lock:
            self.headers.append(headers)
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            self.requests.append(body if isinstance(body, dict) else {})
            problems = self._check(path, headers, body)
            self.problems += problems
            if problems:
                return error(400, kind="fake_shape_mismatch", message="; ".join(problems))
            if not self._replies:
                self.problems.append("a request arrived with no reply scripted")
                return error(500, kind="fake_unscripted")
            return self._replies.pop(0)

    def wait_released(self) -> None:
        self._released.wait(timeout=30)

    def _check(self, path: str, headers: dict[str, str], body: Any) -> list[str]:
        problems: list[str] = []
        if path != "/v1/chat/completions":
            problems.append(f"path {path}")
        expected_auth = f"Bearer {self.api_key}" if self.api_key else None
        if headers.get("authorization") != expected_auth:
            problems.append("authorization header")
        if not isinstance(body, dict):
            return [*problems, "body is not a JSON object"]
        if body.get("model") != self.model:
            problems.append("model")
        if body.get("temperature") != 0:
            problems.append("temperature")
        messages = body.get("messages")
        roles = [m.get("role") for m in messages] if isinstance(messages, list) else None
        if roles != ["system", "user"] or not all(
            isinstance(m.get("content"), str) and m["content"] for m in messages or []
        ):
            problems.append("messages")
        response_format = body.get("response_format") or {}
        schema = response_format.get("json_schema") or {}
        if (
            response_format.get("type") != "json_schema"
            or not isinstance(schema.get("name"), str)
            or not isinstance(schema.get("schema"), dict)
            or schema.get("strict") is not True
        ):
            problems.append("response_format")
        return problems


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = fake.answer(self.path, headers, raw)
            if reply.stall:
                fake.wait_released()
            payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body)
            data = payload.encode() if isinstance(payload, str) else payload
            try:
                self.send_response(reply.status)
                for name, value in {"content-type": "application/json", **reply.headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
