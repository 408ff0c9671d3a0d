"""Turn a TOML document into typed config, refusing it with every refused key path and the reason.

The types, ranges and allowed values are the pydantic tables of ``crewlet.config.schema``; this
module reads the TOML, turns pydantic's errors into sentences named by key path (with "did you
mean" for a misspelt key or value), and checks what spans tables: references between them, a
role's overrides merged over the defaults, and the local embedder's input bound.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
import tomllib
import typing
from typing import Any, NamedTuple

from pydantic import TypeAdapter, ValidationError

from crewlet.config import schema


class Problem(NamedTuple):
    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


class ConfigError(ValueError):
    """A refused config. ``path`` and ``reason`` are the first refusal; ``problems`` lists all of them."""

    def __init__(self, path: str, reason: str, problems: list[Problem] | None = None):
        self.path, self.reason = path, reason
        self.problems = problems or [Problem(path, reason)]
        super().__init__("\n".join(map(str, self.problems)))

    @classmethod
    def of(cls, problems: list[Problem]) -> ConfigError:
        return cls(problems[0].path, problems[0].reason, problems)


def parse_text(text: str) -> schema.Config:
    if not text.strip():
        # what an editor leaves between truncating a file and writing it: never "every knob at its default"
        raise ConfigError("", "the file is empty; a config states at least its company")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("", f"not valid TOML ({exc})") from None
    nul = _nul_paths(data, "")
    if nul:  # no column stores it (PostgreSQL refuses NUL in text), so nothing else is judged
        raise ConfigError.of([Problem(path, "contains a NUL character (\\u0000), which cannot be stored") for path in nul])
    config, problems = _validate(schema.Config, data, "")
    problems += _check_roles(data, config)
    problems += _check_references(data)
    problems += _check_local_input_bound(data, {p.path for p in problems})
    if problems or config is None:
        raise ConfigError.of(_unique(problems))
    return config


def _nul_paths(value, path: str) -> list[str]:
    """The key paths of every key or string value holding a NUL character."""
    if isinstance(value, dict):
        out: list[str] = []
        for key, item in value.items():
            here = f"{path}.{key}" if path else key
            out += [here.replace("\x00", "\\u0000")] if "\x00" in key else _nul_paths(item, here)
        return out
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _nul_paths(item, f"{path}[{i}]")]
    return [path] if isinstance(value, str) and "\x00" in value else []


def build(cls, data, path: str):
    """Build table ``cls`` from ``data``; every refused key is named by its path under ``path``."""
    value, problems = _validate(cls, data, path)
    if problems:
        raise ConfigError.of(problems)
    return value


@functools.cache
def _adapter(cls) -> TypeAdapter:
    return TypeAdapter(cls)


def _validate(cls, data, path: str) -> tuple[Any, list[Problem]]:
    try:
        return _adapter(cls).validate_python(data), []
    except ValidationError as exc:
        return None, [_problem(cls, path, error) for error in exc.errors(include_url=False)]


def _problem(root, path: str, error) -> Problem:
    loc = list(error["loc"])
    if loc and loc[-1] == "[key]":  # a refused key of a table is named by its own path
        loc.pop()
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    if kind == "value_error":
        reason = str(ctx.get("error", error["msg"]))
        named = re.match(r"^(\w+): (.*)$", reason, re.S)
        if named and named.group(1) in _field_names(_type_at(root, loc)):
            loc.append(named.group(1))  # a rule across a table's fields, named by the field it refuses
            reason = named.group(2)
        return Problem(_path(path, loc), reason)
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        known = _field_names(_type_at(root, loc[:-1]))
        return Problem(_path(path, loc), f"unknown key{_did_you_mean(str(loc[-1]), known)} (known: {', '.join(known)})")
    if kind in ("missing", "missing_argument", "missing_keyword_argument"):
        return Problem(_path(path, loc), "required, and missing")
    if kind == "literal_error":
        known = re.findall(r"'([^']*)'", ctx.get("expected", ""))
        hint = _did_you_mean(value, known) if isinstance(value, str) else ""
        return Problem(_path(path, loc), f"unknown value {value!r}{hint} (known: {', '.join(known)})")
    return Problem(_path(path, loc), _SENTENCES.get(kind, lambda v, c, msg: f"{msg}, got {v!r}")(value, ctx, error["msg"]))


_SENTENCES = {
    "int_type": lambda v, c, m: f"expected an integer, got {v!r}",
    "bool_type": lambda v, c, m: f"expected true or false, got {v!r}",
    "float_type": lambda v, c, m: f"expected a number, got {v!r}",
    "string_type": lambda v, c, m: f"expected a string, got {v!r}",
    "list_type": lambda v, c, m: f"expected a list, got {type(v).__name__}",
    "dict_type": lambda v, c, m: f"expected a table, got {type(v).__name__}",
    "dataclass_type": lambda v, c, m: f"expected a table, got {type(v).__name__}",
    "dataclass_exact_type": lambda v, c, m: f"expected a table, got {type(v).__name__}",
    "greater_than_equal": lambda v, c, m: f"must be at least {c['ge']}, got {v!r}",
    "less_than_equal": lambda v, c, m: f"must be at most {c['le']}, got {v!r}",
    "greater_than": lambda v, c, m: f"must be above {c['gt']}, got {v!r}",
    "less_than": lambda v, c, m: f"must be below {c['lt']}, got {v!r}",
    "string_too_long": lambda v, c, m: f"at most {c['max_length']} characters, got {len(v)}",
    "string_too_short": lambda v, c, m: "must not be empty",
    "string_pattern_mismatch": lambda v, c, m: f"only letters, digits, '-' and '_', got {v!r}",
}


def _path(prefix: str, loc) -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else str(part)
    return out


def _type_at(root, loc):
    """The declared type found at ``loc`` below table ``root`` (None where the path leaves the schema)."""
    hint = root
    for part in loc:
        if dataclasses.is_dataclass(hint):
            hint = typing.get_type_hints(hint).get(str(part))
        elif typing.get_origin(hint) is dict:
            hint = typing.get_args(hint)[1]
        elif typing.get_origin(hint) is list:
            hint = typing.get_args(hint)[0]
        else:
            return None
    return hint


def _field_names(hint) -> list[str]:
    return [f.name for f in dataclasses.fields(hint)] if dataclasses.is_dataclass(hint) else []


def _did_you_mean(word: str, known) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f", did you mean `{close[0]}`?" if close else ""


def _unique(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))


def _table(data, *keys) -> dict:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _check_roles(data: dict, config: schema.Config | None) -> list[Problem]:
    """A role's [learning] / [skills] overrides, merged over the file's tables, refused by the role's path."""
    problems = []
    for name, role in _table(data, "roles").items():
        for key, cls, base in (("learning", schema.Learning, config and config.learning),
                               ("skills", schema.Skills, config and config.skills)):
            override = _table(role, key)
            if not override:
                continue
            path = f"roles.{name}.{key}"
            if base is not None:  # merged over the file's tables: a rule across fields reads the merged values
                problems += _validate(cls, merge(dataclasses.asdict(base), override), path)[1]
            else:  # the file's tables are refused already: only what the override itself sets is judged
                own = _leaf_paths(override, path)
                problems += [p for p in _validate(cls, merge(_table(data, key), override), path)[1] if p.path in own]
    return problems


