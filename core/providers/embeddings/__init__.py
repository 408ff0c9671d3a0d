"""Embedders behind one protocol, and the budgeted, split-and-pool ``embed`` every caller uses."""

from core.providers.embeddings.base import (
    Embedder,
    EmbedResult,
    PendingEmbed,
    begin_embed_one,
    embed_many,
    embed_one,
    embed_one_beside,
    get_embedder,
    reset_embedder,
)

__all__ = ["EmbedResult", "Embedder", "PendingEmbed", "begin_embed_one", "embed_many", "embed_one", "embed_one_beside", "get_embedder", "reset_embedder"]
