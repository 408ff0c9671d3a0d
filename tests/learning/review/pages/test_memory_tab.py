"""A seat's Memory tab: four sections paged with their totals, htmx fragments, the latest reflection."""

import re
from datetime import timedelta
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from learning.models import CounterpartyProfile, DiaryEntry, Episode
from learning.reflection import reflect_turn
from learning.reflection.ring import RING
from learning.review.pages import selectors
from tests.learning.reflection.conftest import store
from tests.review_fixtures import make_skill

pytestmark = pytest.mark.django_db


def notes(seat, n, kind=DiaryEntry.LONG):
    now = timezone.now()
    DiaryEntry.objects.bulk_create(
        DiaryEntry(
            seat=seat, kind=kind, content=f"{kind} note {i}", created_at=now - timedelta(minutes=i),
            ttl_until=now + timedelta(days=3) if kind == DiaryEntry.SHORT else None,
        )
        for i in range(n)
    )


def section_url(seat, name):
    return reverse("learning_pages:memory_section", args=[seat.handle, name])


def test_each_section_pages_with_the_filtered_total(seat, other_seat):
    notes(seat, 23)
    notes(seat, 4, kind=DiaryEntry.SHORT)
    notes(other_seat, 5)

    first = selectors.section(seat=seat, name="diary")
    last = selectors.section(seat=seat, name="diary", page=3)
    longs = selectors.section(seat=seat, name="diary", selected=DiaryEntry.LONG)

    assert (first.total, len(first.rows), first.num_pages) == (27, 10, 3)
    assert (last.total, len(last.rows), last.first_index, last.last_index) == (27, 7, 21, 27)
    assert (longs.total, longs.num_pages) == (23, 3)


def test_an_expired_short_note_is_not_in_the_memory_tab(seat):
    DiaryEntry.objects.create(
        seat=seat, kind=DiaryEntry.SHORT, content="gone", created_at=timezone.now() - timedelta(days=5),
        ttl_until=timezone.now() - timedelta(days=1),
    )
    notes(seat, 2)

    assert selectors.section(seat=seat, name="diary").total == 2


def test_the_skills_section_lists_the_catalogue_and_archived_on_request(seat):
    make_skill(seat, name="kept")
    make_skill(seat, name="gone", state="archived")

    assert [s.name for s in selectors.section(seat=seat, name="skills").rows] == ["kept"]
    assert [s.name for s in selectors.section(seat=seat, name="skills", selected="archived").rows] == ["gone"]
    assert selectors.section(seat=seat, name="skills", selected="").total == 2


def test_the_memory_tab_renders_every_section_with_its_total(client, lead, seat):
    notes(seat, 12)
    now = timezone.now()
    Episode.objects.create(seat=seat, task_summary="Fix flaky CI", started_at=now, ended_at=now)
    CounterpartyProfile.objects.create(observer=seat, subject_handle="dana", subject_platform="slack", observations=3)
    make_skill(seat)
    client.force_login(lead)

    html = client.get(reverse("learning_pages:memory", args=[seat.handle])).content.decode()

    for name, total in (("diary", 12), ("episodes", 1), ("skills", 1), ("profiles", 1)):
        section_html = html.split(f'id="section-{name}"', 1)[1].split("</section>", 1)[0]
        assert f'data-total="{total}"' in section_html
    assert 'data-total="12"' in html and "1–10 of 12" in html
    assert "Fix flaky CI" in html and "dana" in html and "deploy-hotfix" in html


