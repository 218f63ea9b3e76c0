"""The operator console: server-rendered pages over the same PostgreSQL the projector writes,
and forms that send operator signals through the same code as the CLI's approve, reject,
cancel and retry.

Pages: workflows (filters, counts per state, live refresh), one workflow (diagram with the
path taken, audit timeline, redacted data and model calls, trace waterfall), human tasks
(approvals and manual reviews with their forms), operations (stuck workflows, outbox lag,
dead letters, recent activity). Nothing is served without a login.
"""

from interlock.console.app import create_app
from interlock.console.server import banner, console_url, serve, wait_until_serving

__all__ = ["banner", "console_url", "create_app", "serve", "wait_until_serving"]
