"""The demo step: fixture turns for three seats through the API, and what each learned, printed."""

from io import StringIO

import pytest
from django.core.management.color import no_style

from demo import reflection
from demo.state import DemoContext
from learning.models import CounterpartyProfile, DiaryEntry, Episode, SynthesizedSkill, Turn
from learning.review.pages import gates
from tests.factories import SeatFactory


class _Out(StringIO):
    def write(self, text="", *args, **kwargs):
        return super().write(str(text) + "\n")


@pytest.mark.django_db(transaction=True)
def test_the_fixtures_teach_each_seat_what_the_issue_promises(company, role, unit):
    for handle in ("ana", "bo", "cy"):
        SeatFactory(company=company, role=role, unit=unit, handle=handle)
    out = _Out()
    reflection.run(DemoContext(out=out, style=no_style()))
    text = out.getvalue()

    records = reflection.load_fixtures()
    assert Turn.objects.count() == len(records) and not Turn.objects.filter(reflected_at__isnull=True).exists()
    assert f"posted {len(records) + 1} record(s): 1 answered 200, {len(records)} answered 202" in text
    notes = dict(DiaryEntry.objects.filter(seat__handle="ana").values_list("kind", "content"))
    assert notes["diary_long"] == "Maya prefers short bullet-point status updates over long paragraphs."
    assert notes["diary_short"].startswith("Maya is on vacation through ")
    skill = SynthesizedSkill.objects.get(seat__handle="bo")
    assert skill.name == "create-release-branch" and skill.version == 4
    assert "Observed in practice:" in skill.body and "Counter-example:" in skill.body and "Priya corrected" in skill.body
    assert set(CounterpartyProfile.objects.filter(observer__handle="cy").values_list("subject_handle", flat=True)) == {"tom", "maya"}
    assert Episode.objects.filter(task_summary="ana was assigned scheduled work weekly-report").exists()
    for gate in ("no_engagement", "unsettled", "self_persisted", "internal_trigger", "scheduled_conversation", "cooldown",
                 "duplicate_skill", "no_human_senders", "no_offered_skills"):
        assert gates.why(gate) in text, gate  # each stop in plain words, never by its gate's name
        assert gate not in text, gate
    assert "skill use: no skill was offered this turn" in text
    assert "FAILED" not in text
