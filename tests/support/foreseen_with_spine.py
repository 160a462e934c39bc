"""``python -m support.foreseen_with_spine …``: the CLI with the spine test registrations."""

from __future__ import annotations

from foreseen.cli.app import main

import support.spine  # noqa: F401  (registers the test renderer and backend)

if __name__ == "__main__":
    main()
