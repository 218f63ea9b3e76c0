"""Typed stage results: one pydantic model per result event a stage may submit."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


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

    @classmethod
    def event_name(cls) -> str:
        if not cls.__event__:
            raise TypeError(f"{cls.__name__} names no event (set __event__)")
        return cls.__event__
