"""Describing what is installed: a workflow type's transition diagram (`graph`)."""

from __future__ import annotations

from typing import Annotated

import typer

from interlock.app import terminal
from interlock.app.options import JsonOpt
from interlock.cli.history import installed_registry
from interlock.config.plugins import installed
from interlock.contracts.diagram import FORMATS, Format, diagram, render
from interlock.contracts.graphjson import graph_json


def graph(
    workflow_type: Annotated[str, typer.Argument(metavar="TYPE", help="A workflow type.")],
    version: Annotated[
        int | None, typer.Option(help="Definition version (default: the latest).")
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help=f"One of: {', '.join(FORMATS)}.")
    ] = "mermaid",
    json_output: JsonOpt = False,
) -> None:
    """A workflow type's states and transition rows (guards as edge labels; effect, waiting
    and terminal states marked), as Mermaid or Graphviz DOT text; with --json, each state's
    kind and what each effect's status may be there, and each terminal's promise."""
    if fmt not in FORMATS:
        _usage(f"unknown format {fmt!r}; one of: {', '.join(FORMATS)}")
    registry = installed_registry()
    known = registry.workflow_types()
    if workflow_type not in known:
        installed().require(workflow_type)  # a refused plugin's type: its problem, exit 2
        _usage(f"unknown workflow type {workflow_type!r}; one of: {', '.join(known)}")
    versions = registry.versions(workflow_type)
    chosen = version if version is not None else versions[-1]
    if chosen not in versions:
        listed = ", ".join(map(str, versions))
        _usage(f"{workflow_type} has no version {chosen}; one of: {listed}")
    definition = registry.get(workflow_type, chosen)
    if json_output:
        terminal.print_json(graph_json(definition))
        return
    format_: Format = "dot" if fmt == "dot" else "mermaid"
    print(render(diagram(definition), format_), end="")


def _usage(message: str) -> None:
    terminal.errors.print(message, markup=False, highlight=False)
    raise typer.Exit(2)
