"""Typed provider errors, shared by chat and embedding providers.

A chain falls through to its next provider on ``TransientError`` and ``ConfigurationError``;
``RefusedError`` (the provider declined this input) is final for that input.
"""


class ProviderError(Exception):
    kind = "error"


class ConfigurationError(ProviderError):
    """A rejected key, an unknown model or endpoint, a width the store was not sized for."""

    kind = "configuration"


class RefusedError(ProviderError):
    """The provider refused this particular input (content policy, input too large, 400)."""

    kind = "refused"


class TransientError(ProviderError):
    """429, 5xx, a network failure or a timeout: may answer if called again."""

    kind = "transient"


class RateLimitedError(TransientError):
    kind = "rate_limited"
