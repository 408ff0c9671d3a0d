"""The memory pages: thin views over ``learning.review.pages.selectors`` and ``learning.review.pages.dashboard``.

Full pages on a normal request, the one fragment an htmx request asked for otherwise. Every page
needs a logged-in staff user (the admin's login) holding the model permissions the admin would ask
for the rows it shows (``learning.review.pages.access``); without them the answer is 403.
"""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpResponse, HttpResponseBadRequest, HttpResponseForbidden
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from crewlet.errors import BadInput, Forbidden, NotFound
from crewlet.models import Seat
from learning.review import note_actions
from learning.review.pages import access, dashboard, home, selectors, trends_page, turn_shown

PLAIN = "text/plain; charset=utf-8"  # a refusal quotes what was asked for: as text, never as markup


def _refused(request, perms) -> HttpResponseForbidden | None:
    reason = access.refusal(request.user, perms)
    return HttpResponseForbidden(reason, content_type=PLAIN) if reason else None


def _guarded(view, perms: tuple[str, ...]):
    """``view`` for staff holding ``perms``; the project's typed errors become 404 / 403 / 400 answers."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        refused = _refused(request, perms)
        if refused is not None:
            return refused
        try:
            return view(request, *args, **kwargs)
        except NotFound as exc:
            raise Http404(exc.message) from exc
        except Forbidden as exc:
            return HttpResponseForbidden(exc.message, content_type=PLAIN)
        except BadInput as exc:
            return HttpResponseBadRequest(exc.message, content_type=PLAIN)

    return wrapped


def page_view(*perms: str):
    """Staff holding ``perms`` only, GET only."""

    def decorate(view):
        return staff_member_required(require_GET(_guarded(view, perms)))

    return decorate


def action_view(view):
    """Staff who may view the diary, POST only; a refusal is a 403 naming the permission, bad input a 400
    naming the field."""
    return staff_member_required(require_POST(_guarded(view, (access.DIARY,))))


def _page_number(request) -> int:
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


@page_view(*access.MEMORY)
def seats(request):
    listing = Seat.objects.select_related("unit", "role").order_by("handle")
    return render(request, "learning/seats.html", {"seats": listing, "nav": "seats"})


@page_view(*access.HOME)
def home_page(request):
    return render(request, "learning/home.html", {**home.home_context(), "nav": "home"})


@page_view(*access.MEMORY)
def memory(request, handle):
    seat = selectors.seat_by_handle(handle)
    found = selectors.search(seat=seat, query=request.GET.get("q", ""), page=request.GET.get("page", 1))
    context = {**selectors.memory_tab(seat=seat), "found": found, "nav": "seats", **_note_perms(request)}
    if request.htmx and request.GET.get("q") is not None:
        return render(request, "learning/_search_results.html", context)
    return render(request, "learning/memory.html", context)


def _note_perms(request) -> dict:
    return {"can_forget": note_actions.can_forget(request.user), "can_correct": note_actions.can_correct(request.user)}


MEMORY_CHANGED = "memory-changed"  # the htmx event a page's search results refresh on


def _changed(response: HttpResponse) -> HttpResponse:
    response["HX-Trigger"] = MEMORY_CHANGED
    return response


def _back_to_memory(request, seat: Seat, notice: str):
    if request.htmx:
        return None
    messages.success(request, notice)
    return redirect(reverse("learning_pages:memory", args=[seat.handle]) + "#section-diary")


@action_view
def forget_note(request, handle, pk):
    seat = selectors.seat_by_handle(handle)
    note = selectors.note_of(seat=seat, pk=pk)
    note_actions.forget(note=note, actor=request.user, reason=request.POST.get("reason", ""))
    notice = f"Forgotten: note {pk} is gone from {seat.handle}'s recall."
    return _back_to_memory(request, seat, notice) or _changed(HttpResponse(format_html('<li class="notice" role="status">{}</li>', notice)))


@action_view
def correct_note(request, handle, pk):
    seat = selectors.seat_by_handle(handle)
    note = selectors.note_of(seat=seat, pk=pk)
    note = note_actions.correct(note=note, content=request.POST.get("content", ""), actor=request.user,
                                reason=request.POST.get("reason", ""))
    back = _back_to_memory(request, seat, f"Corrected note {pk}.")
    if back is not None:
        return back
    return _changed(render(request, "learning/_note_row.html",
                           {"e": note, "seat": seat, "corrected": True, **_note_perms(request)}))


@page_view(*access.TURN)
def turn_page(request, handle, run_id):
    seat = selectors.seat_by_handle(handle)
    return render(request, "learning/turn.html", {**turn_shown.turn_context(seat=seat, run_id=run_id), "nav": "seats"})


@page_view(access.SKILLS)
def seat_skills(request, handle):
    seat = selectors.seat_by_handle(handle)
    return render(request, "learning/seat_skills.html", {"seat": seat, "skills": selectors.seat_skills(seat=seat),
                                                          "nav": "health"})


@page_view(*access.DASHBOARD)
def trends(request):
    window = trends_page.parse_window(request.GET.get("window"))
    handle = request.GET.get("seat") or ""
    seat = selectors.seat_by_handle(handle) if handle else None
    context = {**trends_page.trends_context(window_days=window, seat=seat), "seats": Seat.objects.order_by("handle"),
               "nav": "trends"}
    template = "learning/_trends.html" if request.htmx else "learning/trends.html"
    return render(request, template, context)


@page_view()
def memory_section(request, handle, name):
    refused = _refused(request, access.SECTION.get(name, ()))
    if refused is not None:
        return refused
    seat = selectors.seat_by_handle(handle)
    spec = selectors.SECTIONS.get(name)
    selected = request.GET.get(spec.filter_param) if spec else None
    context = {"seat": seat, "nav": "seats", **_note_perms(request),
               "s": selectors.section(seat=seat, name=name, page=_page_number(request), selected=selected)}
    template = "learning/_section.html" if request.htmx else "learning/memory_section.html"
    return render(request, template, context)


@page_view(*access.DASHBOARD)
def learning_health(request):
    window = dashboard.parse_window(request.GET.get("window"))
    handle = request.GET.get("seat") or ""
    seat = selectors.seat_by_handle(handle) if handle else None
    context = dashboard.health_context(window_days=window, seat=seat)
    context.update(seats=Seat.objects.order_by("handle"), nav="health")
    template = "learning/_health_events.html" if request.htmx else "learning/health.html"
    return render(request, template, context)
