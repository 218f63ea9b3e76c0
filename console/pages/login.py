"""Logging in and out. Failed attempts are limited per name and per client address."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from interlock.console.guard import csrf_ok, login_keys, requires, safe_next
from interlock.console.web import console_of, render


async def login(request: Request) -> Response:
    console = console_of(request)
    target = safe_next(request.query_params.get("next"))
    if request.method == "GET":
        return render(request, "login.html", {"next": target, "error": None})
    form = await request.form()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    target = safe_next(form.get("next"))
    keys = login_keys(request, name)
    if not await csrf_ok(request):
        return render(
            request,
            "login.html",
            {"next": target, "error": "Your session expired; try again."},
            403,
        )
    if console.limiter.blocked(keys):
        error = "Too many failed attempts; wait a few minutes."
        return render(request, "login.html", {"next": target, "error": error}, 429)
    operator = console.operators.authenticate(name, password)
    if operator is None:
        console.limiter.failed(keys)
        return render(
            request, "login.html", {"next": target, "error": "Wrong name or password."}, 401
        )
    console.limiter.succeeded(keys[0])
    request.session.clear()  # a fresh session (and CSRF token) for the logged-in operator
    request.session["operator"] = operator.name
    return RedirectResponse(target, status_code=303)


@requires()
async def logout(request: Request) -> Response:
    request.session.clear()
    return RedirectResponse("/login", status_code=303)
