"""The /learning/ pages ask for the model permissions the admin asks for the same rows: staff status
alone reads nothing; a lead (the leads group) reads and acts on everything."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.urls import reverse

from learning.memory import diary
from learning.models import DiaryEntry
from learning.prefetch import PrefetchRequest, prefetch

pytestmark = pytest.mark.django_db


@pytest.fixture
def bare_staff(db):
    """Staff (the admin's login) with no model permission at all: the admin answers it 403 everywhere."""
    return get_user_model().objects.create_user("stan", password="pw-stan-1234", is_staff=True)


@pytest.fixture
def written(seat):
    """A note and a turn start written by the production writers."""
    note = diary.write(seat=seat, content="Hotfixes to billing go through the release branch",
                       kind=DiaryEntry.LONG, turn_id="run-wrote-it")
    prefetch(seat=seat, request=PrefetchRequest(run_id="run-shown", ask="how do we deploy a hotfix"))
    return note


def pages(seat) -> list[str]:
    handle = seat.handle
    return [
        reverse("learning_pages:home"),
        reverse("learning_pages:seats"),
        reverse("learning_pages:memory", args=[handle]),
        *[reverse("learning_pages:memory_section", args=[handle, name])
          for name in ("diary", "episodes", "skills", "profiles")],
        reverse("learning_pages:turn", args=[handle, "run-shown"]),
        reverse("learning_pages:seat_skills", args=[handle]),
        reverse("learning_pages:health"),
        reverse("learning_pages:trends"),
    ]


def test_a_staff_user_without_permissions_is_refused_every_page_and_action(client, bare_staff, seat, written):
    client.force_login(bare_staff)
    for url in pages(seat):
        response = client.get(url)
        assert response.status_code == 403, url
        assert b"lacks the" in response.content and b"Hotfixes" not in response.content, url
    assert client.get(reverse("admin:learning_diaryentry_changelist")).status_code == 403  # the admin agrees
    forget = client.post(reverse("learning_pages:forget_note", args=[seat.handle, written.pk]))
    correct = client.post(reverse("learning_pages:correct_note", args=[seat.handle, written.pk]), {"content": "x"})
    assert forget.status_code == 403 and correct.status_code == 403
    assert DiaryEntry.objects.get(pk=written.pk).content.startswith("Hotfixes")


def test_a_lead_reads_every_page_and_may_correct_and_forget(client, lead, seat, written):
    client.force_login(lead)
    for url in pages(seat):
        assert client.get(url).status_code == 200, url
    diary_page = client.get(reverse("learning_pages:memory_section", args=[seat.handle, "diary"])).content
    assert b"release branch" in diary_page
    correct = client.post(reverse("learning_pages:correct_note", args=[seat.handle, written.pk]),
                          {"content": "Hotfixes go through the hotfix branch"})
    assert correct.status_code == 302 and DiaryEntry.objects.get(pk=written.pk).content.endswith("hotfix branch")
    assert client.post(reverse("learning_pages:forget_note", args=[seat.handle, written.pk])).status_code == 302
    assert not DiaryEntry.objects.filter(pk=written.pk).exists()


def test_a_view_permission_opens_only_its_own_section_and_does_not_allow_forgetting(client, seat, written):
    reader = get_user_model().objects.create_user("rita", password="pw-rita-1234", is_staff=True)
    reader.user_permissions.set(Permission.objects.filter(content_type__app_label="learning", codename="view_diaryentry"))
    client.force_login(reader)
    diary_page = client.get(reverse("learning_pages:memory_section", args=[seat.handle, "diary"]))
    assert diary_page.status_code == 200 and b"release branch" in diary_page.content
    episodes = client.get(reverse("learning_pages:memory_section", args=[seat.handle, "episodes"]))
    assert episodes.status_code == 403 and b"learning.view_episode" in episodes.content
    assert client.get(reverse("learning_pages:memory", args=[seat.handle])).status_code == 403
    assert client.post(reverse("learning_pages:forget_note", args=[seat.handle, written.pk])).status_code == 403
    assert DiaryEntry.objects.filter(pk=written.pk).exists()


SCRIPT = "<script>alert(document.domain)</script>"


@pytest.mark.parametrize("name, args, param", [
    ("learning_pages:health", [], "window"),
    ("learning_pages:trends", [], "window"),
    ("learning_pages:memory_section", ["diary"], "kind"),
    ("learning_pages:memory_section", ["skills"], "state"),
])
def test_a_refused_parameter_is_answered_400_as_plain_text_never_as_markup(client, lead, seat, name, args, param):
    client.force_login(lead)
    for htmx in ({}, {"HTTP_HX_REQUEST": "true"}):
        answer = client.get(reverse(name, args=[seat.handle, *args] if args else []), {param: SCRIPT}, **htmx)
        assert answer.status_code == 400
        assert answer["Content-Type"] == "text/plain; charset=utf-8"  # a browser renders no markup in it
        assert answer.content.decode().startswith(f"{param}:")  # and it names the field


def test_a_refusal_quoting_the_url_is_plain_text(client, bare_staff, seat):
    client.force_login(bare_staff)
    answer = client.get(reverse("learning_pages:memory_section", args=[seat.handle, "diary"]))
    assert answer.status_code == 403 and answer["Content-Type"] == "text/plain; charset=utf-8"


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>|\son[a-z]+\s*=", re.I)


def test_the_lead_pages_and_the_admin_allow_no_inline_script_and_use_none(client, lead, seat, written):
    client.force_login(lead)
    admin_pages = [reverse("admin:index"), reverse("admin:crewlet_configrevision_add"),
                        reverse("admin:learning_diaryentry_changelist"),
                        reverse("admin:learning_diaryentry_change", args=[written.pk])]
    for url in [*pages(seat), *admin_pages]:
        answer = client.get(url)
        assert answer.status_code == 200, url
        policy = dict(d.strip().split(" ", 1) for d in answer["Content-Security-Policy"].split(";"))
        assert policy["script-src"] == "'self'" and policy["object-src"] == "'none'", url  # inline script blocked
        assert policy["frame-ancestors"] == "'none'" and policy["base-uri"] == "'self'", url
        assert not INLINE_SCRIPT.search(answer.content.decode()), url  # so the pages need none to work


def test_no_template_of_the_project_holds_inline_script():
    from django.conf import settings

    root = settings.BASE_DIR
    templates = [*(root / "templates").rglob("*.html"), *root.glob("*/templates/**/*.html"),
                 *root.glob("*/*/templates/**/*.html")]
    assert len(templates) > 20
    for path in templates:
        assert not INLINE_SCRIPT.search(path.read_text(encoding="utf-8")), path
