"""Team coverage of coding agents: the E046 protocol and what lies beyond it."""
