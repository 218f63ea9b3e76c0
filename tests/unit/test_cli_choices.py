"""Nothing silently accepted: an unknown state, type or scenario is refused before anything
runs, with exit status 2 and the valid values."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from interlock.cli import app
from tests.support.cli import free_port


@pytest.fixture
def nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No stack to reach: a command that got as far as connecting fails the test's asserts."""
    monkeypatch.setenv("INTERLOCK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERLOCK_NATS_URL", f"nats://127.0.0.1:{free_port()}")
    monkeypatch.setenv("INTERLOCK_DATABASE_URL", f"postgresql://x@127.0.0.1:{free_port()}/x")


@pytest.mark.parametrize(
    ("args", "listed"),
    [
        (["list", "--state", "BOGUS"], ["CLASSIFYING", "AWAITING_APPROVAL", "COMPLETED"]),
        (["list", "--type", "suport"], ["support", "request"]),
        (["replay", "--type", "suport"], ["support", "request"]),
        (["demo", "--only", "nonsense"], ["happy_path", "approval_expiry"]),
        (["service", "nonsense"], ["projector", "relay"]),
        (["up", "--only", "relay", "--only", "nonsense"], ["projector", "support.classify"]),
    ],
)
def test_an_unknown_value_is_refused_with_the_valid_ones(
    nowhere: None, args: list[str], listed: list[str]
) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    for value in listed:
        assert value in result.output
    assert "unreachable" not in result.output


def test_up_refuses_an_unknown_component_in_one_line_before_starting(
    nowhere: None, tmp_path: Path
) -> None:
    result = CliRunner().invoke(app, ["up", "--only", "projector", "--only", "nonsense"])
    assert result.exit_code == 2, result.output
    assert result.output.strip().count("\n") == 0, result.output
    assert "'nonsense'" in result.output
    assert not (tmp_path / "home" / "endpoints.json").exists()
