"""The credentials of an installation, kept under `<home>/secrets` (or `INTERLOCK_SECRETS_DIR`).

- `nats.json`: `{"<identity>": "<password>"}`, one NATS user per component and client;
- `postgres.json`: `{"<role>": "<password>"}`, the embedded superuser and the component roles;
- `console.json`: the operator console's session key and development operator's password;
- `job-signing.key` / `job-signing.pub`: the Ed25519 key pair jobs are signed with (PEM);
- `gateway-claims.key` / `gateway-claims.pub`: the pair the gateway signs each message's
  sender with (`contracts.sender_claims`), the projector verifying.

The directory is mode 0700 and every file 0600. A missing entry is generated on first need
(`secrets.token_urlsafe(32)`) under an exclusive lock, so processes starting together agree;
a directory that cannot be written (a component given only its own credentials) answers with
what it holds and refuses to invent the rest. Nothing here logs or prints a secret: the root
passes each child process only its own (in its environment), and `client-url` prints one
because that is what it is for.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from interlock.config.errors import SecretsError

NATS_FILE = "nats.json"
POSTGRES_FILE = "postgres.json"
CONSOLE_FILE = "console.json"
GATEWAY_FILE = "gateway.json"
SIGNING_KEY_FILE = "job-signing.key"
PUBLIC_KEY_FILE = "job-signing.pub"
CLAIMS_KEY_FILE = "gateway-claims.key"
CLAIMS_PUBLIC_FILE = "gateway-claims.pub"


class Secrets:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def of_home(cls, home: Path, directory: Path | None = None) -> Secrets:
        """The secrets of an installation: `directory` if given, else `<home>/secrets`."""
        return cls(directory if directory is not None else home / "secrets")

    def nats_password(self, identity: str) -> str:
        """The NATS password of `identity`, generated on first need."""
        return self._password(NATS_FILE, identity)

    def postgres_password(self, role: str) -> str:
        """The PostgreSQL password of `role`, generated on first need."""
        return self._password(POSTGRES_FILE, role)

    def known_postgres_password(self, role: str) -> str | None:
        """The PostgreSQL password of `role` if one was ever generated, else None."""
        return self._read_json(POSTGRES_FILE).get(role)

    def nats_passwords(self, identities: list[str]) -> dict[str, str]:
        """Passwords of `identities` (generated where missing), in one locked pass."""
        return self._passwords(NATS_FILE, identities)

    def postgres_passwords(self, roles: list[str]) -> dict[str, str]:
        return self._passwords(POSTGRES_FILE, roles)

    def job_signing_key(self) -> str:
        """The PEM of the Ed25519 private key jobs are signed with (generated on first need)."""
        self._ensure_key_pair()
        return (self.directory / SIGNING_KEY_FILE).read_text()

    def job_public_key(self) -> str:
        """The PEM of the public key stages verify job signatures with."""
        if not (self.directory / PUBLIC_KEY_FILE).exists():
            self._ensure_key_pair()
        return (self.directory / PUBLIC_KEY_FILE).read_text()

    def gateway_claims_key(self) -> str:
        """The PEM of the Ed25519 private key the gateway signs sender claims with."""
        self._ensure_key_pair(CLAIMS_KEY_FILE, CLAIMS_PUBLIC_FILE)
        return (self.directory / CLAIMS_KEY_FILE).read_text()

    def gateway_claims_public_key(self) -> str:
        """The PEM of the public key the projector verifies sender claims with."""
        if not (self.directory / CLAIMS_PUBLIC_FILE).exists():
            self._ensure_key_pair(CLAIMS_KEY_FILE, CLAIMS_PUBLIC_FILE)
        return (self.directory / CLAIMS_PUBLIC_FILE).read_text()

    def webhook_secret(self, sender: str) -> str:
        """The Standard Webhooks secret (`whsec_<base64>`) of the gateway sender `sender`,
        generated on first need."""
        return self._passwords(GATEWAY_FILE, [sender], make=_webhook_secret)[sender]

    def console_secret(self, name: str) -> str:
        """One of the operator console's secrets (its session key, the development
        operator's password), generated on first need."""
        return self._password(CONSOLE_FILE, name)

    def _password(self, file: str, name: str) -> str:
        return self._passwords(file, [name])[name]

    def _passwords(
        self, file: str, names: list[str], make: Callable[[], str] | None = None
    ) -> dict[str, str]:
        known = self._read_json(file)
        if all(name in known for name in names):
            return {name: known[name] for name in names}
        with self._locked():
            known = self._read_json(file)  # another process may have added them meanwhile
            missing = [name for name in names if name not in known]
            generate = make or (lambda: secrets.token_urlsafe(32))
            known |= {name: generate() for name in missing}
            self._write(file, json.dumps(known, indent=2, sort_keys=True).encode())
        return {name: known[name] for name in names}

    def _ensure_key_pair(
        self, private_file: str = SIGNING_KEY_FILE, public_file: str = PUBLIC_KEY_FILE
    ) -> None:
        if (self.directory / private_file).exists():
            return
        with self._locked():
            if (self.directory / private_file).exists():
                return
            key = Ed25519PrivateKey.generate()
            public = key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            private = key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            self._write(public_file, public)
            self._write(private_file, private)  # last: its presence means both exist

    def _read_json(self, file: str) -> dict[str, str]:
        try:
            loaded = json.loads((self.directory / file).read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            unreadable = f"{self.directory / file} is unreadable: {type(exc).__name__}"
            raise SecretsError(unreadable) from None
        if not isinstance(loaded, dict):
            raise SecretsError(f"{self.directory / file} is not a JSON object")
        return {str(k): str(v) for k, v in loaded.items()}

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.directory.chmod(0o700)
            with (self.directory / ".lock").open("a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                yield
        except OSError as exc:  # a read-only mount, another user's directory
            raise SecretsError(
                f"cannot create credentials in {self.directory}: {exc.strerror}; give this "
                "process its own credentials, or run `interlock migrate` where they can be made"
            ) from None

    def _write(self, file: str, content: bytes) -> None:
        """Replace `file` atomically, readable by its owner only from the first byte."""
        partial = self.directory / f".{file}.partial"
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        partial.replace(self.directory / file)


def _webhook_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
