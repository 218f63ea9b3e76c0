"""The invoice pipeline (from file to posting) as an Interlock workflow plugin.

Written only against Interlock's public API; installed like any third-party workflow:

```sh
pip install -e examples/invoice
interlock workflows        # invoice v1, v2, v3: stages extract, validate, post, notify, reverse
```
"""

from __future__ import annotations

from interlock import Plugin
from interlock_invoice.definition import PLUGIN_GUARDS, STAGES, build
from interlock_invoice.document import document_key
from interlock_invoice.ports import EXTRACTOR, FINANCE, NOTIFIER
from interlock_invoice.scenarios import PARAMETERS, SCENARIOS

DEFINITION_V1 = build(version=1).build()
DEFINITION_V2 = build(version=2).build()
DEFINITION = build().build()

PLUGIN = Plugin(
    workflow_type="invoice",
    definitions=(DEFINITION_V1, DEFINITION_V2, DEFINITION),
    stages=STAGES,
    ports=(EXTRACTOR, FINANCE, NOTIFIER),
    description="Invoice file -> extraction -> validation -> approval -> posting -> notice",
    guards=PLUGIN_GUARDS,
    workflow_key=document_key,
    scenarios=SCENARIOS,
    scenario_parameters=PARAMETERS,
)

__all__ = ["DEFINITION", "PLUGIN"]
