"""The console's own secrets, kept under `<home>/secrets/console.json` (directory 0700, file
0600): the key that signs session cookies, and the development operator's password for an
embedded stack. Each is generated on first need under an exclusive lock, so the console
process and `interlock up`, starting together, agree on them."""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from pathlib import Path

CONSOLE_FILE = "console.json"
DEV_OPERATOR = "dev"


class ConsoleSecrets:
    def __init__(self, home: Path) -> None:
        self.directory = home / "secrets"

    @property
    def path(self) -> Path:
        return self.directory / CONSOLE_FILE

    def session_key(self) -> str:
        """The key session cookies are signed with."""
        return self._value("session_key")

    def dev_password(self) -> str:
        """The development operator's password."""
        return self._value("dev_password")

    def _value(self, name: str) -> str:
        known = self._read()
        if name in known:
            return known[name]
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        with (self.directory / ".console.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            known = self._read()  # another process may have written it meanwhile
            if name not in known:
                known[name] = secrets.token_urlsafe(24)
                self._write(known)
        return known[name]

    def _read(self) -> dict[str, str]:
        try:
            loaded = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        return {str(k): str(v) for k, v in dict(loaded).items()}

    def _write(self, values: dict[str, str]) -> None:
        partial = self.path.with_suffix(".partial")
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            json.dump(values, out, indent=2, sort_keys=True)
        partial.replace(self.path)
