"""The layering the architecture promises, checked on every test run: contracts and the
transition engine import no I/O library, nothing imports the composition root, the projector
reaches services only through their shared consumer runtime, and stage services never touch
the workflow store or the database drivers (contracts in pyproject.toml)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IO_LIBRARIES = {"sqlalchemy", "asyncpg", "nats", "faststream", "opentelemetry"}


def test_the_import_contracts_are_kept() -> None:
    run = subprocess.run(
        [sys.executable, "-c", "import importlinter.cli as c; raise SystemExit(c.lint_imports())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def _imported_roots(package: Path) -> set[str]:
    roots: set[str] = set()
    for module in package.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Import):
                roots |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                roots.add(node.module.split(".")[0])
    return roots


def test_contracts_and_the_engine_import_no_io_library() -> None:
    """The same promise, read straight from the source (independent of the linter)."""
    for package in (ROOT / "contracts", ROOT / "projector" / "engine"):
        assert not (_imported_roots(package) & IO_LIBRARIES), package
