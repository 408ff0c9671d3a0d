"""Queue entry points: thin, ids only; each looks its rows up and calls one service."""

from __future__ import annotations


def reflect_turn(turn_id: int) -> dict:
    from learning.reflection import reflect_turn as reflect

    return reflect(turn_id)
