"""Errors a user can cause.

Every error a user can cause (a bad file, a wrong split name, a tampered plan)
is raised as :class:`UserInputError`; the command line prints its message as
one line on standard error and exits with code 2.
"""

from __future__ import annotations


class UserInputError(Exception):
    """A problem with the user's input; the message is one clear line."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


class MissingExtraError(UserInputError):
    """An optional dependency is needed; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"this needs the optional package {package!r}: "
            f"pip install 'foreseen[{extra}]'"
        )
