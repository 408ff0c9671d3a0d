"""``manage.py tokens``: list with the last use, revoke and expire; the API refuses what they close."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from crewlet.models import ApiToken
from tests.factories import token_for


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def whoami(api_client, token):
    return api_client.get("/api/v1/agents/ana/whoami", token=token)


def line_of(listing: str, prefix: str) -> str:
    return next(line for line in listing.splitlines() if line.startswith(prefix))


def test_list_shows_each_token_and_when_it_was_last_used(api_client, seat):
    raw = token_for(seat)
    prefix = ApiToken.objects.get().prefix
    assert line_of(run("tokens", "list"), prefix).endswith("never")
    assert whoami(api_client, raw).status_code == 200
    used = ApiToken.objects.get().last_used_at
    assert used is not None and timezone.now() - used < timedelta(minutes=1)
    line = line_of(run("tokens", "list"), prefix)
    assert "ana" in line and "live" in line and line.endswith(used.strftime("%Y-%m-%d %H:%M UTC"))


def test_revoke_by_prefix_refuses_the_token_from_then_on(api_client, seat):
    raw = token_for(seat)
    assert whoami(api_client, raw).status_code == 200
    assert run("tokens", "revoke", raw[:12]).startswith(f"revoked {raw[:12]}")
    assert whoami(api_client, raw).status_code == 401
    assert raw[:12] not in run("tokens", "list")
    assert "revoked" in line_of(run("tokens", "list", "--all"), raw[:12])


def test_expire_at_a_moment_refuses_the_token_once_it_passes(api_client, seat):
    raw = token_for(seat)
    run("tokens", "expire", raw[:12], "--in-days", "30")
    assert whoami(api_client, raw).status_code == 200
    assert "live" in line_of(run("tokens", "list"), raw[:12])
    run("tokens", "expire", raw[:12], "--at", "now")
    assert whoami(api_client, raw).status_code == 401
    assert "expired" in line_of(run("tokens", "list"), raw[:12])


@pytest.mark.parametrize("args, message", [
    (("expire", "crw_x", "--at", "next tuesday"), "--at: 'next tuesday' is not a date"),
    (("revoke", "crw_nope"), "no token with prefix 'crw_nope'"),
    (("expire", "crw_", "--in-days", "3"), "matches more than one token"),
])
def test_a_bad_argument_is_a_one_line_error(seat, args, message):
    token_for(seat), token_for(seat)
    with pytest.raises(CommandError) as err:
        run("tokens", *args)
    assert message in str(err.value) and "\n" not in str(err.value)
