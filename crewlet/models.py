"""The organisation: company, units, roles, seats, their API tokens and applied config revisions."""

import hashlib
import secrets

from django.conf import settings
from django.db import models


class Company(models.Model):
    name = models.CharField(max_length=200, unique=True)
    learning_enabled = models.BooleanField(default=True)
    token_budget = models.BigIntegerField(null=True, blank=True, help_text="Tokens per window; empty = no ceiling")
    budget_window = models.CharField(max_length=10, default="day", choices=[("day", "day"), ("month", "month")])

    class Meta:
        verbose_name_plural = "companies"

    def __str__(self):
        return self.name


class Unit(models.Model):
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="units")
    key = models.SlugField(max_length=100)
    name = models.CharField(max_length=200)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children")
    knowledge_container = models.CharField(
        max_length=100, blank=True, help_text="The unit's knowledge-base space (its wiki container key)."
    )
    tracker_key = models.CharField(max_length=100, blank=True, help_text="The unit's tracker project key.")

    class Meta:
        unique_together = [("company", "key")]

    def __str__(self):
        return self.key

    def chain(self) -> list["Unit"]:
        """This unit and its ancestors, nearest first."""
        seen: set[int] = set()
        out: list[Unit] = []
        unit: Unit | None = self
        while unit is not None and unit.pk not in seen:
            seen.add(unit.pk)
            out.append(unit)
            unit = unit.parent
        return out


class Role(models.Model):
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="roles")
    name = models.CharField(max_length=100)
    learning_enabled = models.BooleanField(null=True, blank=True, help_text="Empty inherits the company setting.")
    llm = models.JSONField(default=list, blank=True, help_text="Provider aliases, tried in order.")
    llm_auxiliary = models.JSONField(default=list, blank=True, help_text="Auxiliary provider aliases, in order.")
    token_budget = models.BigIntegerField(null=True, blank=True)
    tools = models.JSONField(default=list, blank=True, help_text="Tool names registered for the role.")

    class Meta:
        unique_together = [("company", "name")]

    def __str__(self):
        return self.name

    @property
    def learns(self) -> bool:
        return self.company.learning_enabled if self.learning_enabled is None else self.learning_enabled


class Seat(models.Model):
    """An agent: one handle, one role, one unit."""

    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="seats")
    handle = models.SlugField(max_length=100, unique=True)
    display_name = models.CharField(max_length=200, blank=True)
    role = models.ForeignKey(Role, null=True, blank=True, on_delete=models.SET_NULL, related_name="seats")
    unit = models.ForeignKey(Unit, null=True, blank=True, on_delete=models.SET_NULL, related_name="seats")
    token_budget = models.BigIntegerField(null=True, blank=True)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    mcp_env = models.JSONField(default=dict, blank=True, help_text="Names of env vars holding the seat's own credentials.")

    def __str__(self):
        return self.handle


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    SEAT = "seat"
    OPERATOR = "operator"
    KINDS = [(SEAT, "seat"), (OPERATOR, "operator")]

    kind = models.CharField(max_length=10, choices=KINDS, default=SEAT)
    seat = models.ForeignKey(Seat, null=True, blank=True, on_delete=models.CASCADE, related_name="tokens")
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="tokens")
    prefix = models.CharField(max_length=12)
    token_hash = models.CharField(max_length=64, unique=True)
    label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Refused from this moment; empty = never.")
    last_used_at = models.DateTimeField(null=True, blank=True, help_text="When it last authenticated a request "
                                        "(kept to the minute).")

    def __str__(self):
        return f"{self.kind}:{self.prefix}…"

    @property
    def own_seat(self) -> Seat | None:
        """The seat a seat token acts as (None for an operator token)."""
        return self.seat if self.kind == self.SEAT else None

    @classmethod
    def issue(cls, *, company: Company, kind: str = SEAT, seat: Seat | None = None, label: str = "") -> tuple["ApiToken", str]:
        """Create a token; the raw value is returned once and only its hash is stored."""
        raw = f"crw_{secrets.token_urlsafe(32)}"
        token = cls.objects.create(
            kind=kind, seat=seat, company=company, prefix=raw[:12], token_hash=hash_token(raw), label=label
        )
        return token, raw


class ConfigRevision(models.Model):
    sha256 = models.CharField(max_length=64)
    path = models.CharField(max_length=500)
    applied_at = models.DateTimeField(auto_now_add=True)
    content = models.TextField()
    summary = models.JSONField(default=dict)
    # who applied it: the signed-in user of the admin's editor, and how (the editor, or the command and OS user)
    applied_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    applied_via = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-applied_at", "-id"]

    def __str__(self):
        return f"{self.sha256[:12]} @ {self.applied_at:%Y-%m-%d %H:%M}"

