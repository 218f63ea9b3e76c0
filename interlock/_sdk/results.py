"""Typed stage results: one pydantic model per result event a stage may submit."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer


class Result(BaseModel):
    """The payload of one result event; a subclass names its event in `__event__`.

    ```python
    class Greeted(Result):
        __event__ = "GREETED"
        message: str
    ```
    The same class is the event's payload model in the definition (`Workflow.result`), so the
    projector validates what the stage submits against exactly what the stage declared.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    __event__: ClassVar[str] = ""
    __sparse__: ClassVar[bool] = False
    """Leave the fields the stage did not set off the payload (readers get their defaults): for
    a result whose payload has always been published without them."""

    @classmethod
    def event_name(cls) -> str:
        if not cls.__event__:
            raise TypeError(f"{cls.__name__} names no event (set __event__)")
        return cls.__event__

    @model_serializer(mode="wrap")
    def _payload(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.__sparse__:
            return data
        return {k: v for k, v in data.items() if k in self.model_fields_set}


EventRef = str | type[Result]
"""An event named by its name or by its result model."""


def event_name(event: EventRef) -> str:
    return event if isinstance(event, str) else event.event_name()
