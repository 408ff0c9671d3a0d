"""The post-turn learning loop: the reflect dispatcher and its workers.

``reflect_turn(turn_id)`` (the queue's entry) takes the seat's lock, re-checks the row, and runs one
pass for it and for each of the seat's other waiting turns (the drain); ``dispatcher.run_pass(ctx)``
is the pass itself (model calls first, then one transaction); ``registry`` lists the workers in order.
"""

from learning.reflection.service import reflect_turn

__all__ = ["reflect_turn"]
