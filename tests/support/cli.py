"""The environment a test gives an `interlock` CLI subprocess."""

from __future__ import annotations

import os
from pathlib import Path


def cli_env(home: Path, **overrides: str) -> dict[str, str]:
    """This process's environment without its `INTERLOCK_*` settings, with `INTERLOCK_HOME`
    set to `home` and any `overrides` (e.g. `INTERLOCK_NATS_URL=...`) on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTERLOCK_")}
    env["INTERLOCK_HOME"] = str(home)
    env.update(overrides)
    return env
