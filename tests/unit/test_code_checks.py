"""The checks every change must pass, run by the README's test command so CI enforces them:
ruff's lint and its formatting, and mypy in strict mode (both configured in pyproject.toml).
The import contracts (`lint-imports`) run in test_architecture.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKS = {
    "ruff check": ["ruff", "check", "."],
    "ruff format --check": ["ruff", "format", "--check", "."],
    "mypy": ["mypy"],
}


@pytest.mark.parametrize("check", CHECKS)
def test_the_code_passes(check: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", *CHECKS[check]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=110,
    )
    assert run.returncode == 0, f"`{check}` found problems:\n{run.stdout}{run.stderr}"
