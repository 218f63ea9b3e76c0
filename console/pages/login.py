"""Logging in and out. Failed attempts slow down the next attempt of the same name from the
same client address (see `limiter`); a name too long to be anyone's is refused at once; the
password is checked off the event loop, a bounded number at a time (see `checks`)."""

from __future__ import annotations

import logging
import math

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from interlock.console.errors import Busy
from interlock.console.guard import client_address, csrf_ok, requires, safe_next
from interlock.console.limiter import MAX_NAME_LENGTH
from interlock.console.web import console_of, render

log = logging.getLogger("interlock.console")


async def login(request: Request) -> Response:
    console = console_of(request)
    target = safe_next(request.query_params.get("next"))
    if request.method == "GET":
        return render(request, "login.html", {"next": target, "error": None})
    form = await request.form()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    target = safe_next(form.get("next"))
    if not await csrf_ok(request):
        return _refused(request, target, "Your session expired; try again.", 403)
    address = client_address(request)
    if len(name) > MAX_NAME_LENGTH:
        _log_refusal(name, address, f"name over {MAX_NAME_LENGTH} characters")
        return _refused(request, target, f"No operator name is over {MAX_NAME_LENGTH} characters.")
    wait = console.limiter.retry_after(name, address)
    if wait > 0:
        seconds = math.ceil(wait)
        _log_refusal(name, address, f"too many failed attempts, {seconds} s to wait")
        error = f"Too many failed attempts; try again in {seconds} s."
        return _try_later(request, target, error, seconds)
    try:  # off the event loop; one check of a name from a client at a time (`checks`)
        operator = await console.checks.run(
            name, address, lambda: console.operators.authenticate(name, password)
        )
    except Busy as busy:
        reason = str(busy)
        _log_refusal(name, address, reason)
        return _try_later(
            request, target, f"{reason[0].upper()}{reason[1:]}; try again in a second."
        )
    # No await from the check's end to the record: the next check of the name reads it.
    if operator is None:
        console.limiter.failed(name, address)
        _log_refusal(name, address, "wrong name or password")
        return _refused(request, target, "Wrong name or password.", 401)
    console.limiter.succeeded(name, address)
    request.session.clear()  # a fresh session (and CSRF token) for the logged-in operator
    request.session["operator"] = operator.name
    return RedirectResponse(target, status_code=303)


def _log_refusal(name: str, address: str, reason: str) -> None:
    """One line per refused login (the name quoted and cut: it is the client's text)."""
    log.warning("console login refused for %r from %s: %s", name[:64], address[:64], reason)


def _refused(request: Request, target: str, error: str, status_code: int = 400) -> Response:
    return render(request, "login.html", {"next": target, "error": error}, status_code)


def _try_later(request: Request, target: str, error: str, seconds: int = 1) -> Response:
    """A 429 telling the client when the name may be tried again (`Retry-After`, seconds)."""
    response = _refused(request, target, error, 429)
    response.headers["Retry-After"] = str(seconds)
    return response


@requires()
async def logout(request: Request) -> Response:
    request.session.clear()
    return RedirectResponse("/login", status_code=303)
