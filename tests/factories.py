"""factory_boy factories for org and memory rows."""

import factory
from django.utils import timezone

from crewlet.models import ApiToken, Company, Role, Seat, Unit


class CompanyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Company
        django_get_or_create = ("name",)

    name = "Acme"


class UnitFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Unit

    company = factory.SubFactory(CompanyFactory)
    key = factory.Sequence(lambda n: f"unit{n}")
    name = factory.LazyAttribute(lambda o: o.key.title())
    knowledge_container = factory.LazyAttribute(lambda o: o.key.upper())


class RoleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Role

    company = factory.SubFactory(CompanyFactory)
    name = factory.Sequence(lambda n: f"role{n}")
    llm = factory.LazyFunction(lambda: ["offline"])
    llm_auxiliary = factory.LazyFunction(lambda: ["offline"])


class SeatFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Seat

    company = factory.SubFactory(CompanyFactory)
    handle = factory.Sequence(lambda n: f"agent{n}")
    role = factory.SubFactory(RoleFactory, company=factory.SelfAttribute("..company"))
    unit = factory.SubFactory(UnitFactory, company=factory.SelfAttribute("..company"))


def token_for(seat) -> str:
    _token, raw = ApiToken.issue(company=seat.company, seat=seat)
    return raw


def operator_token(company) -> str:
    _token, raw = ApiToken.issue(company=company, kind=ApiToken.OPERATOR)
    return raw


def now():
    return timezone.now()
