"""At most `MAX_BODY` bytes of any request body are read: the console's forms are a few
fields, and a body nobody's form makes (a login with a gigabyte name) is answered 413 —
before a byte of it is read when its `Content-Length` says so, else as soon as it streams past
the bound — so no client, logged in or not, makes the console hold it."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY = 256 * 1024
"""Far more than any console form (a comment, a reason) holds."""
_TOO_LARGE = f"request body over {MAX_BODY} bytes"


class BodyLimit:
    """ASGI middleware refusing request bodies over `max_bytes` with 413."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and not (declared.isdigit() and int(declared) <= self.max_bytes):
            await PlainTextResponse(_TOO_LARGE, status_code=413)(scope, receive, send)
            return
        read = 0

        async def bounded() -> Message:
            nonlocal read
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > self.max_bytes:
                    # raised inside the handler reading the body: answered by Starlette's
                    # exception middleware as a 413, like any HTTPException
                    raise HTTPException(413, _TOO_LARGE)
            return message

        await self.app(scope, bounded, send)
