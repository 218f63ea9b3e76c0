"""Local nats-server and PostgreSQL for development, tests and single-machine use."""

from interlock.embedded._process import EmbeddedStartError
from interlock.embedded.nats import EmbeddedNats
from interlock.embedded.postgres import EmbeddedPostgres
from interlock.embedded.stack import EmbeddedStack, StackRecord, resolve_urls, running_record

__all__ = [
    "EmbeddedNats",
    "EmbeddedPostgres",
    "EmbeddedStack",
    "EmbeddedStartError",
    "StackRecord",
    "resolve_urls",
    "running_record",
]
