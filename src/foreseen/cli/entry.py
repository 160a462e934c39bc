"""The ``foreseen`` executable's entry point: answers ``--version`` without loading the app.

Everything else goes to :func:`foreseen.cli.app.main`, the one composition root.
"""

from __future__ import annotations

import sys

from foreseen.version import __version__


def main() -> None:
    """Print the version for ``foreseen --version`` at once; else run the command line."""
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"{__version__}\n")
        return
    from foreseen.cli.app import main as run

    run()
