"""The static checks every change must pass, as one step of the README's test command (so CI
enforces them) and runnable alone: `python -m interlock.tools.checks`.

ruff's lint and formatting, mypy in strict mode (both configured in pyproject.toml) and the
import contracts (`lint-imports`: an allow-list per room, no import cycle). Each check runs
to the end so one run reports every problem; the exit status is 1 when any failed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKS: dict[str, list[str]] = {
    "ruff check": ["ruff", "check", "."],
    "ruff format --check": ["ruff", "format", "--check", "."],
    "mypy --strict": ["mypy"],
    "lint-imports": ["-c", "import importlinter.cli as c; raise SystemExit(c.lint_imports())"],
}


def run(name: str) -> bool:
    """Run one check from the repository's root; print its name, verdict and time."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, *(["-m"] if CHECKS[name][0] != "-c" else []), *CHECKS[name]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    verdict = "ok" if done.returncode == 0 else "FAILED"
    print(f"{name}: {verdict} ({time.monotonic() - started:.1f}s)", flush=True)
    if done.returncode != 0:
        print(done.stdout + done.stderr, flush=True)
    return done.returncode == 0


def main() -> int:
    results = [run(name) for name in CHECKS]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
