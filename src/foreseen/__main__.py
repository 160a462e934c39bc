"""``python -m foreseen``."""

from foreseen.cli import main

main()
