"""The credit instrument's HTML page and the run folder it reads."""
