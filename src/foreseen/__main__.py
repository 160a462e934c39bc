"""``python -m foreseen``."""

from foreseen.cli.entry import main

main()
