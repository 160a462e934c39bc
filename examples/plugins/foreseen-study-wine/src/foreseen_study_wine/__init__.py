"""The wine study: a foreseen study plugin (entry point ``foreseen.studies``)."""
