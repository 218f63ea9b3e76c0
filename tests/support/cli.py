"""The environment a test gives an `interlock` CLI subprocess."""

from __future__ import annotations

import os
from pathlib import Path

KEPT = ("INTERLOCK_SECRETS_DIR",)
"""The session's credentials (see tests/conftest.py): the servers of the session need them."""


def cli_env(home: Path, **overrides: str) -> dict[str, str]:
    """This process's environment without its `INTERLOCK_*` settings (but the session's
    secrets), with `INTERLOCK_HOME` set to `home` and any `overrides` (e.g.
    `INTERLOCK_NATS_URL=...`) on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTERLOCK_") or k in KEPT}
    env["INTERLOCK_HOME"] = str(home)
    env.update(overrides)
    return env
