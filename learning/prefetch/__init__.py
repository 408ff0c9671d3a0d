"""The turn-start prefetch: the blocks, the thin-trigger gate, the summary and tool-skill guidance.

``prefetch(seat=, request=)`` is the public entry; ``PrefetchRequest`` is what a turn start hands it.
"""

from learning.prefetch.assemble import BLOCKS, prefetch
from learning.prefetch.gate import thin_trigger
from learning.prefetch.request import PrefetchRequest, Thread, ThreadMessage

__all__ = ["BLOCKS", "PrefetchRequest", "Thread", "ThreadMessage", "prefetch", "thin_trigger"]
