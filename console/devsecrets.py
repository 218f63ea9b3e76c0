"""The console's own secrets, kept with the installation's (`<home>/secrets/console.json`,
see `interlock.config.secrets`): the key that signs session cookies, and the development operator's
password for an embedded stack. Each is generated on first need, under the secrets' lock, so
the console process and `interlock up`, starting together, agree on them."""

from __future__ import annotations

from pathlib import Path

from interlock.config.secrets import CONSOLE_FILE, Secrets

DEV_OPERATOR = "dev"


class ConsoleSecrets:
    def __init__(self, home: Path, directory: Path | None = None) -> None:
        self._secrets = Secrets.of_home(home, directory)

    @property
    def directory(self) -> Path:
        return self._secrets.directory

    @property
    def path(self) -> Path:
        return self.directory / CONSOLE_FILE

    def session_key(self) -> str:
        """The key session cookies are signed with."""
        return self._secrets.console_secret("session_key")

    def dev_password(self) -> str:
        """The development operator's password."""
        return self._secrets.console_secret("dev_password")
