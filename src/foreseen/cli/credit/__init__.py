"""The ``foreseen credit`` commands: the group (``commands.py``), ``credit study`` and helpers."""
