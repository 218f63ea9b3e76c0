"""Every error Interlock raises that a user may catch; all derive from `InterlockError`.

Each declares, on its class, a stable `code` (an `ErrorCode`) and whether it is `retryable`
(a retryable error also derives from `TransientError`), and its message says what to do.

```python
from interlock.errors import ExternalRejected, InterlockError, Transient
```

- raised by ports and adapters to a stage: `ExternalTimeout` (no answer in time; for a write
  the outcome is unknown), `OutcomeUnknown` (reconciled, still unknown), `ExternalUnavailable`
  (refused before doing anything), `ExternalRejected` (a definitive "no"),
  `ConfigurationError` (an adapter's configuration cannot work);
- raised by a stage on purpose: `Transient` (try the job again);
- raised when a plugin is loaded or validated: `PluginError`, `DefinitionError`;
- raised by `interlock.client.Client`: `NotConnected`, `StartRefused` and its refinements
  `UnknownWorkflowType` and `InvalidPayload`, `PublishFailed`;
- raised by `interlock.testing.WorkflowTestEnv`: `MalformedMessage` (an event nobody declares).
"""

from interlock._sdk.errors import Transient
from interlock.client.errors import (
    InvalidPayload,
    NotConnected,
    StartRefused,
    UnknownWorkflowType,
)
from interlock.config.errors import PluginError
from interlock.contracts.errors import (
    ConfigurationError,
    DefinitionError,
    ErrorCode,
    InterlockError,
    MalformedMessage,
    PublishFailed,
    TransientError,
)
from interlock.services.errors import (
    ExternalRejected,
    ExternalTimeout,
    ExternalUnavailable,
    OutcomeUnknown,
)

__all__ = [
    "ConfigurationError",
    "DefinitionError",
    "ErrorCode",
    "ExternalRejected",
    "ExternalTimeout",
    "ExternalUnavailable",
    "InterlockError",
    "InvalidPayload",
    "MalformedMessage",
    "NotConnected",
    "OutcomeUnknown",
    "PluginError",
    "PublishFailed",
    "StartRefused",
    "Transient",
    "TransientError",
    "UnknownWorkflowType",
]
