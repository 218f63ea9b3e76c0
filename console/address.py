"""Where the console is and how to log in: its address and the line `interlock up` prints
about it. Light on purpose: every process that starts or reports the console imports this,
and only the console itself imports its application."""

from __future__ import annotations

from interlock.config.settings import Settings
from interlock.console.devsecrets import DEV_OPERATOR, ConsoleSecrets


def console_url(settings: Settings) -> str:
    return f"http://{settings.console_host}:{settings.console_port}"


def banner(settings: Settings, embedded: bool) -> str:
    """What `interlock up` prints about the console: where it is and how to log in."""
    url = console_url(settings)
    if settings.console_operators:
        return f"console {url}"
    if embedded:
        secrets = ConsoleSecrets(settings.home, settings.secrets_dir)
        return (
            f"console {url}  (development operator {DEV_OPERATOR!r}, password "
            f"{secrets.dev_password()}, kept in {secrets.path})"
        )
    return f"console {url}  (no operators configured: set INTERLOCK_CONSOLE_OPERATORS)"
