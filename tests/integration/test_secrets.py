"""The installation's credentials on disk: private from the first byte, generated once and
then stable, the same for processes starting together, never invented where they cannot be
kept."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key

from interlock.config.errors import SecretsError
from interlock.config.secrets import Secrets


def test_credentials_are_private_and_stable(tmp_path: Path) -> None:
    secrets = Secrets(tmp_path / "secrets")

    first = secrets.nats_password("relay")

    assert secrets.directory.stat().st_mode & 0o777 == 0o700
    for file in secrets.directory.iterdir():
        if file.is_file() and file.name != ".lock":
            assert file.stat().st_mode & 0o777 == 0o600, file
    assert Secrets(tmp_path / "secrets").nats_password("relay") == first
    assert secrets.nats_password("timer") != first
    assert len(first) >= 40


def test_processes_starting_together_agree_on_every_password(tmp_path: Path) -> None:
    names = [f"identity-{n}" for n in range(20)]

    def one_process(_: int) -> dict[str, str]:
        return Secrets(tmp_path / "secrets").nats_passwords(names)

    with ThreadPoolExecutor(8) as pool:
        seen = list(pool.map(one_process, range(8)))

    assert all(found == seen[0] for found in seen)


def test_the_job_signing_key_pair_belongs_together(tmp_path: Path) -> None:
    secrets = Secrets(tmp_path / "secrets")

    private = load_pem_private_key(secrets.job_signing_key().encode(), password=None)
    public = load_pem_public_key(secrets.job_public_key().encode())

    assert isinstance(private, Ed25519PrivateKey)
    assert isinstance(public, Ed25519PublicKey)
    public.verify(private.sign(b"job"), b"job")
    assert (secrets.directory / "job-signing.key").stat().st_mode & 0o777 == 0o600


def test_a_directory_it_cannot_write_answers_what_it_holds_and_invents_nothing(
    tmp_path: Path,
) -> None:
    secrets = Secrets(tmp_path / "secrets")
    known = secrets.nats_password("projector")
    # What a read-only mount amounts to, even for root: the lock cannot be taken.
    (secrets.directory / ".lock").unlink()
    (secrets.directory / ".lock").mkdir()

    assert Secrets(secrets.directory).nats_password("projector") == known
    with pytest.raises(SecretsError, match="cannot create credentials"):
        Secrets(secrets.directory).nats_password("relay")
