"""Loading the installed workflow plugins: discovery by entry point, then checks.

Every distribution may register `Plugin` objects under the entry point group
`interlock.workflows` (the runtime's own `support` and `request` are registered the same way).
A plugin is refused at load, with an error naming the plugin, the row and the problem, when its
entry point does not import, a definition fails the graph check, its stages do not match its
definition's jobs, a stage's models do not match what the definition passes and accepts, or
another plugin already claims its workflow type. A refused plugin is isolated: it is skipped,
kept in `Installed.broken` and reported in one line, and the others run; a command that needs
it fails with that line (exit 2). The `Registry` handed to the components is built from what
was loaded. The checks are public as `interlock.validate(plugin)`, and `interlock.testing`
runs them when a test builds its env.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from pydantic import BaseModel

from interlock._sdk.plugin import ENTRY_POINT_GROUP, Plugin
from interlock._sdk.stages import StageLike
from interlock.config.errors import PluginError
from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.errors import DefinitionError
from interlock.contracts.graphcheck import assert_valid
from interlock.contracts.registry import Registry
from interlock.projector.engine import ACTIONS, GUARDS


@dataclass(frozen=True)
class Loaded:
    """A loaded plugin and where it came from."""

    plugin: Plugin
    entry_point: str
    distribution: str


@dataclass(frozen=True)
class Installed:
    plugins: dict[str, Loaded]
    """By workflow type."""
    registry: Registry
    broken: tuple[PluginError, ...] = ()
    """The plugins refused at load, skipped: the others run without them."""

    def plugin(self, workflow_type: str) -> Plugin:
        try:
            return self.plugins[workflow_type].plugin
        except KeyError:
            self.require(workflow_type)
            known = sorted(self.plugins)
            raise LookupError(f"no plugin for workflow type {workflow_type!r}; {known}") from None

    def refusal(self, name: str) -> PluginError | None:
        """Why the plugin providing `name` (a workflow type, an entry point, or a stage as
        `type.stage`) was refused; None when no refused plugin claims it."""
        claimed = name.split(".", 1)[0]
        for error in self.broken:
            if claimed in (error.plugin, error.workflow_type) and claimed not in self.plugins:
                return error
        return None

    def require(self, name: str) -> None:
        """Raise the refusal of the plugin `name` needs (see `refusal`): a command that needs
        a broken plugin stops with its one line (exit 2)."""
        error = self.refusal(name)
        if error is not None:
            raise error


def load(found: Iterable[tuple[str, str, object]]) -> Installed:
    """Check and index `(entry point, distribution, object)` triples; an object that is a
    `PluginError` (its entry point did not import) or a plugin refused by the checks is kept
    in `broken` instead."""
    plugins: dict[str, Loaded] = {}
    broken: list[PluginError] = []
    for name, distribution, obj in found:
        try:
            plugin = _admitted(name, obj, plugins)
        except PluginError as refused:
            broken.append(refused)
            continue
        plugins[plugin.workflow_type] = Loaded(plugin, name, distribution)
    registry = Registry(
        (d for p in plugins.values() for d in p.plugin.definitions),
        guards={t: p.plugin.guard_predicates() for t, p in plugins.items()},
        keys={t: k for t, p in plugins.items() if (k := p.plugin.workflow_key) is not None},
    )
    return Installed(dict(sorted(plugins.items())), registry, tuple(broken))


def _admitted(name: str, obj: object, plugins: dict[str, Loaded]) -> Plugin:
    """`obj` as a plugin that may join `plugins`; PluginError naming the problem otherwise."""
    if isinstance(obj, PluginError):
        raise obj
    if not isinstance(obj, Plugin):
        raise PluginError(name, "entry point", f"names a {type(obj).__name__}, not a Plugin")
    try:
        validate(obj, name)
    except PluginError as refused:
        refused.workflow_type = obj.workflow_type
        raise
    except Exception as exc:  # a third party's code: whatever it raises refuses only itself
        raise PluginError(
            name, obj.workflow_type, f"its check failed: {exc!r}", workflow_type=obj.workflow_type
        ) from exc
    claimed = plugins.get(obj.workflow_type)
    if claimed is not None:
        raise PluginError(
            name,
            f"workflow type {obj.workflow_type!r}",
            f"already provided by plugin {claimed.entry_point} ({claimed.distribution})",
        )
    return obj


def _discovered() -> list[tuple[str, str, object]]:
    found = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        found.append((ep.name, _distribution(ep), _load(ep)))
    return found


def _distribution(ep: EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name} {dist.version}" if dist is not None else "?"


def _load(ep: EntryPoint) -> object:
    """The entry point's object, or the PluginError saying why it does not import (kept, so
    that one broken distribution does not hide the others)."""
    try:
        return ep.load()
    except Exception as exc:
        return PluginError(ep.name, ep.value, f"cannot be imported: {exc!r}")


@cache  # the installed distributions do not change under a running process
def installed() -> Installed:
    """The installed plugins and their registry; each refused plugin is reported once, in one
    line on stderr, and skipped."""
    found = load(_discovered())
    for refused in found.broken:
        print(f"warning: skipped {refused}", file=sys.stderr)
    return found


def validate(plugin: Plugin, name: str | None = None) -> None:
    """Refuse `plugin` with a `PluginError` naming plugin (`name`, default its workflow type),
    row and problem, for the first problem the runtime's load finds (see the module's
    docstring): the graph check (states, events, guards nobody provides, gates, what each
    terminal promises about effects), stages against the definition's jobs and data, model
    tasks. `interlock.testing.WorkflowTestEnv` runs it too, so a test fails where a deploy
    would."""
    name = name or plugin.workflow_type
    if not plugin.definitions:
        raise PluginError(name, "definitions", "none given")
    for g in plugin.guards:
        if g.name in GUARDS:
            raise PluginError(name, f"guard {g.name!r}", "has the name of a built-in guard")
    versions = [d.version for d in plugin.definitions]
    for d in plugin.definitions:
        row = f"{d.workflow_type} v{d.version}"
        if versions.count(d.version) > 1:
            raise PluginError(name, row, "defined twice")
        if d.workflow_type != plugin.workflow_type:
            raise PluginError(name, row, f"is not of the plugin's type {plugin.workflow_type!r}")
        try:
            assert_valid(d, {*GUARDS, *plugin.guard_predicates()}, ACTIONS)
        except DefinitionError as refused:
            problem = "; ".join(f"[{i.code}] {i.message}" for i in refused.issues)
            raise PluginError(name, row, problem) from refused
    _model_tasks_unique(plugin, name)
    _stages_match(plugin, name)


def _model_tasks_unique(plugin: Plugin, name: str) -> None:
    """A task or a prompt version declared twice would leave the model's answer to chance."""
    tasks: set[str] = set()
    versions: set[str] = set()
    for task in plugin.model_tasks:
        if task.name in tasks:
            raise PluginError(name, f"model task {task.name!r}", "declared twice")
        tasks.add(task.name)
        for prompt in task.prompts:
            if prompt.version in versions:
                raise PluginError(name, f"prompt {prompt.version!r}", "released twice")
            versions.add(prompt.version)


