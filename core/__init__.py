"""Shared infrastructure below the ``learning`` and ``knowledge`` apps.

Events, vectors, the model providers and embedders, budgets and the auxiliary seam. Nothing here
imports ``learning`` or ``knowledge``: both build on it.
"""
