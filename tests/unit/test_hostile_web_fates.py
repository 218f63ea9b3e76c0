"""The web attacks' fates when the console refuses a login's body unread: the connection may
close while the body is still going out, and the attacker's client then sees the close, not
the 413. That is the console refusing it (`console_login_closed`), not the round failing; a
request within the bound that loses its connection is still an error of the round."""

from __future__ import annotations

import httpx
import pytest

from interlock.console.bodylimit import MAX_BODY
from interlock.tools.hostile.messages import Hostile
from interlock.tools.hostile.web import CONSOLE, Web


def _web(handler: httpx.MockTransport) -> Web:
    web = Web("http://console", "pw", httpx.AsyncClient())
    web._anonymous = httpx.AsyncClient(base_url="http://console", transport=handler)
    return web


def _login(size: int) -> Hostile:
    body = b"name=x&password=y&next=/&pad=" + b"p" * size
    headers = {"content-type": "application/x-www-form-urlencoded"}
    return Hostile(1, "console_login", CONSOLE, "/login", body, headers)


def _closing(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadError("connection closed", request=request)


async def test_a_body_past_the_bound_whose_connection_closes_is_refused() -> None:
    web = _web(httpx.MockTransport(_closing))
    assert await web.console(_login(MAX_BODY + 1)) == "console_login_closed"


async def test_a_body_within_the_bound_whose_connection_closes_is_an_error() -> None:
    web = _web(httpx.MockTransport(_closing))
    with pytest.raises(httpx.ReadError):
        await web.console(_login(10))


async def test_an_answer_is_the_fate_whatever_the_body() -> None:
    web = _web(httpx.MockTransport(lambda _: httpx.Response(413)))
    assert await web.console(_login(MAX_BODY + 1)) == "console_login_413"
