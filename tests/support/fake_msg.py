"""A JetStream message and a broker as the projector's consumer sees them, recording how
each message ended (ack, nak with its delay, term, dead letter), for fast unit tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from interlock.contracts import subjects
from interlock.contracts.envelope import Envelope


@dataclass
class FakeMsg:
    data: bytes
    subject: str = "wf.in.signal.support.operator"
    headers: dict[str, str] | None = None
    delivered: int = 1
    published_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    sequence: int = 1
    endings: list[tuple[str, float | None]] = field(default_factory=list)
    pings: int = 0

    @classmethod
    def of(cls, event: Envelope, **fields: Any) -> FakeMsg:
        """`event` on the subject an installation's client would publish it on."""
        subject = (
            subjects.request(event.workflow_type, "upstream")
            if event.type == "START"
            else subjects.signal(event.workflow_type, "operator")
        )
        return cls(event.to_bytes(), subject, **fields)

    @property
    def metadata(self) -> Any:
        return SimpleNamespace(
            num_delivered=self.delivered,
            stream="WF_IN",
            timestamp=self.published_at,
            sequence=SimpleNamespace(stream=self.sequence),
        )

    async def ack(self) -> None:
        self.endings.append(("ack", None))

    async def nak(self, delay: float | None = None) -> None:
        self.endings.append(("nak", delay))

    async def term(self) -> None:
        self.endings.append(("term", None))

    async def in_progress(self) -> None:
        self.pings += 1

    @property
    def ending(self) -> str | None:
        return self.endings[-1][0] if self.endings else None


@dataclass
class FakeBroker:
    published: list[tuple[str, bytes, dict[str, str]]] = field(default_factory=list)

    async def publish(
        self, data: bytes, subject: str, *, headers: dict[str, str], stream: str
    ) -> None:
        self.published.append((subject, data, headers))

    def reasons(self) -> list[str]:
        return [h["Interlock-Dlq-Reason"] for _, _, h in self.published]
