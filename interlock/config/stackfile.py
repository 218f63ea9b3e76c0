"""`<home>/stack.json`: what a running embedded stack is made of (its servers' processes and
addresses), for the processes that attach to it and for the console, which makes a development
operator only on the embedded stack."""

import psutil
from pydantic import BaseModel, ConfigDict


class StackRecord(BaseModel):
    """``stack.json``: what a running stack is made of, for processes that attach to it."""

    model_config = ConfigDict(frozen=True)

    owner_pid: int
    owner_started_at: float
    nats_pid: int
    nats_url: str
    postgres_pid: int
    database_url: str

    def owner_alive(self) -> bool:
        try:
            started_at = psutil.Process(self.owner_pid).create_time()
        except psutil.Error:
            return False
        return abs(started_at - self.owner_started_at) < 0.01  # else: a reused pid
