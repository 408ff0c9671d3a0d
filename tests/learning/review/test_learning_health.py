"""The learning_health view's numbers, the Berlot-Attwell reading, and the event charts."""

import io
import re
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from core import events
from core.models import Event
from learning.events import BlockOutcome, PersistDeciderCompleted, PrefetchSummary
from learning.models import LearningHealth, SynthesizedSkill
from learning.prefetch import PrefetchRequest, prefetch
from learning.prefetch.similar_work import RECALL_OUTCOMES
from learning.review import health
from tests.factories import SeatFactory
from tests.review_fixtures import make_skill

pytestmark = pytest.mark.django_db


def skill_with(seat, name, *, uses, age_days, last_used_days_ago=None):
    skill = make_skill(seat, name=name, bodies=("# body",))
    now = timezone.now()
    SynthesizedSkill.objects.filter(pk=skill.pk).update(
        use_count=uses,
        created_at=now - timedelta(days=age_days),
        last_used_at=None if last_used_days_ago is None else now - timedelta(days=last_used_days_ago),
    )
    return skill


def test_the_view_rolls_up_each_seat_on_this_engine(seat, other_seat):
    skill_with(seat, "a", uses=0, age_days=10)
    skill_with(seat, "b", uses=2, age_days=20, last_used_days_ago=3)
    skill_with(seat, "c", uses=4, age_days=30, last_used_days_ago=1)
    skill_with(seat, "archived", uses=0, age_days=40)
    SynthesizedSkill.objects.filter(name="archived").update(state=SynthesizedSkill.ARCHIVED)

    row = LearningHealth.objects.get(seat=seat)

    assert row.total_skills == 4  # archived rows count: trimming the library must not inflate reuse
    assert row.skills_used_at_least_once == 2
    assert row.total_skill_uses == 6
    assert row.avg_uses_per_skill == pytest.approx(1.5)
    assert row.avg_skill_age_days == pytest.approx(25.0, abs=0.01)
    newest = SynthesizedSkill.objects.get(name="c").last_used_at
    assert abs((row.most_recent_skill_use - newest).total_seconds()) < 0.001
    assert not LearningHealth.objects.filter(seat=other_seat).exists()  # no skills: unknown, not zero


def test_a_seat_whose_skills_were_never_used_has_no_last_use_and_zero_average(seat):
    skill_with(seat, "a", uses=0, age_days=2)

    row = LearningHealth.objects.get(seat=seat)

    assert row.most_recent_skill_use is None
    assert row.total_skill_uses == 0 and row.avg_uses_per_skill == 0.0


def test_below_the_threshold_is_flagged_only_once_the_seat_is_old_enough(company, unit, role):
    old = SeatFactory(company=company, unit=unit, role=role, handle="old")
    young = SeatFactory(company=company, unit=unit, role=role, handle="young")
    busy = SeatFactory(company=company, unit=unit, role=role, handle="busy")
    SeatFactory(company=company, unit=unit, role=role, handle="empty")
    for i in range(20):
        skill_with(old, f"o{i}", uses=1 if i == 0 else 0, age_days=60)  # 0.05 uses per skill
    skill_with(young, "y", uses=0, age_days=3)
    skill_with(busy, "b", uses=1, age_days=60)  # exactly 1.0

    verdicts = {h.seat.handle: h.verdict for h in health.seat_health()}

    assert verdicts == {"old": health.BELOW_THRESHOLD, "young": health.YOUNG, "busy": health.HEALTHY, "empty": health.NO_SKILLS}
    assert health.seat_health()[0].seat.handle == "old"  # flagged first


def test_exactly_at_the_threshold_is_not_flagged(seat):
    for i in range(10):
        skill_with(seat, f"s{i}", uses=1 if i == 0 else 0, age_days=90)  # 0.1 exactly

    assert health.verdict(LearningHealth.objects.get(seat=seat)) == health.HEALTHY


def summary(seat, **blocks):
    return events.publish(PrefetchSummary(blocks={name: BlockOutcome(hit=hit) for name, hit in blocks.items()}), seat=seat)


def test_the_rates_count_hits_bytes_and_blocks_listed_without_a_hit(seat):
    def written(**blocks):
        events.publish(PrefetchSummary(blocks={name: BlockOutcome(hit=hit, bytes=size) for name, (hit, size) in blocks.items()}),
                       seat=seat)

    written(personal_memory=(True, 300), relevant_knowledge=(False, 0))
    written(personal_memory=(False, None), relevant_knowledge=(True, 1000))
    written(personal_memory=(None, None), similar_prior_work=(None, None))

    turns, rates = health.prefetch_hit_rates(since=timezone.now() - timedelta(days=1))

    by_block = {r.block: r for r in rates}
    assert turns == 3
    assert (by_block["personal_memory"].hits, by_block["personal_memory"].observed) == (1, 2)
    assert by_block["personal_memory"].unrecorded == 1
    assert by_block["personal_memory"].avg_bytes == 300
    assert by_block["relevant_knowledge"].rate == 0.5 and by_block["relevant_knowledge"].avg_bytes == 500
    assert by_block["similar_prior_work"].rate is None  # listed but never recorded: unknown, not 0%
    # no recall outcome recorded: unrecorded, never "no past turn matched"
    assert dict(health.similar_work_recall(since=timezone.now() - timedelta(days=1))) == {
        **{outcome: 0 for outcome in RECALL_OUTCOMES}, health.UNRECORDED: 3}