def _stages_match(plugin: Plugin, name: str) -> None:
    typed = {s.name: s for s in plugin.stages}
    dispatched = set()
    for d in plugin.definitions:
        for spec in d.all_stages():
            dispatched.add(spec.name)
            row = f"{d.workflow_type} v{d.version} stage {spec.name!r}"
            handler = typed.get(spec.name)
            if handler is None:
                raise PluginError(name, row, "the definition dispatches it; no stage handles it")
            _stage_matches(handler, d, spec.inputs, name=name, row=row)
    for extra in sorted(set(typed) - dispatched):
        raise PluginError(name, f"stage {extra!r}", "no definition dispatches it")


def _stage_matches(
    handler: StageLike,
    d: WorkflowDefinition,
    inputs: tuple[str, ...],
    *,
    name: str,
    row: str,
) -> None:
    allowed = d.emitted_by(handler.name)
    unknown = sorted(set(handler.reads.model_fields) - set(inputs))
    if unknown:
        raise PluginError(name, row, f"reads {unknown}, which the definition does not pass")
    for result in handler.emits:
        event = result.event_name()
        if event not in allowed:
            raise PluginError(name, row, f"emits {event}, not a result it may submit")
        spec = d.event(event)
        payload = spec.payload if spec is not None else None
        if payload is not None and not _same_shape(result, payload):
            raise PluginError(
                name, row, f"result {result.__name__} does not match {event}'s payload model"
            )


def _same_shape(model: type[BaseModel], payload: type[BaseModel]) -> bool:
    """`model` is the event's payload model, or declares exactly its fields and types."""
    if issubclass(model, payload):
        return True
    ours = {k: (f.annotation, f.is_required()) for k, f in model.model_fields.items()}
    theirs = {k: (f.annotation, f.is_required()) for k, f in payload.model_fields.items()}
    return ours == theirs
