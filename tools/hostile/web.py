"""The hostile round's web attacks, as someone holding a console login (a viewer) or headers a
gateway sender once sent: logins with names or bodies past their bounds, wrong passwords for
the console's own operator, filter values and workflow paths no database can take (a cursor
of garbage, a NUL, an id of 300 characters), and a signed gateway read replayed against
another workflow or query. Each one's fate is the answer: a refusal (4xx) by its reason; an
answer that let it through is `ACCEPTED`, a server error (5xx) is not accounted for."""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
from datetime import UTC, datetime
from urllib.parse import quote

import httpx

from interlock.console.bodylimit import MAX_BODY
from interlock.tools.hostile.messages import ACCEPTED, UNACCOUNTED, Hostile, Target

CONSOLE = "console"
"""The `identity` of a request to the console (its `subject` is the path)."""
GATEWAY_READ = "gateway_read"
"""The `identity` of a gateway read replayed under another's signed headers."""
VIEWER = "hostile_viewer"
"""The console login the round's attacker holds (a viewer: it may read, not act)."""
OPERATOR = "hostile_operator"
"""The console's own operator, whose password the attacker guesses."""
_HUGE_NAMES = (201, 4_096, 100_000)


def console_login(rng: random.Random, n: int, target: Target) -> Hostile:
    """A login past the bounds (a name too long, a body too large) or a wrong password for
    the console's operator: never a session."""
    name = rng.choice([OPERATOR, "x" * rng.choice(_HUGE_NAMES)])
    password = f"guess-{rng.getrandbits(32):08x}"
    body = f"name={quote(name)}&password={password}&next=/".encode()
    if rng.random() < 0.2:
        body += b"&pad=" + b"p" * (MAX_BODY + 1)
    headers = {"content-type": "application/x-www-form-urlencoded"}
    return Hostile(n, "console_login", CONSOLE, "/login", body, headers)


def console_bad_value(rng: random.Random, n: int, target: Target) -> Hostile:
    """A logged-in viewer's read with a value no database can take."""
    path = rng.choice(
        [
            "/?before=garbage~x",
            "/?before=0001-01-01T00:00:00%2B14:00~x",
            f"/?tenant={quote('a' + chr(0) + 'b')}",
            f"/workflows/{target.tenant_id}/{quote('wf' + chr(0))}",
            f"/workflows/{target.tenant_id}/{'w' * 300}",
            f"/api/workflows/{target.tenant_id}/{quote(chr(0))}",
        ]
    )
    return Hostile(n, "console_bad_value", CONSOLE, path, b"", {})


def read_replay(rng: random.Random, n: int, target: Target) -> Hostile:
    """Headers of a signed read of one workflow, replayed to read another or with another
    query (the signature covers the method, the path and the query)."""
    signed_for = f"/v1/workflows/support/{target.workflow_id}"
    replayed = rng.choice(
        [f"/v1/workflows/support/{target.workflow_id}-other", f"{signed_for}?event_id=x-{n}"]
    )
    headers = {"x-signed-for": signed_for, "webhook-id": f"read_{n}"}
    return Hostile(n, "read_replay", GATEWAY_READ, replayed, b"", headers)


WEB_FORGERS = {
    "console_login": console_login,
    "console_bad_value": console_bad_value,
    "read_replay": read_replay,
}


def fate(status: int, kind: str) -> str:
    """A web attack's fate from the answer's status."""
    if status >= 500:
        return UNACCOUNTED
    if status < 400:
        return ACCEPTED
    return f"{kind}_{status}"


class Web:
    """The attacker's web clients: anonymous to the console (holding a login page's CSRF
    token, as a browser would), logged in to it as the viewer, and to the gateway."""

    def __init__(self, console_url: str, viewer_password: str, gateway: httpx.AsyncClient) -> None:
        self._anonymous = httpx.AsyncClient(base_url=console_url, timeout=10.0)
        self._viewer = httpx.AsyncClient(base_url=console_url, timeout=10.0)
        self._viewer_password = viewer_password
        self._gateway = gateway
        self._token = ""

    async def prepare(self) -> None:
        self._token = await _csrf(self._anonymous)
        form = {"name": VIEWER, "password": self._viewer_password, "next": "/"}
        logged_in = await self._viewer.post(
            "/login", data={**form, "csrf_token": await _csrf(self._viewer)}
        )
        if logged_in.status_code != 303:
            raise RuntimeError(f"the round's viewer could not log in ({logged_in.status_code})")

    async def close(self) -> None:
        await self._anonymous.aclose()
        await self._viewer.aclose()

    async def console(self, h: Hostile) -> str:
        """Send `h` to the console: a login anonymously, a read as the logged-in viewer."""
        if h.kind == "console_login":
            body = f"csrf_token={self._token}&".encode() + h.body
            try:
                response = await self._anonymous.post(h.subject, content=body, headers=h.headers)
            except httpx.TransportError:
                if len(body) <= MAX_BODY:
                    raise
                # Refused unread (413) and the connection closed while the body was still
                # going out: the client may see the close before the answer.
                return f"{h.kind}_closed"
            return fate(response.status_code, h.kind)
        return fate((await self._viewer.get(h.subject)).status_code, h.kind)

    async def read(self, h: Hostile, sender: str, secret: str) -> str:
        """Sign a read of `x-signed-for` as `sender`, then send those headers to `h`'s path."""
        at, webhook_id = datetime.now(UTC), h.headers["webhook-id"]
        content = f"GET {h.headers['x-signed-for']}".encode()
        headers = {
            "interlock-sender": sender,
            "webhook-id": webhook_id,
            "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": sign(secret, webhook_id, at, content),
        }
        return fate((await self._gateway.get(h.subject, headers=headers)).status_code, h.kind)


def sign(secret: str, webhook_id: str, at: datetime, body: bytes) -> str:
    """A Standard Webhooks `v1` signature: HMAC-SHA256 of `id.timestamp.body` under the
    base64 key after `whsec_`."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{webhook_id}.{int(at.timestamp())}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


async def _csrf(client: httpx.AsyncClient) -> str:
    page = (await client.get("/login")).text
    marker = 'name="csrf_token" value="'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]
