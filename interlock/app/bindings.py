"""Which adapter serves each port: `INTERLOCK_ADAPTERS` against the installed plugins.

``{"<type>": {"<port>": {"adapter": "<kind>", …}}}`` binds the port to the generic adapter of
that kind the port offers (`Port.adapters`), configured by the other keys; without
``adapter`` the plugin's default factory is used, given the keys as its configuration. The
whole setting is checked when the runtime starts, so a mistake is one line naming the type,
the port and the problem, not a stage failing its first job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from interlock._sdk.ports import AdapterContext, Port
from interlock.config.plugins import Installed
from interlock.contracts.errors import ConfigurationError

KIND = "adapter"
"""The key of a port's configuration that picks a generic adapter by kind."""


def _misconfigured(workflow_type: str, port: str, problem: str) -> ConfigurationError:
    """`INTERLOCK_ADAPTERS` names something not installed or configures it wrongly."""
    return ConfigurationError(f"INTERLOCK_ADAPTERS: {workflow_type}.{port}: {problem}")


def chosen(
    port: Port[Any], config: Mapping[str, Any], workflow_type: str
) -> tuple[Callable[[AdapterContext], Any], dict[str, Any]]:
    """The factory that builds `port`'s adapter under `config`, and the configuration it is
    given (without the ``adapter`` key)."""
    rest = {k: v for k, v in config.items() if k != KIND}
    kind = config.get(KIND)
    if kind is None:
        if port.default is None:
            raise _misconfigured(workflow_type, port.name, "no default adapter: pick one")
        return port.default, rest
    adapter = port.adapters.get(kind) if isinstance(kind, str) else None
    if adapter is None:
        offered = ", ".join(sorted(port.adapters)) or "none"
        raise _misconfigured(
            workflow_type, port.name, f"unknown adapter {kind!r} (offered: {offered})"
        )
    if adapter.config is not None:
        try:
            adapter.config.model_validate(rest)
        except ValidationError as exc:
            raise _misconfigured(
                workflow_type, port.name, f"{kind} adapter: {_first_problem(exc)}"
            ) from None
    elif rest:
        raise _misconfigured(
            workflow_type, port.name, f"{kind} adapter takes no settings, got {sorted(rest)}"
        )
    return adapter.build, rest


def check_adapters(settings: Mapping[str, Mapping[str, Any]], installed: Installed) -> None:
    """Raise `ConfigurationError` for the first port of `settings` (`Settings.adapters`) that
    names an unknown type, port or adapter kind, or whose configuration its adapter refuses."""
    for workflow_type, ports in sorted(settings.items()):
        if workflow_type not in installed.plugins:
            installed.require(workflow_type)  # a refused plugin's type: say why it is missing
            known = ", ".join(sorted(installed.plugins))
            raise _misconfigured(workflow_type, "*", f"no such workflow type ({known})")
        plugin = installed.plugin(workflow_type)
        by_name = {p.name: p for p in plugin.ports}
        for name, config in sorted(ports.items()):
            port = by_name.get(name)
            if port is None:
                known = ", ".join(sorted(by_name)) or "none"
                raise _misconfigured(workflow_type, name, f"no such port ({known})")
            chosen(port, config, workflow_type)


def _first_problem(exc: ValidationError) -> str:
    """The first error's field and message, never the value (it may be a secret)."""
    first = exc.errors(include_input=False, include_url=False)[0]
    where = ".".join(map(str, first["loc"])) or "<root>"
    return f"{where}: {first['msg']}"
