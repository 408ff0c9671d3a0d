"""The thin-trigger gate: pure logic on the trigger's own flag, no model call.

The three relevance prefetches (personal memory, relevant knowledge, similar prior work) skip
their embedding and auxiliary calls when the trigger is a pointer (``requires_recon``, the
notification builder's answer) or carries no ask at all; thread, ledger and profiles are not gated.
"""

from __future__ import annotations

from learning.prefetch.request import PrefetchRequest


def requires_recon(request: PrefetchRequest) -> bool:
    """The builder's flag as the trigger carries it; an empty ask does not set it."""
    return bool(request.requires_recon)


def thin_trigger(request: PrefetchRequest) -> bool:
    """True when there is nothing substantive to judge relevance against."""
    return requires_recon(request) or not request.ask.strip()
