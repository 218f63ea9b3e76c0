"""The CLI is assembled from a table of commands, and a command run alone loads only its own
module: each command built alone is the command the whole CLI has, with the same options."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import typer

from interlock import cli


def _commands(app: typer.Typer) -> dict[str, Any]:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    return dict(group.commands)


def test_the_whole_cli_has_every_command_of_the_table_in_its_order() -> None:
    assert list(_commands(cli.build())) == [*cli.COMMANDS, *cli.GROUPS]


@pytest.mark.parametrize("name", [*cli.COMMANDS, *cli.GROUPS])
def test_a_command_built_alone_is_the_one_the_whole_cli_has(name: str) -> None:
    alone = _commands(cli.build([name]))
    whole = _commands(cli.build())[name]

    assert list(alone) == [name]
    assert [p.name for p in alone[name].params] == [p.name for p in whole.params]
    assert alone[name].help == whole.help


def test_running_show_does_not_import_the_other_commands() -> None:
    probe = (
        "import sys; from interlock import cli; cli.build(['show']); "
        "print(sorted(m for m in sys.modules if m.startswith(('interlock.cli.', "
        "'interlock.tools.bench', 'interlock.tools.chaos', 'interlock.tools.demo'))))"
    )
    assert _printed_by(probe) == "['interlock.cli.inspect']"


def test_a_component_process_imports_nothing_that_only_brings_a_stack_up() -> None:
    """What every process of the stack starts with: the `service` command and its runner (a
    projector's, a stage's). Migrations (alembic), the console's application and SQLAlchemy
    cost about 0.6 s of CPU per process, paid hundreds of times by a stack's restarts and a
    test run."""
    probe = (
        "import sys; from interlock import cli; cli.build(['service']); "
        "import interlock.app.run_projector, interlock.app.wiring; "
        "print(sorted(m for m in ('alembic', 'sqlalchemy', 'interlock.console.app', "
        "'interlock.projector.store.migrate', 'interlock.app.supervisor') if m in sys.modules))"
    )
    assert _printed_by(probe) == "[]"


def _printed_by(probe: str) -> str:
    """What `probe` prints, run in a fresh interpreter (nothing imported yet)."""
    return subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
