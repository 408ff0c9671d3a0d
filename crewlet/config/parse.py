"""Turn a TOML document into typed config, refusing it with the key path and the reason."""

from __future__ import annotations

import dataclasses
import tomllib
import typing

from crewlet.config import schema


class ConfigError(ValueError):
    def __init__(self, path: str, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}" if path else reason)


def parse_text(text: str) -> schema.Config:
    if not text.strip():
        # what an editor leaves between truncating a file and writing it: never "every knob at its default"
        raise ConfigError("", "the file is empty; a config states at least its company")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("", f"not valid TOML ({exc})") from None
    config = build(schema.Config, data, "")
    _check_references(config)
    return config


def build(cls, data, path: str):
    """Build dataclass ``cls`` from ``data``; unknown keys and wrong types are refused by path."""
    if not isinstance(data, dict):
        raise ConfigError(path, f"expected a table, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in names:
            raise ConfigError(_join(path, key), f"unknown key (known: {', '.join(sorted(names))})")
    values = {key: _coerce(hints[key], value, _join(path, key)) for key, value in data.items()}
    return cls(**values)


def _coerce(hint, value, path):
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        known = typing.get_args(hint)
        if value not in known:
            raise ConfigError(path, f"unknown value {value!r} (known: {', '.join(map(str, known))})")
        return value
    if dataclasses.is_dataclass(hint):
        return build(hint, value, path)
    if origin is dict:
        _, value_type = typing.get_args(hint)
        if not isinstance(value, dict):
            raise ConfigError(path, f"expected a table, got {type(value).__name__}")
        return {k: _coerce(value_type, v, _join(path, k)) for k, v in value.items()}
    if origin is list:
        (item_type,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ConfigError(path, f"expected a list, got {type(value).__name__}")
        return [_coerce(item_type, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if hint is dict:
        if not isinstance(value, dict):
            raise ConfigError(path, f"expected a table, got {type(value).__name__}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(path, f"expected true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(path, f"expected an integer, got {value!r}")
        if value < 0:
            raise ConfigError(path, f"must not be negative, got {value}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(path, f"expected a number, got {value!r}")
        if not 0 <= value <= 1e9:
            raise ConfigError(path, f"out of range: {value}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(path, f"expected a string, got {value!r}")
        return value
    raise ConfigError(path, f"unsupported type {hint}")  # pragma: no cover


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


def _check_references(config: schema.Config) -> None:
    for key, unit in config.units.items():
        if unit.parent and unit.parent not in config.units:
            raise ConfigError(f"units.{key}.parent", f"no unit named {unit.parent!r}")
    for name, role in config.roles.items():
        for chain in ("llm", "llm_auxiliary"):
            for i, alias in enumerate(getattr(role, chain)):
                if alias not in config.providers.llm:
                    raise ConfigError(f"roles.{name}.{chain}[{i}]", f"no provider named {alias!r} in providers.llm")
        try:
            build(schema.Learning, _merge(dataclasses.asdict(config.learning), role.learning), f"roles.{name}.learning")
            build(schema.Skills, _merge(dataclasses.asdict(config.skills), role.skills), f"roles.{name}.skills")
        except ConfigError:
            raise
    for handle, seat in config.seats.items():
        if seat.role and seat.role not in config.roles:
            raise ConfigError(f"seats.{handle}.role", f"no role named {seat.role!r}")
        if seat.unit and seat.unit not in config.units:
            raise ConfigError(f"seats.{handle}.unit", f"no unit named {seat.unit!r}")


def _merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out
