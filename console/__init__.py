"""The operator console: server-rendered pages over the same PostgreSQL the projector writes,
and forms that send operator signals through the same code as the CLI's approve, reject,
cancel and retry.

Pages: workflows (filters, counts per state, live refresh), one workflow (diagram with the
path taken, audit timeline, redacted data and model calls, trace waterfall), human tasks
(approvals and manual reviews with their forms), operations (stuck workflows, outbox lag,
dead letters, recent activity). Nothing is served without a login.

The names below are loaded on first use: the application and its pages import SQLAlchemy,
Starlette and the templates (about 0.9 s), which a process that only prints the console's
address (every component, `interlock up`) should not pay.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from interlock.console.address import banner, console_url
    from interlock.console.app import create_app
    from interlock.console.server import serve

__all__ = ["banner", "console_url", "create_app", "serve"]
_WHERE = {
    "create_app": "interlock.console.app",
    "banner": "interlock.console.address",
    "console_url": "interlock.console.address",
    "serve": "interlock.console.server",
}


if not TYPE_CHECKING:  # type checkers see the imports above

    def __getattr__(name: str) -> Any:
        where = _WHERE.get(name)
        if where is None:
            raise AttributeError(f"module 'interlock.console' has no attribute {name!r}")
        value = getattr(import_module(where), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
