"""The MCP server: the agent builtins and the turn-start prefetch for one seat, over stdio or HTTP.

A thin adapter on the official ``mcp`` SDK's low-level ``Server``: it lists ``tools.definitions``
in the MCP shape and hands each call to ``tools.run`` (or ``prefetch``), exactly as the ninja
routes do; nothing about a tool is defined twice.
"""

from learning.tools.mcp.server import PREFETCH_TOOL, build_server

__all__ = ["PREFETCH_TOOL", "build_server"]