def _leaf_paths(table: dict, path: str) -> set[str]:
    out = set()
    for key, value in table.items():
        here = f"{path}.{key}"
        out |= _leaf_paths(value, here) if isinstance(value, dict) and value else {here}
    return out


def _check_references(data: dict) -> list[Problem]:
    problems = []
    units, roles, providers = _table(data, "units"), _table(data, "roles"), _table(data, "providers", "llm")
    if "providers" not in data or "llm" not in _table(data, "providers"):
        providers = {alias: None for alias in schema.Providers().llm}
    for key in units:
        parent = _table(units, key).get("parent", "")
        if isinstance(parent, str) and parent and parent not in units:
            problems.append(Problem(f"units.{key}.parent", _missing("unit", parent, units)))
    for name in roles:
        for chain in ("llm", "llm_auxiliary"):
            aliases = _table(roles, name).get(chain, [])
            for i, alias in enumerate(aliases if isinstance(aliases, list) else []):
                if isinstance(alias, str) and alias not in providers:
                    problems.append(Problem(f"roles.{name}.{chain}[{i}]",
                                            _missing("provider", alias, providers) + " in providers.llm"))
    for handle in _table(data, "seats"):
        for key, known in (("role", roles), ("unit", units)):
            value = _table(data, "seats", handle).get(key, "")
            if isinstance(value, str) and value and value not in known:
                problems.append(Problem(f"seats.{handle}.{key}", _missing(key, value, known)))
    return problems


def _missing(what: str, name: str, known) -> str:
    return f"no {what} named {name!r}{_did_you_mean(name, known)}"


def _check_local_input_bound(data: dict, refused: set[str]) -> list[Problem]:
    embeddings = _table(data, "providers", "embeddings")
    chars = embeddings.get("max_input_chars")
    path = "providers.embeddings.max_input_chars"
    if embeddings.get("kind", "local") != "local" or not isinstance(chars, int) or path in refused:
        return []
    if chars > schema.LOCAL_MAX_INPUT_CHARS:
        return [Problem(path, f"must be at most {schema.LOCAL_MAX_INPUT_CHARS} for kind 'local' (the model reads "
                              f"256 word pieces and drops the rest), got {chars}")]
    return []


def merge(base: dict, override: dict) -> dict:
    """``override`` over ``base``, table by table."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out

