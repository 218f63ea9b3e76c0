"""The console's Starlette application: routes, the signed session cookie, static files,
the bound on request bodies, and the read pool opened for the app's lifetime."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from interlock.config.settings import Settings
from interlock.console.bodylimit import BodyLimit
from interlock.console.limiter import LoginLimiter
from interlock.console.operators import Operators
from interlock.console.pages import login, operations, slos, tasks, workflows
from interlock.console.web import HERE, Console
from interlock.contracts.registry import Registry
from interlock.ops import queries

SESSION_COOKIE = "interlock_console"
SESSION_AGE = timedelta(hours=8)
WORKFLOW = "/workflows/{tenant}/{workflow_id}"


async def healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


def create_app(
    settings: Settings,
    nats_url: str,
    database_url: str,
    *,
    registry: Registry,
    operators: Operators,
    session_key: str,
    limiter: LoginLimiter | None = None,
) -> Starlette:
    """The console for `registry`'s workflow types (the installed plugins', built by the
    caller)."""
    limiter = LoginLimiter() if limiter is None else limiter  # an empty one is falsy
    console = Console(settings, registry, nats_url, database_url, operators, limiter)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        console.engine = queries.open_reader(database_url, pool_size=4)
        try:
            yield
        finally:
            await console.engine.dispose()

    routes = [
        Route("/login", login.login, methods=["GET", "POST"]),
        Route("/logout", login.logout, methods=["POST"]),
        Route("/", workflows.workflows_page),
        Route(WORKFLOW, workflows.workflow_page),
        Route(f"{WORKFLOW}/signal", tasks.signal, methods=["POST"]),
        Route("/tasks", tasks.inbox),
        Route("/operations", operations.operations_page),
        Route("/slos", slos.slos_page),
        Route(
            "/operations/dead-letters/{letter_id:int}/redrive",
            operations.redrive,
            methods=["POST"],
        ),
        Route("/api/workflows", workflows.workflows_api),
        Route(f"/api{WORKFLOW}", workflows.workflow_api),
        Route("/healthz", healthz),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    session = Middleware(
        SessionMiddleware,
        secret_key=session_key,
        session_cookie=SESSION_COOKIE,
        max_age=int(SESSION_AGE.total_seconds()),
        same_site="strict",
        https_only=False,  # served on loopback by default; put TLS in front elsewhere
    )
    app = Starlette(routes=routes, middleware=[Middleware(BodyLimit), session], lifespan=lifespan)
    app.state.console = console
    return app
