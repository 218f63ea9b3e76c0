"""No workflow type is special-cased in the runtime: its rooms never name `support`, `invoice`
or the `request` type; those names belong to the plugins (workflows/, or a distribution of
their own), which the runtime finds by entry point."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
RUNTIME_ROOMS = ("contracts", "projector", "relay", "services", "messaging", "otel", "console")
NAMED = re.compile(
    r"""["'](support|invoice)["'.]"""
    r"""|workflow_type\s*==?\s*["']request["']"""
    r"""|\w\(\s*["']request["']\s*,"""
    r"""|["']request\.(validate|normalize|enrich|classify_request|route|bind_approval|execute_effect)"""
)


def runtime_files() -> list[Path]:
    """The runtime's own modules: its rooms, and the root package minus the rooms' and the
    plugins' symlinks."""
    found = [p for room in RUNTIME_ROOMS for p in (ROOT / room).rglob("*.py")]
    root = ROOT / "interlock"
    for entry in root.iterdir():
        if entry.is_symlink():
            continue
        found += [entry] if entry.suffix == ".py" else list(entry.rglob("*.py"))
    return sorted(found)


def named_in(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f"{n}: {line.strip()}" for n, line in enumerate(lines, 1) if NAMED.search(line)]


def test_the_runtime_names_no_workflow_type() -> None:
    found = {
        str(path.relative_to(ROOT)): hits for path in runtime_files() if (hits := named_in(path))
    }

    assert found == {}


def test_the_search_finds_the_names_where_they_belong() -> None:
    assert named_in(ROOT / "workflows" / "support" / "definition.py")
    assert named_in(ROOT / "workflows" / "request" / "definition.py")
    assert named_in(ROOT / "workflows" / "support" / "rules.py")
    assert named_in(ROOT / "workflows" / "request" / "prompts.py")
    assert len(runtime_files()) > 100
