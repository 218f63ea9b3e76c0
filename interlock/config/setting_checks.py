"""Checks of the `INTERLOCK_*` settings that a type alone cannot express, so that a bad value
is refused when the settings are read (one message naming the variable) rather than deep in
a component later."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key
from pydantic import AfterValidator, SecretStr

from interlock.config.plugins import installed
from interlock.contracts.progress import RESERVED_PARAMETERS

LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")
MODELS = ("rules", "local", "recorded:<path>", "openai")


def _log_level(level: str) -> str:
    if level.upper() not in LEVELS and not level.isdigit():
        raise ValueError(f"not a log level; use one of {', '.join(LEVELS)} (any case)")
    return level


def _model(spec: str) -> str:
    name, _, argument = spec.partition(":")
    accepted = (("rules", False), ("local", False), ("openai", False), ("recorded", True))
    if (name, bool(argument)) not in accepted:
        raise ValueError(f"unknown model client; use one of {', '.join(MODELS)}")
    return spec


def _known_type(workflow_type: str) -> None:
    # Only a setting that names a type loads the installed plugins to check it.
    known = installed().registry.workflow_types()
    if workflow_type not in known:
        raise ValueError(f"unknown workflow type {workflow_type!r}; known: {', '.join(known)}")


def _models(specs: dict[str, str]) -> dict[str, str]:
    for workflow_type, spec in specs.items():
        _known_type(workflow_type)
        _model(spec)
    return specs


def _directory(path: Path) -> Path:
    """A directory that exists or can be made: its nearest existing ancestor is a writable
    directory."""
    existing = path.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{path} cannot be used as a directory ({existing} is in the way)")
    return path


def _private_key(key: SecretStr | None) -> SecretStr | None:
    if key is not None:
        try:
            load_pem_private_key(key.get_secret_value().encode(), password=None)
        except (ValueError, TypeError):
            raise ValueError("not a PEM private key (an unencrypted Ed25519 key)") from None
    return key


def _public_key(key: str | None) -> str | None:
    if key is not None:
        try:
            load_pem_public_key(key.encode())
        except ValueError:
            raise ValueError("not a PEM public key") from None
    return key


def _not_empty(value: Any) -> Any:
    text = value.get_secret_value() if isinstance(value, SecretStr) else value
    if text is not None and not str(text).strip():
        raise ValueError("empty; unset the variable instead")
    return value


def _http_url(url: str | None) -> str | None:
    if url is not None and (urlsplit(url).scheme not in ("http", "https") or "//" not in url):
        raise ValueError("not an http(s):// URL")
    return url


def _parameters(overrides: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Only parameters a definition of that type has (or every type accepts, the stuck
    bounds): a misspelt key would otherwise be ignored and the default silently used."""
    for workflow_type, values in overrides.items():
        _known_type(workflow_type)
        registry = installed().registry
        keys = set(RESERVED_PARAMETERS) | {
            key
            for version in registry.versions(workflow_type)
            for key in registry.get(workflow_type, version).parameters
        }
        if unknown := sorted(set(values) - keys):
            raise ValueError(
                f"unknown {workflow_type} parameter(s) {', '.join(unknown)}; "
                f"valid: {', '.join(sorted(keys))}"
            )
    return overrides


def openai_missing(
    model: str, models: dict[str, str], base_url: str | None, name: str | None
) -> str:
    """The settings an `openai` model client needs and lacks, as a message ('' if none)."""
    if "openai" not in (model, *models.values()):
        return ""
    missing = [
        variable
        for variable, value in (
            ("INTERLOCK_OPENAI_BASE_URL", base_url),
            ("INTERLOCK_OPENAI_MODEL", name),
        )
        if not value
    ]
    return f"the openai model client needs {' and '.join(missing)}" if missing else ""


LogLevel = Annotated[str, AfterValidator(_log_level)]
ModelSpec = Annotated[str, AfterValidator(_model)]
ModelSpecs = Annotated[dict[str, str], AfterValidator(_models)]
Directory = Annotated[Path, AfterValidator(_directory)]
PrivateKey = Annotated[SecretStr | None, AfterValidator(_private_key)]
PublicKey = Annotated[str | None, AfterValidator(_public_key)]
NotEmpty = AfterValidator(_not_empty)
HttpUrl = Annotated[str | None, AfterValidator(_http_url)]
Parameters = Annotated[dict[str, dict[str, Any]], AfterValidator(_parameters)]
