"""Demo scenarios a plugin ships: what to send, how the outside world answers, what must result.

`interlock demo` runs every installed plugin's `Plugin.scenarios` on the real stack, beside
the runtime's own, and reports each in its table and `--json`:

```python
async def approve(run: ScenarioRun) -> None:
    task = await run.announcement("approval_requested")
    await run.signal("APPROVED", {"total": task["total"]}, role="invoice_approver")
    await run.wait_state("POSTED")

Scenario("approved", "POSTED", request=lambda token: big_invoice(token), script=approve,
         checks=(("posted once", lambda run, view: view["data"]["posting_number"] != ""),))
```
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class ScenarioRun(Protocol):
    """One scenario's live handle, given to its script and checks."""

    workflow_id: str
    """The scenario's workflow: the one its request started, unless the script points it at
    another it started (that one is then judged)."""
    token: str
    """Unique to this run: put it in what the request carries, so that a second demo on the
    same installation starts new workflows instead of replaying the first's."""
    home: Path
    """The installation's home (as `AdapterContext.home`): where the plugin's simulators
    keep their ledgers, for checks that count what happened outside."""

    async def start(self, payload: Mapping[str, object]) -> str:
        """Publish another START of this type (a new event id) as the upstream client;
        the id of the workflow it addresses."""
        ...

    async def view(self, workflow_id: str | None = None) -> dict[str, object] | None:
        """The workflow as `interlock show --json` prints it (default: the scenario's)."""
        ...

    async def wait_for(
        self, predicate: Callable[[dict[str, object]], bool], *, workflow_id: str | None = None
    ) -> dict[str, object]:
        """Wait until `predicate(view)` holds; that view (the demo bounds the wait)."""
        ...

    async def wait_state(self, *states: str, workflow_id: str | None = None) -> dict[str, object]:
        """Wait until the workflow is in one of `states`."""
        ...

    async def announcement(self, name: str) -> dict[str, object]:
        """The payload of the scenario workflow's next announcement `name` (for example
        `approval_requested`), waiting for it."""
        ...

    async def signal(self, event_type: str, payload: Mapping[str, object], *, role: str) -> str:
        """Send a signal to the scenario's workflow as an actor of `role`; its event id."""
        ...


Script = Callable[[ScenarioRun], Awaitable[None]]
CheckFn = Callable[[ScenarioRun, dict[str, object]], "bool | Awaitable[bool]"]
Check = tuple[str, CheckFn]
"""A named condition on the finished run and its final view (sync or async)."""


@dataclass(frozen=True)
class Scenario:
    """A named, end-to-end case of a workflow type.

    The demo publishes `request(run.token)` as the START, runs `script` (default: wait until
    the workflow is in `expected`), then compares the state with `expected` and evaluates
    every check; a check that raises counts as failed.
    """

    name: str
    expected: str
    request: Callable[[str], Mapping[str, object]]
    script: Script | None = None
    checks: tuple[Check, ...] = ()
    description: str = ""
