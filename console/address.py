"""Where the console is and how to log in: its address, a wait until it answers, and the
line `interlock up` prints about it. Light on purpose: every process that starts or reports
the console imports this, and only the console itself imports its application."""

from __future__ import annotations

import asyncio

from interlock.config.settings import Settings
from interlock.console.devsecrets import DEV_OPERATOR, ConsoleSecrets


def console_url(settings: Settings) -> str:
    return f"http://{settings.console_host}:{settings.console_port}"


async def wait_until_serving(settings: Settings, within: float = 30.0) -> None:
    """Return once the console accepts connections; TimeoutError after `within` seconds."""
    host = "127.0.0.1" if settings.console_host in ("0.0.0.0", "") else settings.console_host
    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            _, writer = await asyncio.open_connection(host, settings.console_port)
        except OSError:
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"the console is not serving after {within}s") from None
            await asyncio.sleep(0.1)
        else:
            writer.close()
            await writer.wait_closed()
            return


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
