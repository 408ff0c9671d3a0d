"""The config a process is serving: re-read when the file's content changes, kept on a bad edit.

``current()`` is cheap (one ``stat``); a changed file is parsed, applied to the org tables and
recorded as a ``ConfigRevision``. An invalid file is refused with the key path and the reason, and
the previous revision keeps serving. Tests install a config directly with ``use()``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crewlet.config import schema
from crewlet.config.parse import ConfigError, build, merge, parse_text

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("crewlet.config")


@dataclass
class _State:
    config: schema.Config
    sha256: str = ""
    path: str = ""
    mtime_ns: int = -1
    size: int = -1
    last_error: str = ""
    pinned: bool = False  # set by use(): the file is not consulted


_lock = threading.Lock()
_state = _State(config=schema.Config())
_listeners: list = []


def config_path() -> str:
    from django.conf import settings

    return settings.CREWLET_CONFIG_PATH


def current() -> schema.Config:
    """The config in force, re-reading the file first if its content changed."""
    if not _state.pinned:
        _maybe_reload()
    return _state.config


def revision() -> str:
    current()
    return _state.sha256


def last_error() -> str:
    return _state.last_error


def on_apply(callback) -> None:
    """Register ``callback(old, new)`` to run after a new revision is taken (e.g. to reschedule loops)."""
    _listeners.append(callback)


def use(config: schema.Config | None) -> None:
    """Serve ``config`` regardless of the file (tests, the demo); ``None`` returns to the file."""
    with _lock:
        old = _state.config
        if config is None:
            _state.pinned, _state.mtime_ns, _state.sha256 = False, -1, ""
            _state.config = schema.Config()
        else:
            _state.pinned = True
            _state.config = config
            _state.sha256 = hashlib.sha256(repr(config).encode()).hexdigest()
        new = _state.config
    _knobs_cache.clear()
    _notify(old, new)


def apply_text(text: str, *, path: str = "<text>") -> schema.Config:
    """Parse, apply to the org tables and record a revision; raises ``ConfigError`` and keeps the old one."""
    from crewlet.config.apply import apply_to_org

    config = parse_text(text)
    sha = hashlib.sha256(text.encode()).hexdigest()
    summary = apply_to_org(config)
    from crewlet.models import ConfigRevision

    ConfigRevision.objects.create(sha256=sha, path=path, content=text, summary=summary)
    with _lock:
        old = _state.config
        _state.config, _state.sha256, _state.path, _state.last_error = config, sha, path, ""
    _knobs_cache.clear()
    _notify(old, config)
    return config


_reload_lock = threading.Lock()  # one reload at a time per process (threaded servers)


def _maybe_reload() -> None:
    path = config_path()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    if st.st_mtime_ns == _state.mtime_ns and st.st_size == _state.size and path == _state.path:
        return
    with _reload_lock:
        if st.st_mtime_ns == _state.mtime_ns and st.st_size == _state.size and path == _state.path:
            return  # another thread reloaded it while this one waited
        with open(path, "rb") as fh:
            raw = fh.read()
        # recorded before anything can be refused: a bad file is reported once, not re-read per request
        _state.mtime_ns, _state.size = st.st_mtime_ns, st.st_size
        sha = hashlib.sha256(raw).hexdigest()
        if sha == _state.sha256:
            return
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ConfigError("", f"not UTF-8 text (byte {exc.start}: {raw[exc.start:exc.start + 1]!r})") from None
            apply_text(text, path=path)
            log.info("config %s applied (revision %s)", path, sha[:12])
        except ConfigError as exc:
            _state.last_error = str(exc)
            _state.path = path
            log.error("config %s refused, previous revision keeps serving: %s", path, exc)


def _notify(old, new):
    for callback in list(_listeners):
        try:
            callback(old, new)
        except Exception:  # a listener never blocks an apply
            log.exception("config listener failed")


@dataclass(frozen=True)
class Knobs:
    """The knobs in force for one role: [learning] and [skills] with the role's overrides merged."""

    learning: schema.Learning
    skills: schema.Skills


_knobs_cache: dict[str, Knobs] = {}


def knobs(role_name: str | None = None) -> Knobs:
    config = current()
    key = role_name or ""
    cached = _knobs_cache.get(key)
    if cached is not None:
        return cached
    role = config.roles.get(role_name or "")
    if role is None:
        result = Knobs(learning=config.learning, skills=config.skills)
    else:
        result = Knobs(
            learning=build(schema.Learning, merge(dataclasses.asdict(config.learning), role.learning), "learning"),
            skills=build(schema.Skills, merge(dataclasses.asdict(config.skills), role.skills), "skills"),
        )
    _knobs_cache[key] = result
    return result


def knobs_for_seat(seat: Seat) -> Knobs:
    role = seat.role
    return knobs(role.name if role is not None else None)
