"""Ports: the outside systems a workflow's stages call, with the adapter used by default."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")


@dataclass(frozen=True)
class AdapterContext:
    """What an adapter factory may use to build an adapter for one port: the stage's broker
    connection (for NATS request/reply adapters), the installation's timeout for outside
    calls, the port's configuration (from `INTERLOCK_ADAPTERS`, else empty), the model
    client configured for the workflow type and the installation's home."""

    workflow_type: str
    port: str
    nats: Any
    timeout: float
    config: Mapping[str, Any] = field(default_factory=dict)
    model: Callable[[], Any] = field(default=lambda: None)
    home: Path = field(default_factory=Path.cwd)
    """The installation's home directory (`INTERLOCK_HOME`): where an adapter may keep local
    state that the installation's processes share, such as a simulator's ledger."""


@dataclass(frozen=True)
class Adapter(Generic[T]):
    """A generic adapter (HTTP, NATS request/reply, …) a port may be bound to by
    configuration: ``INTERLOCK_ADAPTERS='{"<type>": {"<port>": {"adapter": "<kind>", …}}}'``
    picks it by kind from `Port.adapters`, and the other keys are its `AdapterContext.config`,
    checked against `config` when the runtime starts.

    ```python
    EFFECTS = Port("effects", default=nats_effects, protocol=EffectProvider, adapters={
        "http": Adapter(lambda c: HttpEffects(HttpEffectConfig.model_validate(c.config),
                                              EffectReceipt), config=HttpEffectConfig),
    })
    ```
    """

    build: Callable[[AdapterContext], T]
    config: type[BaseModel] | None = None
    """The model its configuration must satisfy; None: it takes none."""


@dataclass(frozen=True)
class Port(Generic[T]):
    """An outside system a stage calls, typed by the protocol its adapter implements.

    ```python
    GREETER: Port[Greeter] = Port("greeter", default=http_greeter, protocol=Greeter)
    ```
    `default` builds the adapter unless the installation picks one of `adapters` by kind. A stage
    asks for it with `ctx.port(GREETER)`, which is typed `Greeter`.
    """

    name: str
    default: Callable[[AdapterContext], T] | None = None
    protocol: object = None
    """The protocol class adapters implement (shown by `interlock workflows`)."""
    description: str = ""
    adapters: Mapping[str, Adapter[T]] = field(default_factory=dict)
    """Generic adapters the installation may bind instead of `default`, by kind."""
    asks_model: bool = False
    """The adapter is the configured model client (`ctx.model()`): a stage using this port
    is given the model settings and key, which no other stage is."""

    @property
    def protocol_name(self) -> str:
        return getattr(self.protocol, "__name__", "") or ""
