"""`interlock eval TYPE.TASK`: a model task's golden set asked of one or more models under a
prompt, the answers checked (schema, then per expected field), with a threshold that exits 1:
the gate a prompt or model change passes before it is released (see `interlock.ops.evaluation`).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from interlock._sdk.models import ModelTask
from interlock._sdk.plugin import Plugin
from interlock.app import terminal
from interlock.app.options import JsonOpt, load_settings, usage_error
from interlock.app.wiring import task_catalog
from interlock.cli.shadowing import recorded_cases
from interlock.config.durations import parse_duration
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.errors import InterlockError
from interlock.ops.evaluation import candidate_version, evaluate, golden_cases
from interlock.ops.shadow import ShadowCases
from interlock.services.models import PromptTemplate, TaskCatalog, model_client
from interlock.services.models.pricing import PricedModel

_MODEL = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        help="A model client to evaluate (rules, local, recorded:PATH, openai); repeat it to "
        "compare models side by side. Default: the one configured for the type.",
    ),
]


def eval_command(
    target: Annotated[str, typer.Argument(help="TYPE.TASK, e.g. support.classify.")],
    *,
    golden: Annotated[
        Path | None, typer.Option(help="A golden set (JSONL); default: the one the task ships.")
    ] = None,
    prompt_version: Annotated[
        str | None, typer.Option(help="A released prompt version (default: the newest).")
    ] = None,
    prompt_file: Annotated[
        Path | None,
        typer.Option(help="A candidate prompt's instructions, not yet released, to evaluate."),
    ] = None,
    model: _MODEL = None,
    shadow: Annotated[
        bool,
        typer.Option(
            "--shadow",
            help="Ask the inputs recorded in the database's histories instead of a golden set, "
            "and compare with the recorded accepted answers and what people approved.",
        ),
    ] = False,
    since: Annotated[
        str | None,
        typer.Option(help="With --shadow: only calls committed within this duration (24h, 7d)."),
    ] = None,
    threshold: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="The least share each figure must reach.")
    ] = 0.8,
    json_output: JsonOpt = False,
) -> None:
    """Ask a model task's golden set of a model (or several, side by side) and report schema
    validity, per-field agreement, tokens, cost and latency; exit 1 when a figure is under
    the threshold, 2 for a bad target, set or prompt."""
    plugin, task = _task(target)
    source = golden or task.golden
    if shadow and golden is not None:
        usage_error("give --golden or --shadow, not both")
    if since is not None and not shadow:
        usage_error("--since goes with --shadow")
    if source is None and not shadow:
        usage_error(f"{target} ships no golden set: give one with --golden FILE.jsonl")
    after = _since(since)
    version, catalog = _prompt(target, plugin, task, prompt_version, prompt_file)
    s = load_settings()
    specs = model or [s.models.get(plugin.workflow_type, s.model)]
    extra: dict[str, Any] = {}
    try:
        if shadow:
            recorded = recorded_cases(plugin, task, source, after)
            cases, extra = recorded.cases, _shadow_summary(recorded, since)
        else:
            assert source is not None
            cases = golden_cases(source)
        reports = asyncio.run(
            _evaluate_all(s, specs, catalog, task, cases, version=version, threshold=threshold)
        )
    except (InterlockError, ValueError) as exc:
        usage_error(str(exc))
    passed = all(r["passed"] for r in reports)
    found = {**reports[0], **extra, "by_model": reports, "passed": passed}
    if json_output:
        terminal.print_json(found)
    else:
        _table(target, reports)
        if shadow:
            skipped = ", ".join(f"{n} {why}" for why, n in extra["skipped"].items()) or "none"
            terminal.console.print(
                f"shadow run over {extra['workflows']} workflows' recorded calls; "
                f"not asked again: {skipped}"
            )
    if not found["passed"]:
        raise typer.Exit(1)


def _task(target: str) -> tuple[Plugin, ModelTask]:
    workflow_type, _, task_name = target.partition(".")
    loaded = installed()
    if workflow_type not in loaded.plugins:
        usage_error(f"no workflow type {workflow_type!r} (installed: {', '.join(loaded.plugins)})")
    plugin = loaded.plugins[workflow_type].plugin
    tasks = {t.name: t for t in plugin.model_tasks}
    if task_name not in tasks:
        usage_error(f"{workflow_type} has no model task {task_name!r} (it has: {', '.join(tasks)})")
    return plugin, tasks[task_name]


def _prompt(
    target: str,
    plugin: Plugin,
    task: ModelTask,
    prompt_version: str | None,
    prompt_file: Path | None,
) -> tuple[str, TaskCatalog]:
    """The prompt version to ask under and the catalog that holds its words."""
    catalog = task_catalog(plugin)
    version = prompt_version or task.prompts[-1].version
    if prompt_file is not None and prompt_version is not None:
        usage_error("give --prompt-version or --prompt-file, not both")
    if prompt_file is not None:
        words = _read(prompt_file)
        version = candidate_version(words)
        template = PromptTemplate(version=version, task=task.name, instructions=words)
        catalog = replace(catalog, templates={**catalog.templates, version: template})
    elif version not in {p.version for p in task.prompts}:
        released = ", ".join(p.version for p in task.prompts)
        usage_error(f"{target} has no prompt {version!r} (released: {released})")
    return version, catalog


def _since(since: str | None) -> datetime | None:
    try:
        return datetime.now(UTC) - parse_duration(since) if since is not None else None
    except ValueError as exc:
        usage_error(str(exc))


def _shadow_summary(recorded: ShadowCases, since: str | None) -> dict[str, Any]:
    return {
        "source": "shadow",
        "since": since,
        "workflows": recorded.workflows,
        "skipped": dict(sorted(recorded.skipped.items())),
    }


def _read(path: Path) -> str:
    try:
        words = path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        usage_error(f"--prompt-file: {path} cannot be read as text")
    if not words:
        usage_error(f"--prompt-file: {path} is empty")
    return words


async def _evaluate_all(
    s: Settings,
    specs: list[str],
    catalog: Any,
    task: Any,
    cases: Any,
    *,
    version: str,
    threshold: float,
) -> list[dict[str, Any]]:
    reports = []
    for spec in specs:
        client = PricedModel(
            model_client(
                spec,
                tasks=catalog,
                base_url=s.openai_base_url,
                model=s.openai_model,
                api_key=s.openai_api_key.get_secret_value() if s.openai_api_key else None,
                timeout=s.model_timeout,
            ),
            s.model_prices,
        )
        try:
            found = await evaluate(task, cases, client, prompt_version=version, threshold=threshold)
        finally:
            close = getattr(client.client, "aclose", None)
            if close is not None:
                await close()
        reports.append({"model": spec, **found})
    return reports


def _table(target: str, reports: list[dict[str, Any]]) -> None:
    fields = sorted({f for r in reports for f in r["agreement"]})
    settled = sorted({f for r in reports for f in r["approved_agreement"]})
    table = Table(
        "model",
        "cases",
        "schema valid",
        *fields,
        *(f"{f} (approved)" for f in settled),
        "tokens",
        "cost",
        "p50 ms",
        "passed",
    )
    for r in reports:
        table.add_row(
            r["model"],
            str(r["cases"]),
            f"{r['schema_valid']:.0%}",
            *(f"{r['agreement'].get(f, 0):.0%}" for f in fields),
            *(f"{r['approved_agreement'].get(f, 0):.0%}" for f in settled),
            f"{r['tokens']['input']}/{r['tokens']['output']}",
            f"{r['cost']:.4f}",
            str(r["latency_ms_p50"]),
            "yes" if r["passed"] else "[red]no[/]",
        )
    terminal.console.print(
        f"{target}, prompt {reports[0]['prompt_version']}, threshold {reports[0]['threshold']}"
    )
    terminal.console.print(table)
