"""The definition model the `Workflow` builder produces, for a plugin that reads or writes a
definition as data: its transition rows (`Transition`, `Branch`, `Parallel`), their `Guard`s
and `Limit`s, the states where a person acts (`HumanWait`, `Announcement`, `REVIEW_TARGET`)
and the whole `WorkflowDefinition`.

```python
from interlock.definition import Guard, Transition
```
"""

from interlock.contracts.definition import (
    REVIEW_TARGET,
    Announcement,
    Branch,
    Guard,
    HumanWait,
    Limit,
    Parallel,
    Transition,
    WorkflowDefinition,
)

__all__ = [
    "REVIEW_TARGET",
    "Announcement",
    "Branch",
    "Guard",
    "HumanWait",
    "Limit",
    "Parallel",
    "Transition",
    "WorkflowDefinition",
]
