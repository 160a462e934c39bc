"""``python -m foreseen``."""

from foreseen.cli.app import main

main()
