"""The relay's and the timer service's own errors; callers never see asyncpg or nats exceptions.

A lost database is the shared `StoreUnavailable` (`interlock.contracts.errors`); a refused
publish is a `PublishFailed`, which these refine with what the relay knows about it.
"""

from __future__ import annotations

from interlock.contracts.errors import ErrorCode, PublishFailed, TransientError


class LeadershipLost(TransientError):
    """The cursor moved under this relay: another relay published in its place. The rows
    this relay published meanwhile carry the same Nats-Msg-Id, so the broker drops them."""

    code = ErrorCode.CONCURRENCY_CONFLICT
    retryable = True


class OutboxPublishFailed(PublishFailed):
    """Row `row_id` was not stored by JetStream (`__cause__` says why). The cursor stopped
    just before it, after the `published` rows of the same pass; `attempts` counts the
    consecutive failures of this row."""

    code = ErrorCode.BROKER_UNAVAILABLE
    retryable = True

    def __init__(self, row_id: int, attempts: int, published: int, cause: BaseException) -> None:
        super().__init__(
            f"outbox row {row_id} not published after {attempts} attempt(s): "
            f"{type(cause).__name__}: {cause}",
            hint="check that the NATS server is reachable and a stream captures the subject",
        )
        self.row_id = row_id
        self.attempts = attempts
        self.published = published


class TimerPublishFailed(PublishFailed):
    """JetStream did not acknowledge a firing (`__cause__` says why). The batch was rolled
    back: its timers are still armed and fire again, under the same event ids."""

    code = ErrorCode.BROKER_UNAVAILABLE
    retryable = True
