"""Chat providers behind one protocol; ``build(alias, spec)`` resolves a configured alias."""

from core.providers.llm.base import Completion, Provider, build, reset_providers

__all__ = ["Completion", "Provider", "build", "reset_providers"]
