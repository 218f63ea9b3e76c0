"""The expense claim as an Interlock workflow plugin, on the public SDK alone:

```sh
pip install -e examples/expense
interlock workflows        # expense v1: stages categorise, pay, notify
```
"""

from __future__ import annotations

from interlock import Plugin
from interlock_expense.workflow import (
    DEFINITION,
    NOTICES,
    PAYMENTS,
    categorise,
    needs_approval,
    notify,
    pay,
    within_policy,
)

PLUGIN = Plugin(
    workflow_type="expense",
    definitions=(DEFINITION,),
    stages=(categorise, pay, notify),
    ports=(PAYMENTS, NOTICES),
    description="Expense claim -> policy -> approval -> payment -> notice",
    guards=(within_policy, needs_approval),
)

__all__ = ["DEFINITION", "PLUGIN"]
