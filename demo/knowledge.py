"""Demo step: native pages and a scoped search, then promotion drafts a page for a lead to review."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from crewlet import config
from knowledge import review
from knowledge.models import Page
from knowledge.pages import save_page
from knowledge.searcher import accessible_containers, search_knowledge_answer
from learning.passes.promotion import run_promotion
from learning.review.leads import create_lead

ADMIN_URL = "http://127.0.0.1:8000/admin/"
LEAD_USERNAME, LEAD_PASSWORD, LEADS_GROUP = "lead", "lead-demo", "leads"
LEAD_PERMISSIONS = ("view_page", "change_page", "delete_page", "publish_page")
BODY_PREVIEW_LINES = 8

PAGES = [
    ("ENG", "Deploy runbook", "Ship behind a canary: deploy to 5% of hosts, watch the error rate for ten minutes, "
     "then widen. Roll back a bad deploy with `deployctl rollback <release>`; never hot-fix forward at night."),
    ("ENG", "Code review conventions", "Every PR runs the full test suite before review. Keep diffs under 400 lines; "
     "split refactors from behaviour changes."),
    ("PLAT", "Platform on-call handbook", "The platform pager rotates weekly. Escalate database incidents to the DBA "
     "channel after fifteen minutes."),
]
# three platform seats that independently learned the same review-and-ship procedure, each describing its own order
CONVERGING = {
    "ana": ("ship-a-reviewed-pr", ["git_diff", "run_tests", "open_pr", "request_review"],
            "Look at the diff, run the tests, then open a PR and ask for review."),
    "bo": ("pr-with-tests-first", ["run_tests", "git_diff", "open_pr", "request_review"],
           "Run the tests first, look at the diff, then open a PR and ask for review."),
    "cy": ("open-pr-after-green-tests", ["git_diff", "run_tests", "open_pr", "request_review", "post_message"],
           "Look at the diff, run the tests, open a PR, ask for review and tell the channel."),
}


def seed_pages() -> list[Page]:
    out = []
    for container, title, body in PAGES:
        found = Page.objects.filter(container_key=container, title=title).first()
        out.append(found or save_page(container_key=container, title=title, body=body, author="demo"))
    return out


def ensure_converging_skills(now) -> list[str]:
    """Give ana, bo and cy their converging skills unless they already hold them."""
    from crewlet.models import Seat
    from learning.models import SynthesizedSkill

    made = []
    for handle, (name, tools, description) in CONVERGING.items():
        seat = Seat.objects.filter(handle=handle).first()
        if seat is None or SynthesizedSkill.objects.filter(seat=seat, name=name).exists():
            continue
        SynthesizedSkill.objects.create(
            seat=seat, name=name, description=description,
            body=f"# {name}\n\n" + "\n".join(f"{i}. Call {t}." for i, t in enumerate(tools, 1)),
            tool_sequence=tools, trigger="clustered", created_at=now - timedelta(days=3),
        )
        made.append(handle)
    return made


def ensure_lead() -> None:
    """The demo's lead login: the leads group (learning.review.leads owns its permissions) and one user."""
    create_lead(username=LEAD_USERNAME, password=LEAD_PASSWORD)


def show_search(ctx) -> None:
    from crewlet.models import Seat

    seat = Seat.objects.filter(handle="ana").first()
    if seat is None:
        ctx.line("   (no seat 'ana' in the applied config: search skipped)")
        return
    ctx.line(f"   read scope (knowledge.scope): {', '.join(accessible_containers(seat)) or 'nothing'} "
             "(a unit's own container is where its drafts go, not what its seats read)")
    query = "roll back a bad deploy"
    ctx.line(f'   search_knowledge as ana: "{query}"')
    for line in search_knowledge_answer(seat, query).text.splitlines():
        ctx.line(f"     {line}")


def show_promotion(ctx, report: dict) -> None:
    ctx.line(f"   units scanned {report['units']}, converged clusters {report['converged']}, "
             f"already drafted {report['already_drafted']}, failed {len(report['failed'])}")
    for skipped in report["skipped_units"]:
        ctx.line(f"   skipped unit {skipped['unit']}: {skipped['why']}")
    for draft in Page.objects.filter(state=Page.DRAFT).select_related("parent").order_by("id"):
        ctx.line(f"   draft waiting for review: {draft.container_key} / {draft.parent.title if draft.parent else '-'} / "
                 f"{draft.title}")
        ctx.line(f"     from seats {', '.join(draft.source.get('seats', []))}; skills "
                 f"{', '.join(s['name'] for s in draft.source.get('skills', []))}")
        for line in [x for x in draft.body.splitlines() if x.strip()][:BODY_PREVIEW_LINES]:
            ctx.line(f"     | {line}")
        ctx.line("     (hidden from every agent's search until a lead publishes it; once published, "
                 f"{review.readers_sentence(draft.container_key).replace(' can now find', ' can find')})")


def run(ctx) -> None:
    now = ctx.clock or timezone.now()
    config.current()  # the applied config has created the seats
    ctx.heading("Team knowledge: native pages, a scoped search, cross-agent promotion")
    pages = seed_pages()
    ctx.line(f"   {len(pages)} published pages: " + "; ".join(f"{p.container_key}/{p.title}" for p in pages))
    show_search(ctx)
    made = ensure_converging_skills(now)
    if made:
        ctx.line(f"   gave {', '.join(made)} (unit platform) converging skills for the promotion pass")
    show_promotion(ctx, run_promotion(now=now))
    ensure_lead()
    ctx.line(f"   review it: make serve, then log in at {ADMIN_URL} as {LEAD_USERNAME} / {LEAD_PASSWORD} "
             f"(group {LEADS_GROUP})")
    ctx.line(f"     review queue:    {ADMIN_URL}knowledge/draftpage/")
    ctx.line(f"     skills:          {ADMIN_URL}learning/synthesizedskill/  (history, diffs, roll back, pin, archive)")
    ctx.line("     learning health: http://127.0.0.1:8000/learning/health/")
    ctx.line("     ana's memory:    http://127.0.0.1:8000/learning/seats/ana/memory/")
