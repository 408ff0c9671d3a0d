"""The knowledge demo step ends with a draft waiting for review and a lead who may publish it."""

from __future__ import annotations

import io

from django.contrib.auth.models import User

from demo import knowledge as step
from demo.state import DemoContext
from knowledge.models import Page
from tests.factories import SeatFactory, UnitFactory


class _Style:
    def __getattr__(self, name):
        return lambda text: text


def test_the_demo_step_leaves_a_promoted_draft_and_a_lead_login(company, role, serve_native):
    platform = UnitFactory(company=company, key="platform", name="Platform team", knowledge_container="PLAT")
    for handle in ("ana", "bo", "cy"):
        SeatFactory(company=company, role=role, unit=platform, handle=handle)
    serve_native(scope=["ENG", "OPS"])
    out = io.StringIO()

    step.run(DemoContext(out=out, style=_Style()))
    step.run(DemoContext(out=io.StringIO(), style=_Style()))  # a second run changes nothing

    (draft,) = Page.objects.filter(state=Page.DRAFT)
    assert draft.container_key == "PLAT" and draft.source["seats"] == ["ana", "bo", "cy"]
    lead = User.objects.get(username="lead")
    assert lead.is_staff and lead.check_password("lead-demo")
    assert lead.has_perm("knowledge.publish_page") and lead.has_perm("knowledge.change_page")
    text = out.getvalue()
    assert "http://127.0.0.1:8000/admin/" in text and "lead / lead-demo" in text
    assert "Deploy runbook" in text and draft.title in text
    # the scope reads ENG and OPS, not PLAT, where the draft lands: the demo says so rather than promise
    assert "no agent can find it yet: PLAT is not in any seat's read scope" in text
