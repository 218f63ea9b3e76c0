"""The deploy gate through a real OpenAI-compatible endpoint: `interlock eval` asks the golden
set under the released prompt and under a candidate's words (`--prompt-file`), and exits 1
when the candidate's answers fall under the threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from interlock.cli import app
from interlock.ops.evaluation import golden_cases
from interlock.workflows.support.prompts import CLASSIFY
from tests.support.fake_openai import FakeOpenAI, Reply, completion

MODEL = "fake-classifier"


def _answers(categories: list[str]) -> list[Reply]:
    return [
        completion(json.dumps({"category": c, "confidence": 0.9, "rationale": "r"}))
        for c in categories
    ]


def test_a_candidate_prompt_worse_than_the_released_one_fails_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert CLASSIFY.golden is not None
    expected = [c.expected["category"] for c in golden_cases(CLASSIFY.golden)]
    candidate = tmp_path / "terse.txt"
    candidate.write_text("Say which team should answer this. Be brief.")
    args = ["eval", "support.classify", "--model", "openai", "--threshold", "0.9", "--json"]
    with FakeOpenAI(model=MODEL, api_key=None) as fake:
        monkeypatch.setenv("INTERLOCK_OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("INTERLOCK_OPENAI_MODEL", MODEL)
        fake.enqueue(*_answers(expected))
        released = CliRunner().invoke(app, args)
        fake.enqueue(*_answers(["technical"] * len(expected)))
        worse = CliRunner().invoke(app, [*args, "--prompt-file", str(candidate)])
        sent = [r["messages"][1]["content"] for r in fake.requests]

    assert fake.problems == []
    assert released.exit_code == 0, released.output
    assert json.loads(released.stdout)["agreement"] == {"category": 1.0}
    assert worse.exit_code == 1, worse.output
    report = json.loads(worse.stdout)
    assert report["passed"] is False
    assert report["agreement"]["category"] < 0.9
    assert report["prompt_version"].startswith("candidate-")
    # The candidate's words, not the released prompt's, reached the model.
    assert all(candidate.read_text() in text for text in sent[len(expected) :])
    assert not any(candidate.read_text() in text for text in sent[: len(expected)])
    assert report["tokens"]["input"] == 42 * len(expected)
