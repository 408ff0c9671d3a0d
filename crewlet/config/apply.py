"""Apply a parsed config to the org tables: company, units, roles and seats, upserted by key."""

from __future__ import annotations

from django.db import transaction

from crewlet.config import schema


def _tristate(value: bool | str) -> bool | None:
    return value if isinstance(value, bool) else None  # "inherit": the company's setting


@transaction.atomic
def apply_to_org(config: schema.Config) -> dict:
    from crewlet.models import Company, Role, Seat, Unit

    c = config.company
    company, _ = Company.objects.update_or_create(
        name=c.name,
        defaults={
            "learning_enabled": c.learning_enabled,
            "token_budget": c.token_budget or None,
            "budget_window": c.budget_window,
        },
    )
    units = {}
    for key, spec in config.units.items():
        units[key], _ = Unit.objects.update_or_create(
            company=company,
            key=key,
            defaults={
                "name": spec.name or key,
                "knowledge_container": spec.knowledge_container,
                "tracker_key": spec.tracker_key,
            },
        )
    for key, unit_spec in config.units.items():
        parent = units.get(unit_spec.parent)
        if units[key].parent_id != (parent.pk if parent else None):
            units[key].parent = parent
            units[key].save(update_fields=["parent"])
    roles = {}
    for name, role_spec in config.roles.items():
        roles[name], _ = Role.objects.update_or_create(
            company=company,
            name=name,
            defaults={
                "learning_enabled": _tristate(role_spec.learning_enabled),
                "llm": role_spec.llm,
                "llm_auxiliary": role_spec.llm_auxiliary,
                "token_budget": role_spec.token_budget or None,
                "tools": role_spec.tools,
            },
        )
    created = []
    for handle, seat_spec in config.seats.items():
        _seat, was_created = Seat.objects.update_or_create(
            handle=handle,
            defaults={
                "company": company,
                "role": roles.get(seat_spec.role),
                "unit": units.get(seat_spec.unit),
                "display_name": seat_spec.display_name or handle,
                "token_budget": seat_spec.token_budget or None,
                "active": seat_spec.active,
                "mcp_env": seat_spec.mcp_env,
            },
        )
        if was_created:
            created.append(handle)
    return {
        "company": company.name,
        "units": sorted(units),
        "roles": sorted(roles),
        "seats": sorted(config.seats),
        "seats_created": created,
    }
