"""Ports: the outside systems a workflow's stages call, with the adapter used by default."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from nats.aio.client import Client as Nats
from pydantic import BaseModel

from interlock.contracts.errors import ConfigurationError
from interlock.services.ports import ModelClient

T_co = TypeVar("T_co", covariant=True)


def _no_model() -> ModelClient:
    raise ConfigurationError(
        "no model client is configured for this adapter",
        hint="bind the port with `asks_model=True`, or build the adapter without `ctx.model()`",
    )


@dataclass(frozen=True)
class AdapterContext:
    """What an adapter factory may use to build an adapter for one port: the stage's broker
    connection (for NATS request/reply adapters), the installation's timeout for outside
    calls, the port's configuration (from `INTERLOCK_ADAPTERS`, else empty), the model
    client configured for the workflow type and the installation's home."""

    workflow_type: str
    port: str
    nats: Nats
    timeout: float
    config: Mapping[str, object] = field(default_factory=dict)
    model: Callable[[], ModelClient] = field(default=_no_model)
    home: Path = field(default_factory=Path.cwd)
    """The installation's home directory (`INTERLOCK_HOME`): where an adapter may keep local
    state that the installation's processes share, such as a simulator's ledger."""


@dataclass(frozen=True)
class Adapter(Generic[T_co]):
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

    build: Callable[[AdapterContext], T_co]
    config: type[BaseModel] | None = None
    """The model its configuration must satisfy; None: it takes none."""


@dataclass(frozen=True)
class Port(Generic[T_co]):
    """An outside system a stage calls, typed by the protocol its adapter implements.

    ```python
    GREETER: Port[Greeter] = Port("greeter", default=http_greeter, protocol=Greeter)
    ```
    `default` builds the adapter unless the installation picks one of `adapters` by kind. A stage
    asks for it with `ctx.port(GREETER)`, which is typed `Greeter`.
    """

    name: str
    default: Callable[[AdapterContext], T_co] | None = None
    protocol: object = None
    """The protocol class adapters implement (shown by `interlock workflows`)."""
    description: str = ""
    adapters: Mapping[str, Adapter[T_co]] = field(default_factory=dict)
    """Generic adapters the installation may bind instead of `default`, by kind."""
    asks_model: bool = False
    """The adapter is the configured model client (`ctx.model()`): a stage using this port
    is given the model settings and key, which no other stage is."""

    @property
    def protocol_name(self) -> str:
        return getattr(self.protocol, "__name__", "") or ""