def test_the_rates_are_read_from_a_real_prefetch(seat):
    """The summary the prefetch writes (a dict of blocks) is the one the health page reads."""
    result = prefetch(seat=seat, request=PrefetchRequest(run_id="run-h1", ask="fix the deploy script"))

    turns, rates = health.prefetch_hit_rates(since=timezone.now() - timedelta(days=1), seat=seat)

    shown = {b["name"]: b["hit"] for b in result["blocks"]}
    assert turns == 1 and len(shown) >= 5
    assert {r.block: r.rate for r in rates} == {name: float(hit) for name, hit in shown.items()}
    assert all(r.unrecorded == 0 for r in rates)


def test_the_window_and_the_seat_narrow_the_event_charts(seat, other_seat):
    old = summary(seat, m=True)
    Event.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=10))
    summary(seat, m=False)
    summary(other_seat, m=True)
    for tier in ("LONG", "long", "NOOP", ""):
        events.publish(PersistDeciderCompleted(classification=tier), seat=seat)
    events.publish(PersistDeciderCompleted(classification="DOC"), seat=other_seat)

    since = timezone.now() - timedelta(days=7)
    turns, rates = health.prefetch_hit_rates(since=since, seat=seat)
    assert turns == 1 and rates[0].rate == 0.0
    assert health.tier_distribution(since=since, seat=seat) == [
        ("LONG", 2), ("SHORT", 0), ("DOC", 0), ("NOOP", 1), ("unrecorded", 1)
    ]
    assert dict(health.tier_distribution(since=since))["DOC"] == 1


def test_the_dashboard_flags_the_seat_and_draws_the_charts(client, lead, seat, other_seat):
    for i in range(20):
        skill_with(seat, f"s{i}", uses=0, age_days=60)
    skill_with(other_seat, "fresh", uses=0, age_days=2)
    result = prefetch(seat=seat, request=PrefetchRequest(run_id="run-h2", ask="fix the deploy script"))
    events.publish(PersistDeciderCompleted(classification="SHORT"), seat=seat)
    client.force_login(lead)

    html = client.get(reverse("learning_pages:health")).content.decode()

    assert "1 seat below the threshold" in html and "<strong>ana</strong>" in html
    assert "young (skills &lt; 14 days old on average): not judged yet" in html
    assert html.count("<svg") == 4
    assert "no past turn matched" in html  # the seat has no past turns yet: not "nothing like the ask"
    for block in result["blocks"]:
        assert f"{100 if block['hit'] else 0}% of 1 turns" in html
    assert "1 (100%)" in html
    assert "threshold 0.1" in html


def test_an_htmx_window_change_answers_only_the_event_charts(client, lead, seat):
    client.force_login(lead)

    response = client.get(reverse("learning_pages:health"), {"window": "30", "seat": "ana"}, HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert html.lstrip().startswith('<div id="health-events">')
    assert "last 30 days, ana" in html and "<html" not in html


def test_a_window_that_is_not_offered_is_refused(client, lead):
    client.force_login(lead)

    response = client.get(reverse("learning_pages:health"), {"window": "5"})

    assert response.status_code == 400 and b"window" in response.content


def test_the_dashboard_needs_a_logged_in_staff_user(client, django_user_model):
    url = reverse("learning_pages:health")
    assert client.get(url).status_code == 302

    client.force_login(django_user_model.objects.create_user("visitor", password="x"))
    response = client.get(url)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_the_command_prints_the_page_in_a_terminal(seat, other_seat):
    for i in range(20):
        skill_with(seat, f"s{i}", uses=0, age_days=60)
    result = prefetch(seat=seat, request=PrefetchRequest(run_id="run-c1", ask="fix the deploy script"))
    out = io.StringIO()

    call_command("learning_health", "--days", "1", stdout=out)

    text = out.getvalue()
    assert re.search(r"\n  ana  skills rarely reused: below the Berlot-Attwell line of 0.1 uses a skill\s+20 skill\(s\), 0.00 uses a skill, 60.0 days old", text)
    assert re.search(r"\n  bo\s+no skills yet\n", text)
    for block in result["blocks"]:  # the same figures the page draws
        assert re.search(rf"\n  {block['name']}\s+{100 if block['hit'] else 0}% of 1", text)
    assert re.search(r"What the similar-work recall found \(1 turn start\(s\), last 1 day\)\n  no past turn matched\s+1 \(100%\)",
                     text)
    assert "no persist_decider_completed events" in text


def test_the_command_checks_the_threshold_and_names_a_bad_argument(seat, other_seat):
    for i in range(20):
        skill_with(seat, f"s{i}", uses=0, age_days=60)
    with pytest.raises(CommandError) as err:
        call_command("learning_health", "--check", stdout=io.StringIO())
    assert err.value.returncode == 1 and str(err.value) == "1 seat(s) below the Berlot-Attwell threshold: ana"
    out = io.StringIO()
    call_command("learning_health", "--check", "--seat", "bo", stdout=out)  # narrowed to a seat that is not flagged
    assert "ana" not in out.getvalue()
    for argv, message in ((["--days", "0"], "--days: '0' is not a whole number of days (1 or more)"),
                          (["--days", "week"], "--days: 'week' is not a whole number of days (1 or more)"),
                          (["--seat", "nobody"], "--seat: no seat with handle 'nobody'")):
        with pytest.raises(CommandError) as err:
            call_command("learning_health", *argv, stdout=io.StringIO())
        assert str(err.value) == message
