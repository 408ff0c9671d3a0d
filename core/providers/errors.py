"""Typed provider errors, shared by chat and embedding providers.

A chain falls through to its next provider on ``TransientError``, ``ConfigurationError`` and
``TruncatedError``; ``RefusedError`` (the provider declined this input) is final for that input.
An error raised after the endpoint answered carries the tokens the answer reported, so a failed
call is charged like an answered one (``sent`` is False only for an error found before any request).
"""


class ProviderError(Exception):
    kind = "error"
    provider: str = ""  # the alias that raised it, set by the seam
    attempts: tuple = ()  # the call's attempts (core.auxiliary.Attempt), set by the seam
    param: str = ""  # UnsupportedParameter: the parameter the endpoint refused

    def __init__(self, message: str = "", *, sent: bool = True, input_tokens: int = 0, output_tokens: int = 0,
                 model: str = "", finish: str = ""):
        super().__init__(message)
        self.sent, self.input_tokens, self.output_tokens = sent, input_tokens, output_tokens
        self.model, self.finish = model, finish


class ConfigurationError(ProviderError):
    """A rejected key, an unknown model or endpoint, a width the store was not sized for."""

    kind = "configuration"


class UnsupportedParameter(ConfigurationError):
    """The endpoint refused a request parameter it does not take, even after one retry without it."""

    kind = "unsupported_parameter"


class RefusedError(ProviderError):
    """The provider refused this particular input (content policy, input too large, 400)."""

    kind = "refused"


class TransientError(ProviderError):
    """429, 5xx, a network failure or a timeout: may answer if called again."""

    kind = "transient"


class RateLimitedError(TransientError):
    kind = "rate_limited"


class TruncatedError(ProviderError):
    """The answer ended at its token budget (or spent it all on reasoning): it is not a complete answer."""

    kind = "truncated"
