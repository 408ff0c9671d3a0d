"""Events: the base class every published event derives from, the catalogue they register in, and
the events core itself publishes.

Every ``Event`` row's payload is one ``EventPayload`` subclass, written by
``core.events.publish(instance, seat=..., turn_id=...)`` and read back as an instance by
``core.events.latest`` / ``core.events.recorded``. A class forbids fields it does not declare, so a
writer cannot drift from its readers. ``NAME`` is the stored event name; ``BEST_EFFORT`` marks
telemetry, whose failed write is logged and swallowed rather than failing the path it measures;
``RETENTION`` names the family whose horizon ``core.event_retention`` sweeps it by.

Each app declares the events it publishes in its own ``events`` module; a class with a ``NAME``
enters the catalogue when it is defined, and each app's ``AppConfig.ready`` imports that module, so
core reads the whole catalogue without importing any app.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

log = logging.getLogger("core.events")

JSON = Any  # a JSON value (the payload column is JSON)

# The retention families (``core.event_retention.FAMILIES`` gives each its horizon).
Retention = Literal["auxiliary_spend", "turn_telemetry", "turn_record", "skills", "pass_reports", "audit"]
RETENTIONS: tuple[str, ...] = get_args(Retention)

_CATALOGUE: dict[str, type[EventPayload]] = {}


class EventPayload(BaseModel):
    """Base of every catalogued event; a subclass that sets ``NAME`` registers itself."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    NAME: ClassVar[str]
    RETENTION: ClassVar[Retention]
    BEST_EFFORT: ClassVar[bool] = True  # telemetry unless a class says otherwise

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "NAME" in cls.__dict__:
            _register(cls)


def _register(cls: type[EventPayload]) -> None:
    if getattr(cls, "RETENTION", None) not in RETENTIONS:
        raise TypeError(f"event {cls.NAME!r} ({cls.__qualname__}) names no retention family of {RETENTIONS}")
    known = _CATALOGUE.get(cls.NAME)
    if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
        raise TypeError(f"two events are named {cls.NAME!r}: {known.__module__}.{known.__qualname__} and "
                        f"{cls.__module__}.{cls.__qualname__}")
    _CATALOGUE[cls.NAME] = cls


def catalogue() -> tuple[type[EventPayload], ...]:
    """Every registered event class (each installed app's, once its ``ready`` has run)."""
    return tuple(_CATALOGUE.values())


E = TypeVar("E", bound=EventPayload)


class AuxiliarySpend(EventPayload):
    NAME = "auxiliary_spend"
    RETENTION = "auxiliary_spend"

    stage: str
    purpose: str
    provider: str
    model: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    outcome: str = ""  # answered | unparseable | rejected | truncated | refused | transient | configuration | ...
    finish: str = ""
    reason: str = ""  # a failed attempt's reason: the error, or what the purpose's check found in the answer


class AdminAction(EventPayload):
    """A person's change through the admin or a lead's page, naming them. ``detail``: what the action needs."""

    NAME = "admin_action"
    RETENTION = "audit"
    BEST_EFFORT = False

    user: str
    action: str
    object: str  # "<app>.<model>:<pk>"
    detail: dict[str, JSON] = Field(default_factory=dict)


def load(cls: type[E], payload) -> E | None:
    """A stored payload as ``cls``; None (logged) if it cannot be read."""
    data = payload if isinstance(payload, dict) else {}
    known = {k: v for k, v in data.items() if k in cls.model_fields}
    try:
        return cls.model_validate(known)
    except ValidationError as exc:
        log.warning("a stored %s event could not be read: %s", cls.NAME, exc)
        return None
