"""HTTP adapters a user points at their own systems: effects (`HttpEffects`, a `KeyedEffects`
provider deduplicating by `Idempotency-Key`, with `KeyedRequest`s) and reads (`HttpReader`),
with their pure configuration models (`HttpEffectConfig`, `HttpReadConfig`, and `SecretRef`
for the credentials they send). Failures are Interlock's own errors (`interlock.errors`).

```python
from interlock.adapters.http import HttpReadConfig, HttpReader, SecretRef
```
"""

from interlock.services.adapters.http import (
    HttpEffectConfig,
    HttpEffects,
    HttpReadConfig,
    HttpReader,
    KeyedRequest,
    SecretRef,
)

__all__ = [
    "HttpEffectConfig",
    "HttpEffects",
    "HttpReadConfig",
    "HttpReader",
    "KeyedRequest",
    "SecretRef",
]
