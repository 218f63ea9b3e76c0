"""Local nats-server and PostgreSQL for development, tests and single-machine use."""

from interlock.embedded._process import EmbeddedStartError
from interlock.embedded._process import _parent_death_signal as parent_death_signal
from interlock.embedded.nats import EmbeddedNats, broker_sync
from interlock.embedded.postgres import EmbeddedPostgres
from interlock.embedded.stack import (
    EmbeddedStack,
    StackRecord,
    embedded_servers,
    resolve_urls,
    running_record,
)

__all__ = [
    "EmbeddedNats",
    "EmbeddedPostgres",
    "EmbeddedStack",
    "EmbeddedStartError",
    "StackRecord",
    "broker_sync",
    "embedded_servers",
    "parent_death_signal",
    "resolve_urls",
    "running_record",
]
