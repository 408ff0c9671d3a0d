"""The lead's workspace: the home, acting on a seat's notes, a turn's "what it was shown", trends over time."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from core import events
from core.models import Event
from learning.events import NoteCorrected, NoteForgotten, SkillUsed
from learning.memory import diary
from learning.models import CounterpartyProfile, DiaryEntry, Episode, SynthesizedSkill
from learning.prefetch import PrefetchRequest, prefetch
from learning.review import trends
from tests.review_fixtures import make_draft, make_skill

pytestmark = pytest.mark.django_db

ASK = "how do we deploy a hotfix to billing"


def note(seat, text):
    return diary.write(seat=seat, content=text, kind=DiaryEntry.LONG, turn_id="run-wrote-it")


def shown_notes(result) -> list[int]:
    return next(b for b in result["blocks"] if b["name"] == "personal_memory")["shown"].get("notes", [])


def test_the_home_counts_what_waits_and_flags_seats_below_the_line(client, lead, seat, other_seat):
    make_draft(title="Deploy a hotfix")
    for i in range(3):
        make_skill(seat, name=f"s{i}", use_count=0, created_at=timezone.now() - timedelta(days=60))
    client.force_login(lead)

    html = client.get(reverse("learning_pages:home")).content.decode()

    assert 'data-count="1"' in html and "Auto-drafted pages" in html
    assert reverse("learning_pages:seat_skills", args=["ana"]) in html  # below the line, drilled down
    assert reverse("learning_pages:memory", args=["bo"]) in html and reverse("learning_pages:health") in html
    assert client.get("/").url == reverse("learning_pages:home")


def test_the_admin_index_leads_with_the_home_and_groups_internals_apart(client, lead):
    make_draft(title="Deploy a hotfix")
    client.force_login(lead)

    html = client.get(reverse("admin:index")).content.decode()

    assert 'id="lead-home-card"' in html and 'data-count="1"' in html
    assert 'href="/learning/"' in html  # "View site"
    internals = html[html.index("Internals"):]
    assert "Prefetch snapshots" in internals and "Refresh ledgers" in internals
    assert "Prefetch snapshots" not in html[: html.index("Internals")]


def test_forgetting_a_note_is_audited_and_gone_from_the_next_prefetch(client, lead, seat):
    kept = note(seat, "Hotfixes to billing go through the release branch")
    wrong = note(seat, "Hotfixes to billing are deployed straight to main")
    assert wrong.pk in shown_notes(prefetch(seat=seat, request=PrefetchRequest(run_id="before", ask=ASK)))
    client.force_login(lead)

    response = client.post(reverse("learning_pages:forget_note", args=["ana", wrong.pk]), {"reason": "wrong"})

    assert response.status_code == 302
    assert not DiaryEntry.objects.filter(pk=wrong.pk).exists()
    audit = events.latest(NoteForgotten, seat=seat).event
    assert (audit.user, audit.note_id, audit.content, audit.turn_id) == ("lena", wrong.pk, wrong.content, "run-wrote-it")
    after = prefetch(seat=seat, request=PrefetchRequest(run_id="after", ask=ASK))
    assert wrong.pk not in shown_notes(after) and kept.pk in shown_notes(after)
    assert "straight to main" not in after["prompt"]


def test_correcting_a_note_is_audited_and_the_next_prefetch_shows_the_new_text(client, lead, seat):
    wrong = note(seat, "Hotfixes to billing are deployed straight to main")
    client.force_login(lead)

    response = client.post(reverse("learning_pages:correct_note", args=["ana", wrong.pk]),
                           {"content": "Hotfixes to billing go through the release branch"}, HTTP_HX_REQUEST="true")

    assert response.status_code == 200 and "release branch" in response.content.decode()
    audit = events.latest(NoteCorrected, seat=seat).event
    assert (audit.user, audit.before, audit.after) == ("lena", wrong.content, "Hotfixes to billing go through the release branch")
    after = prefetch(seat=seat, request=PrefetchRequest(run_id="after", ask=ASK))
    assert "release branch" in after["prompt"] and "straight to main" not in after["prompt"]


def test_a_staff_user_who_is_not_a_lead_cannot_forget_and_bad_input_names_the_field(client, lead, staff_user, seat):
    n = note(seat, "A note")
    client.force_login(staff_user)
    assert client.post(reverse("learning_pages:forget_note", args=["ana", n.pk])).status_code == 403
    assert DiaryEntry.objects.filter(pk=n.pk).exists() and not Event.objects.filter(name="note_forgotten").exists()

    client.force_login(lead)
    response = client.post(reverse("learning_pages:correct_note", args=["ana", n.pk]), {"content": "  "})
    assert response.status_code == 400 and b"content" in response.content
    assert client.post(reverse("learning_pages:forget_note", args=["bo", n.pk])).status_code == 404


def test_memory_search_finds_notes_episodes_and_profiles_and_rows_link_to_their_turn(client, lead, seat):
    n = note(seat, "The billing export runs nightly")
    note(seat, "Lunch is at noon")
    now = timezone.now()
    Episode.objects.create(seat=seat, run_id="run-7", task_summary="Fix the billing export", started_at=now, ended_at=now)
    CounterpartyProfile.objects.create(observer=seat, subject_handle="dana", communication_style="Asks about billing")
    client.force_login(lead)

    html = client.get(reverse("learning_pages:memory", args=["ana"]), {"q": "billing"}).content.decode()

    results = html[html.index('id="search-results"'):html.index('id="latest-reflection"')]
    assert "3 matches" in results and "nightly" in results and "Lunch" not in results
    assert reverse("learning_pages:turn", args=["ana", "run-7"]) in results
    assert reverse("learning_pages:turn", args=["ana", "run-wrote-it"]) in html
    assert html.count(f'id="forget-{n.pk}"') == 1 and html.count(f'id="note-{n.pk}"') == 1  # once: in the diary section


def test_a_turn_page_shows_what_its_start_rendered_and_which_rows(client, lead, seat):
    shown = note(seat, "Hotfixes to billing go through the release branch")
    skill = make_skill(seat, name="deploy-hotfix")
    result = prefetch(seat=seat, request=PrefetchRequest(run_id="run-9", ask=ASK))
    client.force_login(lead)

    html = client.get(reverse("learning_pages:turn", args=["ana", "run-9"])).content.decode()

    assert shown.pk in shown_notes(result)
    assert f"#note-{shown.pk}" in html and "release branch" in html
    assert 'id="block-personal_memory"' in html
    offered = next(b for b in result["blocks"] if b["name"] == "synthesized_skills")["shown"].get("skills", [])
    if offered:
        assert reverse("admin:learning_synthesizedskill_change", args=[skill.pk]) in html
    assert client.get(reverse("learning_pages:turn", args=["ana", "no-such-run"])).status_code == 404


def test_trends_bucket_by_day_in_sql_and_the_window_is_refused_when_not_offered(client, lead, seat):
    skill = make_skill(seat)
    for days_ago in (0, 0, 3):
        row = events.publish(SkillUsed(skill_id=skill.pk, name=skill.name, version=1), seat=seat)
        Event.objects.filter(pk=row.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    prefetch(seat=seat, request=PrefetchRequest(run_id="run-t", ask=ASK))
    old = note(seat, "old")
    DiaryEntry.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=40))

    uses = trends.skill_uses(window_days=7, seat=seat)
    notes = trends.notes_written(window_days=30, seat=seat)
    rates = trends.hit_rate(window_days=7, seat=seat)

    assert len(uses) == 7 and uses[-1].value == 2 and uses[-4].value == 1 and sum(d.value for d in uses) == 3
    assert sum(d.value for d in notes) == 0 and sum(d.value for d in trends.notes_written(window_days=90, seat=seat)) == 1
    assert rates[-1].value is not None and 0 <= rates[-1].value <= 1 and rates[0].value is None

    client.force_login(lead)
    page = client.get(reverse("learning_pages:trends"), {"window": "90", "seat": "ana"}, HTTP_HX_REQUEST="true")
    assert page.status_code == 200 and page.content.decode().lstrip().startswith('<div id="trends">')
    assert "last 90 days, ana" in page.content.decode()
    assert client.get(reverse("learning_pages:trends"), {"window": "5"}).status_code == 400


def test_the_seat_drill_down_lists_skills_with_history_links_and_no_negative_ages(client, lead, seat):
    skill = make_skill(seat, use_count=0, created_at=timezone.now() + timedelta(days=43))  # clock skew
    client.force_login(lead)

    html = client.get(reverse("learning_pages:seat_skills", args=["ana"])).content.decode()

    assert reverse("admin:learning_synthesizedskill_change", args=[skill.pk]) in html
    assert "-43" not in html and "never" in html
    assert SynthesizedSkill.objects.count() == 1


def test_the_health_view_and_its_admin_never_show_a_negative_age_or_a_raw_float(client, lead, seat):
    make_skill(seat, use_count=1, created_at=timezone.now() + timedelta(days=43.49763980321586))
    client.force_login(lead)

    dashboard = client.get(reverse("learning_pages:health")).content.decode()
    listing = client.get(reverse("admin:learning_learninghealth_changelist")).content.decode()

    for html in (dashboard, listing):
        assert "-43" not in html and "43.49" not in html
    assert "1.00" in listing and "0.0" in listing


def test_the_event_log_separates_peoples_actions_from_telemetry(client, lead, seat):
    wrong = note(seat, "Hotfixes go straight to main")
    prefetch(seat=seat, request=PrefetchRequest(run_id="run-e", ask=ASK))  # telemetry
    client.force_login(lead)
    client.post(reverse("learning_pages:forget_note", args=["ana", wrong.pk]))

    page = client.get(reverse("admin:core_event_changelist"), {"kind": "actions"}).content.decode()

    html = page[page.index('id="result_list"'):page.index("</table>", page.index('id="result_list"'))]
    assert "note_forgotten" in html and "prefetch_summary" not in html
    assert f"note_id={wrong.pk}" in html


# ---- Recent actions: a lead's skill and note actions are Django LogEntries ------------------------------

def log_entries(user):
    from django.contrib.admin.models import LogEntry

    return list(LogEntry.objects.filter(user=user).order_by("id").values_list("object_id", "action_flag",
                                                                                "change_message"))


def test_a_leads_skill_actions_land_in_recent_actions_and_an_agents_own_do_not(client, lead, seat):
    from django.contrib.admin.models import CHANGE, LogEntry

    from learning.memory import skill_actions

    skill = make_skill(seat, name="deploy-hotfix")
    skill_actions.pin(skill=skill, actor=lead)
    skill_actions.unpin(skill=skill, actor=lead)
    skill_actions.archive(skill=skill, actor=lead)
    skill_actions.restore(skill=skill, actor=lead)
    skill_actions.rollback(skill=skill, to_version=1, actor=lead)
    before = LogEntry.objects.count()
    skill_actions.archive(skill=skill, actor=seat)  # the agent on its own skill: audited by its event alone

    pk = str(skill.pk)
    assert log_entries(lead) == [
        (pk, CHANGE, "Pinned the skill"), (pk, CHANGE, "Unpinned the skill"), (pk, CHANGE, "Archived the skill"),
        (pk, CHANGE, "Restored the skill"), (pk, CHANGE, "Rolled back to v1 (now v4)"),
    ]
    assert LogEntry.objects.count() == before
    client.force_login(lead)
    index = client.get(reverse("admin:index")).content.decode()
    assert reverse("admin:learning_synthesizedskill_change", args=[skill.pk]) in index  # under "My actions"


def test_a_skill_action_whose_audit_fails_leaves_no_log_entry(lead, seat, monkeypatch):
    from learning.memory import skill_actions

    skill = make_skill(seat, name="deploy-hotfix")

    def refuse(*args, **kwargs):
        raise RuntimeError("the event log is down")

    monkeypatch.setattr(events, "publish", refuse)
    with pytest.raises(RuntimeError):
        skill_actions.pin(skill=skill, actor=lead)
    assert log_entries(lead) == [] and not SynthesizedSkill.objects.get(pk=skill.pk).pinned


def test_a_leads_forget_and_correct_land_in_recent_actions(client, lead, seat):
    from django.contrib.admin.models import CHANGE, DELETION

    wrong, fixable = note(seat, "Hotfixes go straight to main"), note(seat, "Billing exports run hourly")
    client.force_login(lead)
    client.post(reverse("learning_pages:forget_note", args=["ana", wrong.pk]), {"reason": "wrong"})
    client.post(reverse("learning_pages:correct_note", args=["ana", fixable.pk]), {"content": "Billing exports run nightly"})

    assert log_entries(lead) == [(str(wrong.pk), DELETION, "Forgot the note of ana: wrong"),
                                 (str(fixable.pk), CHANGE, "Corrected the note")]
    index = client.get(reverse("admin:index")).content.decode()
    assert "Hotfixes go straight to main" in index and "Billing exports run nightly" in index


# ---- the memory page: results refresh in place; profile lists only with text ---------------------------

def test_search_results_refresh_in_place_after_a_forget_or_a_correction(client, lead, seat):
    from html import unescape
    from urllib.parse import unquote

    gone = note(seat, "The billing export runs nightly")
    fixed = note(seat, "The billing export writes CSV")
    client.force_login(lead)
    memory = reverse("learning_pages:memory", args=["ana"])
    page = client.get(memory, {"q": "billing export"}).content.decode()
    results = page[page.index('<div id="search-results"'):page.index('id="latest-reflection"')]
    assert 'hx-trigger="memory-changed from:body"' in results and "2 matches" in results
    refresh = unescape(unquote(results.split('hx-get="', 1)[1].split('"', 1)[0]))
    assert refresh == f"{memory}?q=billing export&page=1"

    forgot = client.post(reverse("learning_pages:forget_note", args=["ana", gone.pk]), HTTP_HX_REQUEST="true")
    corrected = client.post(reverse("learning_pages:correct_note", args=["ana", fixed.pk]),
                            {"content": "The billing export writes Parquet"}, HTTP_HX_REQUEST="true")
    assert forgot["HX-Trigger"] == corrected["HX-Trigger"] == "memory-changed"

    again = client.get(memory, {"q": "billing export"}, HTTP_HX_REQUEST="true").content.decode()
    assert again.startswith('<div id="search-results"')  # the fragment the event swaps in
    assert "1 match " in again and "Parquet" in again and "nightly" not in again


def test_profiles_list_topics_decisions_and_sensitivities_only_when_they_hold_text(client, lead, seat):
    CounterpartyProfile.objects.create(observer=seat, subject_handle="dana", communication_style="Terse",
                                       topics=["", "billing exports"], past_decisions=[], sensitivities=["  "])
    CounterpartyProfile.objects.create(observer=seat, subject_handle="eli", communication_style="Chatty",
                                       topics=[" "], past_decisions=[""], sensitivities=[])
    CounterpartyProfile.objects.create(observer=seat, subject_handle="fay", past_decisions=["ship on Fridays"],
                                       sensitivities=["weekend pages"])
    client.force_login(lead)

    html = client.get(reverse("learning_pages:memory_section", args=["ana", "profiles"])).content.decode()

    dana, eli, fay = (html[html.index(f"<strong>{name}</strong>"):].split("</span></li>")[0]
                      for name in ("dana", "eli", "fay"))
    assert "Topics" in dana and "billing exports" in dana and "Decisions" not in dana and "Sensitivities" not in dana
    assert "Chatty" in eli and "profile-lists" not in eli
    assert "Topics" not in fay and "ship on Fridays" in fay and "weekend pages" in fay


# ---- trends: uses per skill ------------------------------------------------------------------------------

def test_trends_list_uses_per_skill_for_the_window_linking_history_and_seat(client, lead, seat, other_seat):
    from learning import tools

    often, once = make_skill(seat, name="deploy-hotfix"), make_skill(seat, name="rotate-keys")
    theirs = make_skill(other_seat, name="page-oncall")
    for skill, times in ((often, 3), (once, 1), (theirs, 2)):
        for i in range(times):
            tools.run(seat=skill.seat, name="use_skill", run_id=f"run-{skill.name}-{i}", arguments={"name": skill.name})
    old = events.rows(SkillUsed, seat=seat).filter(payload__skill_id=often.pk).first()
    Event.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=10))
    client.force_login(lead)

    def table(**params):
        html = client.get(reverse("learning_pages:trends"), params).content.decode()
        section = html[html.index('id="uses-per-skill"'):]
        section = section[:section.index("</section>")]
        return [(row.split('data-skill="')[1].split('"')[0], row.split('class="num">')[1].split("<")[0])
                for row in section.split("<tr ")[1:]], section

    week, section = table(window="7")
    assert week == [(str(often.pk), "2"), (str(theirs.pk), "2"), (str(once.pk), "1")]  # a tie in skill order
    assert reverse("admin:learning_synthesizedskill_change", args=[often.pk]) in section
    assert reverse("learning_pages:seat_skills", args=["bo"]) in section
    month, _ = table(window="30", seat="ana")
    assert month == [(str(often.pk), "3"), (str(once.pk), "1")]
    assert [(u.name, u.seat_handle, u.uses) for u in trends.uses_per_skill(window_days=30)][0] == ("deploy-hotfix", "ana", 3)
