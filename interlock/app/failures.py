"""The CLI's one error path: a configuration or start-up failure is one line on stderr naming
the variable or resource and what to do, and exit status 2. The trace is for `--debug` (or
INTERLOCK_LOG_LEVEL=debug) only."""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Callable

from pydantic import ValidationError
from pydantic_settings import SettingsError

from interlock.contracts.errors import ConfigurationError, ErrorCode, InterlockError
from interlock.projector.errors import schema_missing

CONFIGURATION_EXIT = 2
# A plugin the runtime refuses to load (invalid definition) stops every command that needs
# the installed workflows before it starts: a start-up failure like the others.
SETUP_CODES = (
    ErrorCode.CONFIGURATION,
    ErrorCode.EMBEDDED_START_FAILED,
    ErrorCode.INVALID_DEFINITION,
)


def settings_problem(exc: ValidationError | SettingsError) -> ConfigurationError:
    """The settings' validation failures as one error naming each variable."""
    if isinstance(exc, SettingsError):
        # pydantic-settings names the field ('error parsing value for field "clients" ...')
        # when a JSON variable does not parse.
        field = str(exc).split('"')[1] if '"' in str(exc) else "?"
        return ConfigurationError(
            f"INTERLOCK_{field.upper()} is not valid JSON", hint="fix or unset it"
        )
    problems = []
    for err in exc.errors():
        message = str(err["msg"]).removeprefix("Value error, ")
        if not err["loc"]:  # a check across settings names its variables itself
            problems.append(message)
            continue
        field, *inside = (str(part) for part in err["loc"])
        where = f" at {'.'.join(inside)}" if inside else ""
        problems.append(f"INTERLOCK_{field.upper()}{where}: {message}")
    return ConfigurationError("; ".join(problems), hint="fix or unset it")


def debugging() -> bool:
    return os.environ.get("INTERLOCK_LOG_LEVEL", "").upper() == "DEBUG"


def one_line(exc: BaseException) -> str | None:
    """What to print for a failure of configuration or start-up; None for any other."""
    missing = schema_missing(exc)  # a driver's error that is the setup's fault
    if missing is not None:
        exc = missing
    if isinstance(exc, InterlockError) and exc.code in SETUP_CODES:
        first, *rest = str(exc).splitlines() or [""]
        return f"{first} (more with --debug)" if rest else first
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        return (
            f"address already in use ({exc.strerror}): stop what listens there, or choose "
            "another port (INTERLOCK_GATEWAY_PORT for the gateway)"
        )
    return None


def run(app: Callable[[], None]) -> None:
    """Run the CLI; a configuration or start-up failure exits 2 with one line."""
    try:
        app()
    except KeyboardInterrupt:
        # Ctrl-C before a command set up its own handling (e.g. while the embedded stack
        # starts): the user's choice, not a failure to explain with a trace.
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except (ValidationError, SettingsError) as exc:
        _fail(settings_problem(exc), exc)
    except Exception as exc:
        if one_line(exc) is None:
            raise
        _fail(exc, exc)


def _fail(shown: BaseException, raised: BaseException) -> None:
    if debugging():
        traceback.print_exception(raised)
    print(f"error: {one_line(shown)}", file=sys.stderr)
    raise SystemExit(CONFIGURATION_EXIT)
