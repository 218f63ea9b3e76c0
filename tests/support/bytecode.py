"""Compiled bytecode for the processes the tests start.

Every component of an embedded stack and every command a test runs is a new Python process
that imports most of the project. Where the environment says not to write bytecode
(`PYTHONDONTWRITEBYTECODE`, set on CI machines), no process ever writes it, and each one
compiled the project's sources again: 0.7 s of CPU of the 3.1 s a command takes to start on
this 2-core machine, for each of the hundreds of processes a full run starts. Compiled once
before the tests, it is read by all of them (the setting stops writing, not reading).
"""

from __future__ import annotations

import compileall
import re
from pathlib import Path

_SKIPPED = re.compile(r"[/\\](\.git|\.ci-venv|\.venv|node_modules|tests)([/\\]|$)")
"""Not the project's importable code: version control, virtualenvs, front-end packages and
the tests (pytest rewrites and compiles those in its own process)."""


def compile_project(root: Path) -> bool:
    """Write the bytecode of every module under `root` that lacks a current one; True if
    every module compiled."""
    return bool(compileall.compile_dir(root, rx=_SKIPPED, quiet=1, workers=0))
