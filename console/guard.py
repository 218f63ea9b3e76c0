"""Sessions, CSRF tokens and role checks (the login limit is `limiter`).

The session (a signed, HttpOnly, SameSite=Strict cookie) holds the operator's name and a CSRF
token; every POST must carry that token in its `csrf_token` field. A request without a session
gets 401 on `/api/` paths and a redirect to the login page elsewhere.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from interlock.config.settings import ConsoleRole
from interlock.console.operators import Operator, Operators

Endpoint = Callable[[Request], Awaitable[Response]]
CSRF_FIELD = "csrf_token"


def current_operator(request: Request) -> Operator | None:
    operators: Operators = request.app.state.console.operators
    name = request.session.get("operator")
    return operators.get(name) if isinstance(name, str) else None


def csrf_token(request: Request) -> str:
    """This session's CSRF token (made on first use)."""
    token = request.session.get(CSRF_FIELD)
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        request.session[CSRF_FIELD] = token
    return token


async def csrf_ok(request: Request) -> bool:
    """Whether the posted form carries this session's CSRF token."""
    expected = request.session.get(CSRF_FIELD)
    sent = (await request.form()).get(CSRF_FIELD)
    return (
        isinstance(expected, str)
        and isinstance(sent, str)
        and secrets.compare_digest(expected, sent)
    )


def requires(*roles: ConsoleRole) -> Callable[[Endpoint], Endpoint]:
    """Serve the endpoint only to a logged-in operator holding one of `roles` (any operator
    when none are named), and only a POST with a valid CSRF token."""

    def decorate(endpoint: Endpoint) -> Endpoint:
        @wraps(endpoint)
        async def guarded(request: Request) -> Response:
            operator = current_operator(request)
            if operator is None:
                return _unauthenticated(request)
            if roles and not operator.may(roles):
                return PlainTextResponse("your role may not do this", status_code=403)
            if request.method == "POST" and not await csrf_ok(request):
                return PlainTextResponse("missing or wrong CSRF token", status_code=403)
            request.state.operator = operator
            return await endpoint(request)

        return guarded

    return decorate


def _unauthenticated(request: Request) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": "unauthenticated"}, status_code=401)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={quote(target)}", status_code=303)


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def safe_next(target: Any) -> str:
    """A local path to return to after login (never another site)."""
    if isinstance(target, str) and target.startswith("/") and not target.startswith("//"):
        return target
    return "/"
