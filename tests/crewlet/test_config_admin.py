"""Editing crewlet.toml in the admin: a lead's refused edit writes nothing and names every key path;
an accepted one is written, applied and listed in Recent actions; staff who are not leads get 403."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from django.contrib.admin.models import ADDITION, LogEntry
from django.urls import reverse

from crewlet import config
from crewlet.models import ConfigRevision

ADD = reverse("admin:crewlet_configrevision_add")

GOOD = """
[company]
name = "Hotco"

[providers.llm.offline]
kind = "offline"

[providers.embeddings]
kind = "hashing"
dimensions = 64

[learning.personal_memory]
max_refreshes_per_turn = 3

[learning.skill_curator]
interval_hours = 24

[roles.swe]
llm = ["offline"]

[seats.ana]
role = "swe"
"""

# a misspelt key and the interval_hours = 0, in one edit
REFUSED = GOOD.replace("max_refreshes_per_turn", "max_refresh_per_turn").replace("interval_hours = 24",
                                                                                "interval_hours = 0")


@pytest.fixture
def config_file(settings, tmp_path, db) -> Path:
    path = tmp_path / "crewlet.toml"
    path.write_text(GOOD, encoding="utf-8")
    settings.CREWLET_CONFIG_PATH = str(path)
    config.use(None)
    config.current()  # applied as revision one
    return path


def test_a_lead_opens_the_editor_on_the_config_file(client, lead, config_file):
    client.force_login(lead)
    page = client.get(ADD)
    assert page.status_code == 200
    assert html.escape(GOOD.strip()) in page.content.decode()
    assert config.revision()[:12] in page.content.decode()


def test_the_changelist_offers_a_lead_the_editor(client, lead, config_file):
    client.force_login(lead)
    listing = client.get(reverse("admin:crewlet_configrevision_changelist"))
    assert listing.status_code == 200 and ADD in listing.content.decode()


def test_a_refused_edit_answers_400_names_every_key_path_and_writes_nothing(client, lead, config_file):
    client.force_login(lead)
    serving, revisions = config.revision(), ConfigRevision.objects.count()
    answer = client.post(ADD, {"content": REFUSED})
    body = answer.content.decode()
    assert answer.status_code == 400
    assert "learning.personal_memory.max_refresh_per_turn" in body
    assert "did you mean `max_refreshes_per_turn`?" in body
    assert "learning.skill_curator.interval_hours" in body and "must be at least 1, got 0" in body
    assert f"revision <code>{serving[:12]}</code> keeps serving" in body
    assert html.escape(REFUSED.strip()) in body  # her text stays in the editor
    assert config_file.read_text(encoding="utf-8") == GOOD
    assert ConfigRevision.objects.count() == revisions and config.revision() == serving
    assert not LogEntry.objects.filter(user=lead).exists()


def test_an_accepted_edit_is_written_applied_and_listed_in_recent_actions(client, lead, config_file):
    client.force_login(lead)
    edited = GOOD.replace("max_refreshes_per_turn = 3", "max_refreshes_per_turn = 5")
    answer = client.post(ADD, {"content": edited.replace("\n", "\r\n")})  # as a browser's textarea sends it
    revision = ConfigRevision.objects.first()
    assert answer.status_code == 302
    assert answer["Location"] == reverse("admin:crewlet_configrevision_change", args=[revision.pk])
    assert config_file.read_text(encoding="utf-8") == edited
    assert not [p for p in config_file.parent.iterdir() if p.name != "crewlet.toml"]  # no temporary file left
    assert revision.content == edited and revision.path == str(config_file)
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 5
    assert ConfigRevision.objects.count() == 2  # the re-read of the written file applies nothing twice
    entry = LogEntry.objects.get(user=lead)
    assert entry.action_flag == ADDITION and entry.object_id == str(revision.pk)
    index = client.get(reverse("admin:index")).content.decode()
    assert str(revision) in index  # the index's "Recent actions"
    assert client.get(answer["Location"]).status_code == 200


@pytest.mark.parametrize("method", ["get", "post"])
def test_staff_who_are_not_leads_get_403_and_nothing_changes(client, staff_user, config_file, method):
    client.force_login(staff_user)
    answer = getattr(client, method)(ADD, {"content": GOOD.replace("= 3", "= 4")} if method == "post" else None)
    assert answer.status_code == 403
    assert config_file.read_text(encoding="utf-8") == GOOD and ConfigRevision.objects.count() == 1


def test_a_config_file_that_cannot_be_written_is_refused_saying_so_and_nothing_is_applied(client, lead, config_file,
                                                                                         settings):
    settings.CREWLET_CONFIG_PATH = str(config_file.parent / "no-such-dir" / "crewlet.toml")
    client.force_login(lead)
    serving, revisions = config.revision(), ConfigRevision.objects.count()
    answer = client.post(ADD, {"content": GOOD.replace("= 3", "= 4")})
    assert answer.status_code == 400
    assert "cannot write" in answer.content.decode() and "no-such-dir" in answer.content.decode()
    assert ConfigRevision.objects.count() == revisions and config.revision() == serving
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 3


def test_an_accepted_edit_names_the_lead_who_applied_it(client, lead, config_file):
    client.force_login(lead)
    client.post(ADD, {"content": GOOD.replace("= 3", "= 4")})
    revision = ConfigRevision.objects.first()
    assert revision.applied_by == lead and revision.applied_via == "admin editor"
    assert "admin editor" in client.get(reverse("admin:crewlet_configrevision_changelist")).content.decode()


EVIL = '\n[providers.llm.evil]\nkind = "openai_compat"\nbase_url = "http://127.0.0.1:19999/v1"\napi_key_env = "DJANGO_SECRET_KEY"\n'


@pytest.mark.parametrize("edit, paths", [
    ((GOOD, GOOD + EVIL), ["providers.llm.evil.base_url", "providers.llm.evil.api_key_env"]),  # the issue's
    (('kind = "hashing"\ndimensions = 64', 'kind = "openai_compat"\nbase_url = "http://127.0.0.1:19999/v1"'),
     ["providers.embeddings.base_url"]),
    ((GOOD, GOOD.replace('[seats.ana]\nrole = "swe"', '[seats.ana]\nrole = "swe"\nmcp_env = {CONFLUENCE_TOKEN = "PATH"}')),
     ["seats.ana.mcp_env.CONFLUENCE_TOKEN"]),
])
def test_the_editor_cannot_change_where_data_is_sent_or_which_secret_is_read(client, lead, config_file, settings,
                                                                             edit, paths):
    # even where the operator's allowlist would take them: the editor is not where they change
    settings.CREWLET_ALLOWED_PROVIDER_HOSTS, settings.CREWLET_ALLOWED_SECRET_ENV = ["127.0.0.1"], ["DJANGO_SECRET_KEY",
                                                                                                 "PATH"]
    client.force_login(lead)
    serving, revisions = config.revision(), ConfigRevision.objects.count()
    answer = client.post(ADD, {"content": GOOD.replace(*edit)})
    body = html.unescape(answer.content.decode())
    assert answer.status_code == 400
    for path in paths:
        assert path in body
    assert "the admin's editor does not change where data is sent or which secrets are read" in body
    assert config_file.read_text(encoding="utf-8") == GOOD
    assert ConfigRevision.objects.count() == revisions and config.revision() == serving
    assert "evil" not in config.current().providers.llm


def test_an_edit_with_a_nul_character_is_refused_naming_its_key_and_the_service_keeps_answering(client, lead,
                                                                                             config_file):
    client.force_login(lead)
    answer = client.post(ADD, {"content": GOOD.replace('name = "Hotco"', 'name = "Hot\\u0000co"')})
    assert answer.status_code == 400
    assert "company.name" in answer.content.decode() and "NUL character" in answer.content.decode()
    assert config_file.read_text(encoding="utf-8") == GOOD
    assert client.get(ADD).status_code == 200 and config.current().company.name == "Hotco"


def test_an_edit_the_database_refuses_is_answered_400_and_leaves_the_file_as_it_was(client, lead, config_file,
                                                                                      monkeypatch):
    from django.db import DataError

    from crewlet.config import apply

    def refuse(_config):
        raise DataError("value too long")

    monkeypatch.setattr(apply, "apply_to_org", refuse)
    revisions = ConfigRevision.objects.count()
    client.force_login(lead)
    answer = client.post(ADD, {"content": GOOD.replace("= 3", "= 4")})
    assert answer.status_code == 400 and "the database refused it (value too long)" in answer.content.decode()
    assert config_file.read_text(encoding="utf-8") == GOOD  # applied first, written last
    assert ConfigRevision.objects.count() == revisions
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 3
