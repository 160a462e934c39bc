"""The errors foreseen reports to its user, as a small typed hierarchy.

Every such error is a :class:`ForeseenError`; the command line
(:mod:`foreseen.cli.app`, the one boundary that maps errors to exit codes)
prints its message as one line on standard error and exits with its
``exit_code`` (the table is ``docs/errors.md``). Two branches:

* :class:`UserInputError` (exit code 2) — a problem with what the user gave;
* :class:`RunHalted` (exit code 3) — no one's mistake: the service a paid run
  calls stopped answering; resume later.

The subclasses of :class:`UserInputError` say *what kind* of problem it was, so
a test or a notebook can assert "tampering was detected" rather than "the user
did something wrong":

* :class:`SourceError` — an input file or folder cannot be read as what it
  claims to be (a matrix, a mirror, a study folder, a cache entry);
* :class:`ConfigError` — an option, a run configuration or a plan setting is
  invalid (a negative replicate count, an unknown backend name, a gate
  without conditions);
* :class:`IntegrityError` — something frozen was changed: a tampered ledger,
  plan or prompt, or an outcome file that fails its commitment;
* :class:`MissingExtraError` — an optional dependency is not installed; the
  message names the extra that provides it.

:class:`RunHalted` is not a mistake of the user's, so it is not a
:class:`UserInputError`: a paid run stopped because the service it calls
stopped answering (a circuit breaker, a probe with no answer, a budget
reached). It exits with its own code (3) so a script can tell "resume later"
from "fix your input".

:class:`RequestRejected` is a :class:`ConfigError` a model server reported: it
answered that the request itself is wrong (HTTP 400/404/422, an unsupported
output mode, a model it does not serve). Resuming cannot help until the
configuration changes, so it has its own code (4), distinct from an outage.
"""

from __future__ import annotations


class ForeseenError(Exception):
    """An error foreseen reports to its user: one clear line and an exit code."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


class UserInputError(ForeseenError):
    """A problem with the user's input; the message is one clear line."""


class SourceError(UserInputError):
    """An input file or folder cannot be read as what it claims to be."""


class ConfigError(UserInputError):
    """An option, a run configuration or a frozen setting is invalid."""


class IntegrityError(UserInputError):
    """Something frozen was changed: a ledger, a plan, a prompt or a committed outcome file."""


class MissingExtraError(UserInputError):
    """An optional dependency is needed; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"this needs the optional package {package!r}: "
            f"pip install 'foreseen[{extra}]'"
        )


class RunHalted(ForeseenError):
    """A run stopped on an outage; nothing was spent on the halted slots. Resume it later."""

    exit_code = 3


class RequestRejected(ConfigError):
    """A model server answered that the request is wrong; the message quotes the server.

    ``status`` is the HTTP status (None for a backend without one). Nothing was
    recorded as a fallback or as halted: fix the configuration and run again.
    """

    exit_code = 4

    def __init__(self, message: str, *, status: int | None = None,
                 server_message: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.server_message = server_message
