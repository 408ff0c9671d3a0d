"""The post-turn workers, walked in order by the dispatcher (``learning.reflection.registry``)."""
