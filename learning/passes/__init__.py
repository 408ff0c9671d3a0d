"""Background passes driven by a clock rather than a turn."""
