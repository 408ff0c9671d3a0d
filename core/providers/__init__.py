"""Model providers: chat completions (``llm``) and embeddings (``embeddings``)."""