def test_an_htmx_page_request_answers_the_section_fragment_only(client, lead, seat):
    notes(seat, 15)
    client.force_login(lead)

    response = client.get(section_url(seat, "diary"), {"page": "2", "kind": ""}, HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card section" id="section-diary">')
    assert "<html" not in html and "11–15 of 15" in html and "page 2 / 2" in html


def test_without_htmx_the_section_link_is_a_whole_page(client, lead, seat):
    notes(seat, 3)
    client.force_login(lead)

    html = client.get(section_url(seat, "diary"), {"kind": "diary_long"}).content.decode()

    assert "<html" in html and "1–3 of 3" in html


def test_an_unknown_filter_value_is_refused_and_an_unknown_seat_is_404(client, lead, seat):
    client.force_login(lead)

    assert client.get(section_url(seat, "diary"), {"kind": "diary_medium"}).status_code == 400
    assert client.get(section_url(seat, "nope")).status_code == 404
    assert client.get(reverse("learning_pages:memory", args=["nobody"])).status_code == 404


def test_a_real_reflection_shows_ran_gated_and_failed_workers_apart(client, lead, seat):
    """Built by the production writers: a stored turn, a real pass, a worker that fails."""
    from learning.reflection.workers import profiler

    RING.clear()  # the duplicate gate's memory of run ids is per process

    first = store(seat, run_id="run-1")
    reflect_turn(first.pk)
    second = store(seat, run_id="run-2")
    with mock.patch.object(profiler.Profiler, "run", side_effect=RuntimeError("profile store down")):
        reflect_turn(second.pk)
    client.force_login(lead)

    html = client.get(reverse("learning_pages:memory", args=[seat.handle])).content.decode()

    reflection = html[html.index('id="latest-reflection"'):html.index('class="sections"')]
    assert "run-2" in reflection and "run-1" not in reflection
    assert re.search(r'worker-failed"><strong title="profiler">people profiles</strong>\s*<span class="tag bad">failed</span>', html)
    assert "RuntimeError: profile store down" in html
    assert re.search(r'<strong title="persist_decider">note keeping</strong>\s*<span class="tag good">ran</span>', html)
    assert re.search(r'<strong title="synthesizer">new skill</strong>\s*<span class="tag muted" title="too_few_tools">'
                     r'skipped: the turn used too few tools to be worth a skill</span>', html)
    assert "1 failed" in html


def test_a_seat_with_no_reflection_says_so(client, lead, seat):
    client.force_login(lead)

    html = client.get(reverse("learning_pages:memory", args=[seat.handle])).content.decode()

    assert "No reflection has completed for this seat yet." in html


def test_the_memory_pages_need_a_logged_in_staff_user(client, seat):
    response = client.get(reverse("learning_pages:memory", args=[seat.handle]))

    assert response.status_code == 302 and "/admin/login/" in response["Location"]


# ---- the search box: the agents' own word-and-meaning recall, counted and paged -------------------------

def search_results(client, seat, **params) -> str:
    html = client.get(reverse("learning_pages:memory", args=[seat.handle]), params).content.decode()
    return html[html.index('<div id="search-results"'):html.index('id="latest-reflection"')]


def test_the_search_finds_every_word_wherever_it_stands_and_counts_each_kind(client, lead, seat, other_seat):
    from tests.learning.memory.rows import episode, note, skill

    note(seat, "Before a deploy to staging, run the migration with lock_timeout set.")
    note(seat, "The Friday lunch moved to the Thai place.")
    note(other_seat, "staging deploy migration notes of another seat")
    episode(seat, label="PLAT-7: staging deploy blocked", ask="the staging deploy hangs on a migration",
            did="Set lock_timeout on the migration and redeployed.", tools=["ci"], run_id="run-7")
    skill(seat, "staging-migration-deploy", "deploy to staging after the migration check")
    CounterpartyProfile.objects.create(observer=seat, subject_handle="maya", subject_platform="slack",
                                       communication_style="Asks about the staging deploy before every migration.")
    client.force_login(lead)

    html = search_results(client, seat, q="migration staging deploy")

    assert "lock_timeout set" in html and "Thai place" not in html and "another seat" not in html
    assert "PLAT-7: staging deploy blocked" in html and "staging-migration-deploy" in html and "Asks about" in html
    counts = re.search(r'id="search-counts">([^<]*)', html).group(1)
    assert counts.startswith("1 note, 1 episode, 1 profile, 1 skill")
    assert "4 matches for" in html


def test_the_search_pages_through_every_match_and_refuses_a_page_it_does_not_have(client, lead, seat):
    from tests.learning.memory.rows import note

    for i in range(selectors.SEARCH_PAGE_SIZE + 5):
        note(seat, f"Rollback drill {i}: the canary rollback took {i} minutes")
    client.force_login(lead)
    url = reverse("learning_pages:memory", args=[seat.handle])

    first = search_results(client, seat, q="canary rollback")
    second = search_results(client, seat, q="canary rollback", page=2)

    total = selectors.SEARCH_PAGE_SIZE + 5
    assert f"{total} matches" in first and "page 1 of 2" in first and 'id="search-next"' in first
    assert first.count("Rollback drill") == selectors.SEARCH_PAGE_SIZE and second.count("Rollback drill") == 5
    assert client.get(url, {"q": "canary rollback", "page": 3}).status_code == 400
    assert client.get(url, {"q": "canary rollback", "page": "two"}).status_code == 400


def test_the_search_ranks_notes_and_episodes_by_words_while_the_query_embeds(client, lead, seat, monkeypatch):
    """A ranking by words needs no vector: both run while the query embeds, and the search uses them."""
    from tests.embed_waits import ranked_while_embedding
    from tests.learning.memory.rows import episode, note

    note(seat, "Before a deploy to staging, run the migration with lock_timeout set.")
    episode(seat, label="PLAT-7: staging deploy blocked", ask="the staging deploy hangs on a migration",
            did="Set lock_timeout on the migration and redeployed.", tools=["ci"], run_id="run-7")
    client.force_login(lead)
    html, meanwhile, ranked = ranked_while_embedding(
        {"agent_diary", "episodes"}, monkeypatch, lambda: search_results(client, seat, q="migration staging deploy"))

    assert meanwhile is True
    assert sorted(ranked) == ["agent_diary", "episodes"]  # the searches used them
    assert "lock_timeout set" in html and "PLAT-7: staging deploy blocked" in html
