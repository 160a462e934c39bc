"""HTTP model APIs: Anthropic Messages and OpenAI-compatible chat completions.

Shared options, key handling, the reused client, rate limits and pricing.
Import rule: ``foreseen.core`` and ``credit.backends.base``.
"""
