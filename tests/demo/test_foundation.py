"""The foundation demo step applies the configured file, names the engine, issues tokens and ranks in SQL."""

from __future__ import annotations

from io import StringIO

from django.core.management.base import OutputWrapper
from django.core.management.color import no_style

from crewlet.models import ApiToken, hash_token
from demo import foundation
from demo.state import DemoContext
from tests.crewlet.test_config import EXAMPLE


def test_the_foundation_step_sets_up_seats_tokens_and_a_ranked_search(settings, tmp_path, db):
    path = tmp_path / "crewlet.toml"
    path.write_text(EXAMPLE.read_text().replace('kind = "local" ', 'kind = "hashing"'))
    settings.CREWLET_CONFIG_PATH = str(path)
    from crewlet import config

    config.use(None)
    out = StringIO()
    ctx = DemoContext(out=OutputWrapper(out), style=no_style())

    foundation.run(ctx)

    text = out.getvalue()
    assert {"ana", "bo", "cy", "dee", "ed"} == set(ctx.tokens)
    assert ApiToken.objects.get(token_hash=hash_token(ctx.tokens["ana"])).seat.handle == "ana"
    assert ApiToken.objects.get(token_hash=hash_token(ctx.operator_token)).kind == ApiToken.OPERATOR
    assert "PostgreSQL" in text and "pgvector" in text
    ranked = [line for line in text.splitlines() if "distance" in line]
    assert len(ranked) == 3 and ranked[0].strip().startswith("1. distance")
