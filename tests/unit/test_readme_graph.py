"""The README's invoice section shows what the code says: its Mermaid block is
`interlock graph invoice --format mermaid` verbatim, and its scenario list names exactly the
scenarios the invoice plugin ships."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from interlock_invoice import PLUGIN
from typer.testing import CliRunner

from interlock.cli import app

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- generated: interlock graph invoice --format mermaid"


def invoice_section() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("### The `invoice` workflow")
    return readme[start : readme.index("\n## ", start)]


def test_the_readme_graph_is_the_commands_output() -> None:
    section = invoice_section()
    fenced = section[section.index(MARKER) :].split("```mermaid\n", 1)[1]
    shown = fenced[: fenced.index("```")]

    result = CliRunner().invoke(app, ["graph", "invoice", "--format", "mermaid"])

    assert result.exit_code == 0, result.output
    assert shown == result.stdout, "regenerate it: interlock graph invoice --format mermaid"


def test_the_readme_lists_every_invoice_scenario() -> None:
    listed = section_list(invoice_section())

    assert listed == sorted(s.name for s in PLUGIN.scenarios)


def section_list(section: str) -> list[str]:
    scenarios = section[section.index("**The invoice demo scenarios**") :]
    return sorted(re.findall(r"`([a-z_]+)`", scenarios.split("\n\n", 1)[1]))
