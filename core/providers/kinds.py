"""What a config may name of the providers: the kinds each seam resolves, and the packaged embedder's bound.

``core.providers.llm.base.KINDS`` and ``core.providers.embeddings.base.KINDS`` are keyed by these
types, and ``crewlet.config.schema`` reads them for its tables. The module imports nothing of
Django's, so the config's schema loads while the apps are still loading.
"""

from typing import Literal

LlmKind = Literal["openai_compat", "anthropic", "offline", "scripted"]  # providers.llm.<alias>.kind
EmbeddingKind = Literal["local", "openai_compat", "hashing", "none"]  # providers.embeddings.kind; none builds none

# The longest text the packaged model is given whole (longer ones are split between words and pooled):
# what it reads without cutting, as core.providers.embeddings.local says.
LOCAL_MAX_INPUT_CHARS = 600
