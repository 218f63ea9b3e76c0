"""What every page handler shares: the app's state, rendering a template with the operator,
the CSRF token and a one-time message, and finding one workflow."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from interlock.config.settings import Settings
from interlock.console.checks import PasswordChecks
from interlock.console.guard import csrf_token, current_operator
from interlock.console.limiter import LoginLimiter
from interlock.console.operators import Operators
from interlock.contracts.envelope import is_identifier
from interlock.contracts.registry import Registry
from interlock.ops import queries

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")


@dataclass
class Console:
    """The app's state: configuration, the installed definitions, where the stack is, and
    the read pool."""

    settings: Settings
    registry: Registry
    nats_url: str
    database_url: str
    operators: Operators
    limiter: LoginLimiter
    engine: AsyncEngine | None = None
    checks: PasswordChecks = field(default_factory=PasswordChecks)

    @property
    def reader(self) -> AsyncEngine:
        if self.engine is None:
            raise RuntimeError("the console's database pool is not open")
        return self.engine


def console_of(request: Request) -> Console:
    found: Console = request.app.state.console
    return found


def flash(request: Request, kind: str, text: str) -> None:
    """A message shown once, on the next page this session renders."""
    request.session["flash"] = {"kind": kind, "text": text}


def render(
    request: Request, template: str, context: dict[str, Any], status_code: int = 200
) -> Response:
    return templates.TemplateResponse(
        request,
        template,
        {
            "operator": current_operator(request),
            "csrf_token": csrf_token(request),
            "flash": request.session.pop("flash", None),
            "path": request.url.path,
            **context,
        },
        status_code=status_code,
    )


async def find_workflow(request: Request) -> dict[str, Any] | None:
    """The workflow the path names (tenant and id), or None (also for a tenant or id no
    workflow can have, never asked of the database)."""
    tenant, workflow_id = request.path_params["tenant"], request.path_params["workflow_id"]
    if not (is_identifier(tenant) and is_identifier(workflow_id)):
        return None
    return await queries.workflow_view(console_of(request).reader, workflow_id, tenant)


def ago(value: datetime | str | None) -> str:
    """`3m 20s` since `value` (a datetime or an ISO string)."""
    if value is None:
        return "-"
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    seconds = int((datetime.now(UTC) - moment).total_seconds())
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60}s"
    if seconds < 86400:
        return f"{seconds // 3600}h {seconds % 3600 // 60}m"
    return f"{seconds // 86400}d {seconds % 86400 // 3600}h"


templates.env.filters["ago"] = ago
