"""Who may use the console and what they may do: operators from the server's configuration,
their passwords checked against an argon2 hash, and the actor role each signal carries.

With the embedded stack and no operators configured there is one development operator whose
password is generated once and kept under `<home>/secrets` (see `devsecrets`); a production
configuration names its operators, and without any nobody can log in.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from pydantic import SecretStr

from interlock.config.settings import ConsoleOperator, ConsoleRole, Settings
from interlock.console.devsecrets import DEV_OPERATOR, ConsoleSecrets
from interlock.contracts.registry import Registry

log = logging.getLogger("interlock.console")
_hasher = PasswordHasher()

CAN_APPROVE: frozenset[ConsoleRole] = frozenset({"approver", "operator"})
CAN_OPERATE: frozenset[ConsoleRole] = frozenset({"operator"})


@cache
def _decoy() -> str:
    """A hash of nothing anyone types: an unknown name costs as much time as a wrong
    password. Made on first use, not on import: every component imports this module, and
    an argon2 hash costs each of them 0.16 s of CPU at start."""
    return _hasher.hash("interlock-console-decoy")


def hash_password(password: str) -> str:
    """The argon2id hash to put in `INTERLOCK_CONSOLE_OPERATORS`."""
    return _hasher.hash(password)


@dataclass(frozen=True)
class Operator:
    """A logged-in operator, as the session remembers them."""

    name: str
    roles: frozenset[ConsoleRole]
    actor_roles: tuple[str, ...]

    def may(self, allowed: Iterable[ConsoleRole]) -> bool:
        return bool(self.roles & frozenset(allowed))


class Operators:
    def __init__(self, configured: Mapping[str, ConsoleOperator]) -> None:
        self._configured = dict(configured)

    def __bool__(self) -> bool:
        return bool(self._configured)

    def authenticate(self, name: str, password: str) -> Operator | None:
        """The operator if `password` is theirs; None otherwise (in constant-ish time)."""
        entry = self._configured.get(name)
        try:
            _hasher.verify(entry.password_hash.get_secret_value() if entry else _decoy(), password)
        except (VerificationError, InvalidHashError):
            return None
        return self.get(name) if entry else None

    def get(self, name: str) -> Operator | None:
        entry = self._configured.get(name)
        if entry is None:
            return None
        return Operator(name, entry.roles, entry.actor_roles)


def configured_operators(
    settings: Settings, secrets: ConsoleSecrets, embedded: bool, registry: Registry
) -> Operators:
    """The operators of this console: the configured ones, else (embedded stack only) the
    development operator, who signs for every role of `registry`'s workflow types; a warning
    when nobody could log in."""
    if settings.console_operators is not None:
        found = settings.console_operators
    elif embedded:
        password = secrets.dev_password()
        found = {
            DEV_OPERATOR: ConsoleOperator(
                password_hash=SecretStr(_hasher.hash(password)),
                roles=frozenset({"viewer", "approver", "operator"}),
                actor_roles=signing_roles(settings, registry),
            )
        }
    else:
        found = {}
    if not found:
        log.warning(
            "no console operators are configured (INTERLOCK_CONSOLE_OPERATORS): nobody can log in"
        )
    return Operators(found)


def parameters(
    settings: Settings, registry: Registry, workflow_type: str, version: int
) -> dict[str, Any]:
    """A definition's parameters with this deployment's overrides, as the projector sees them."""
    definition = registry.get(workflow_type, version)
    return {**definition.parameters, **settings.parameters.get(workflow_type, {})}


def approver_roles(params: Mapping[str, Any]) -> list[str]:
    """Roles that may approve: those with a limit (largest first), then the listed ones."""
    limits: Mapping[str, Any] = params.get("approver_limits", {})
    ranked = sorted(limits, key=lambda role: -float(limits[role]))
    return list(dict.fromkeys([*ranked, *params.get("approver_roles", ())]))


def signing_roles(settings: Settings, registry: Registry) -> tuple[str, ...]:
    """Every approver and operator role of `registry`'s types (the development operator's)."""
    roles: list[str] = []
    for workflow_type, version in sorted((d.workflow_type, d.version) for d in registry):
        params = parameters(settings, registry, workflow_type, version)
        roles += [*approver_roles(params), *params.get("operator_roles", ())]
    return tuple(dict.fromkeys(roles))


def actor_role(operator: Operator, params: Mapping[str, Any], *, approving: bool) -> str:
    """The actor role `operator` signs with: the first of theirs the workflow's configuration
    lets approve (`approving`) or operate; else their first, and the projector refuses it."""
    wanted = approver_roles(params) if approving else list(params.get("operator_roles", ()))
    if not approving:
        wanted += approver_roles(params)  # a reviewer's rejection accepts approvers too
    for role in operator.actor_roles:
        if role in wanted:
            return role
    return operator.actor_roles[0] if operator.actor_roles else "console"


def approval_limit(params: Mapping[str, Any], role: str) -> str | None:
    """The amount `role` may approve up to, if the workflow's configuration limits it."""
    limit = params.get("approver_limits", {}).get(role)
    return None if limit is None else str(limit)
