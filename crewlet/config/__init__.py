"""crewlet.toml: typed config, validation by key path, hot reload. Public surface below."""

from crewlet.config.parse import ConfigError, Problem, parse_text
from crewlet.config.runtime import (
    Knobs,
    apply_text,
    current,
    knobs,
    knobs_for_seat,
    last_error,
    on_apply,
    revision,
    use,
)

__all__ = [
    "ConfigError",
    "Knobs",
    "Problem",
    "apply_text",
    "current",
    "knobs",
    "knobs_for_seat",
    "last_error",
    "on_apply",
    "parse_text",
    "revision",
    "use",
]
