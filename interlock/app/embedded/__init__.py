"""Local nats-server and PostgreSQL for development, tests and single-machine use."""

from interlock.app.embedded._process import _parent_death_signal as parent_death_signal
from interlock.app.embedded.nats import EmbeddedNats, broker_sync
from interlock.app.embedded.postgres import EmbeddedPostgres
from interlock.app.embedded.stack import (
    EmbeddedStack,
    embedded_servers,
    resolve_urls,
    running_record,
)
from interlock.app.errors import EmbeddedStartError
from interlock.config.stackfile import StackRecord

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
