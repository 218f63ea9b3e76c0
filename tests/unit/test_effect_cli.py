"""`interlock effect ID confirm|rerun|compensate`: the contract's form (the workflow first)
and the older `effect ACTION ID` both send the action's event to the named workflow; bad
input is one line, exit 2, with nothing sent."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from interlock.cli import app, effects

RECEIPT = '{"operation_id": "op-1"}'


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, Any]]]:
    calls: list[tuple[str, str, dict[str, Any]]] = []
    for name in effects.ACTIONS:

        def record(workflow_id: str, *, _name: str = name, **options: Any) -> None:
            calls.append((_name, workflow_id, options))

        monkeypatch.setitem(effects.ACTIONS, name, record)
    return calls


@pytest.mark.parametrize(
    "words",
    [["wf-7", "confirm"], ["confirm", "wf-7"]],
    ids=["id-first", "action-first"],
)
def test_either_order_confirms_the_named_workflow_with_its_receipt(
    sent: list[tuple[str, str, dict[str, Any]]], words: list[str]
) -> None:
    result = CliRunner().invoke(app, ["effect", *words, "--receipt", RECEIPT, "--json"])

    assert result.exit_code == 0, result.output
    [(action, workflow_id, options)] = sent
    assert (action, workflow_id) == ("confirm", "wf-7")
    assert options["receipt"] == RECEIPT
    assert options["json_output"] is True


@pytest.mark.parametrize("action", ["rerun", "compensate"])
def test_rerun_and_compensate_take_the_id_first_and_a_reason(
    sent: list[tuple[str, str, dict[str, Any]]], action: str
) -> None:
    result = CliRunner().invoke(app, ["effect", "wf-8", action, "--reason", "checked by hand"])

    assert result.exit_code == 0, result.output
    [(called, workflow_id, options)] = sent
    assert (called, workflow_id, options["reason"]) == (action, "wf-8", "checked by hand")


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["wf-9", "confirm"], "confirm needs --receipt"),
        (["wf-9", "undo"], "unknown action 'undo'"),
        (["wf-9"], "expected ID ACTION"),
        (["wf-9", "rerun", "extra"], "expected ID ACTION"),
    ],
)
def test_bad_usage_is_one_line_exit_2_and_nothing_is_sent(
    sent: list[tuple[str, str, dict[str, Any]]], words: list[str], said: str
) -> None:
    result = CliRunner().invoke(app, ["effect", *words])

    assert result.exit_code == 2
    assert said in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert sent == []


def test_a_receipt_that_is_no_json_object_is_refused_in_the_id_first_form() -> None:
    result = CliRunner().invoke(app, ["effect", "wf-none", "confirm", "--receipt", "[1]"])

    assert result.exit_code == 2
    assert "--receipt must be a JSON object" in result.output
    assert len(result.output.strip().splitlines()) == 1
