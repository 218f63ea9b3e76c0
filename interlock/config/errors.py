"""The shared configuration's errors: a credential or a plugin the runtime cannot use."""

from __future__ import annotations

from interlock.contracts.errors import ErrorCode, InterlockError


class SecretsError(InterlockError):
    """A credential is missing and cannot be created here, or a file is unreadable."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class PluginError(InterlockError):
    """A plugin the runtime refuses to load; the message names plugin, row and problem."""

    code = ErrorCode.INVALID_DEFINITION
    retryable = False

    def __init__(
        self, plugin: str, row: str, problem: str, *, workflow_type: str | None = None
    ) -> None:
        # One line whatever the cause: it is what a start-up prints about the plugin.
        problem = " ".join(problem.split())
        super().__init__(
            f"plugin {plugin}: {row}: {problem}", hint="fix or uninstall the plugin's distribution"
        )
        self.plugin, self.row, self.problem = plugin, row, problem
        self.workflow_type = workflow_type
        """The type the plugin claims, when it got far enough to say."""
