"""The ``foreseen teams`` commands: the group (``commands.py``) and one module per command."""
