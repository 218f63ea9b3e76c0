"""A plugin declares the model tasks its stages ask (`ModelTask`: released prompts and
deterministic rules); the runtime's generic model clients serve exactly those."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import hello_workflow as hello
import pytest
from pydantic import BaseModel

from interlock import ModelTask, Prompt
from interlock.app.wiring import task_catalog
from interlock.config.errors import PluginError
from interlock.config.plugins import installed, validate
from interlock.errors import ExternalRejected
from interlock.services.models import model_client
from interlock.services.models.prompts import render_messages
from interlock.services.ports import ModelRequest


class _Greeting(BaseModel):
    name: str


def _greet(inputs: Mapping[str, Any], repairing: bool) -> dict[str, Any]:
    name = _Greeting.model_validate(inputs).name
    return {"greeting": f"hello {name}", "repairing": repairing}


GREET = ModelTask(
    name="greet",
    prompts=(Prompt("greet-v1", "Greet the person below."), Prompt("greet-v2", "Greet warmly.")),
    rules=_greet,
)
PLUGIN = dataclasses.replace(hello.PLUGIN, model_tasks=(GREET,))


def ask(task: str, version: str, inputs: dict[str, Any], repair: bool = False) -> ModelRequest:
    return ModelRequest(
        task=task,
        prompt_version=version,
        inputs=inputs,
        output_schema={},
        repair_errors=["x: bad"] if repair else [],
    )


async def test_the_rules_model_answers_a_plugins_task_with_its_rules() -> None:
    client = model_client("rules", tasks=task_catalog(PLUGIN))

    first = await client.complete(ask("greet", "greet-v1", {"name": "Ada"}))
    repair = await client.complete(ask("greet", "greet-v1", {"name": "Ada"}, repair=True))

    assert first.output == {"greeting": "hello Ada", "repairing": False}
    assert repair.output["repairing"] is True
    assert (first.model, first.model_version) == ("rules", "rules-1")


async def test_malformed_inputs_name_the_field_not_the_value() -> None:
    client = model_client("rules", tasks=task_catalog(PLUGIN))

    with pytest.raises(ExternalRejected) as raised:
        await client.complete(ask("greet", "greet-v1", {"nom": "secret-value"}))

    assert raised.value.error_class == "invalid_model_input"
    assert "name" in str(raised.value)
    assert "secret-value" not in str(raised.value)


async def test_a_task_another_plugin_declares_is_not_answered() -> None:
    support = task_catalog(installed().plugin("support"))
    client = model_client("rules", tasks=task_catalog(PLUGIN))

    assert "classify" in support.rules
    with pytest.raises(ExternalRejected) as raised:
        await client.complete(ask("classify", "support-classify-v1", {"subject": "s", "body": ""}))

    assert raised.value.error_class == "unsupported_task"


def test_each_released_prompt_renders_under_its_version() -> None:
    templates = task_catalog(PLUGIN).templates

    for version, words in (("greet-v1", "Greet the person below."), ("greet-v2", "Greet warmly.")):
        messages = render_messages(templates, ask("greet", version, {"name": "Ada"}))
        assert messages[1]["content"].startswith(words)
    with pytest.raises(ExternalRejected) as raised:
        render_messages(templates, ask("greet", "greet-v3", {}))
    assert raised.value.error_class == "unknown_prompt_version"


@pytest.mark.parametrize(
    ("tasks", "row"),
    [
        ((GREET, GREET), "model task 'greet'"),
        ((GREET, dataclasses.replace(GREET, name="wave")), "prompt 'greet-v1'"),
    ],
)
def test_a_task_or_prompt_declared_twice_is_refused(tasks: tuple[ModelTask, ...], row: str) -> None:
    with pytest.raises(PluginError) as refused:
        validate(dataclasses.replace(PLUGIN, model_tasks=tasks), "hello")

    assert refused.value.row == row


def test_the_built_in_plugins_declare_the_prompts_their_stages_name() -> None:
    support = task_catalog(installed().plugin("support"))
    request = task_catalog(installed().plugin("request"))

    assert set(support.templates) == {"support-classify-v1", "support-recommend-v1"}
    assert set(support.rules) == {"classify", "recommend"}
    assert set(request.templates) == {"request-classify-v1"}
    assert request.rules == {}
