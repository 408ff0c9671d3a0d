"""The memory pages: thin views over ``learning.pages.selectors`` and ``learning.pages.dashboard``.

Full pages on a normal request, the one fragment an htmx request asked for otherwise. Every page
needs a logged-in staff user (the admin's login).
"""

from __future__ import annotations

from functools import wraps

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from crewlet.errors import BadInput, NotFound
from crewlet.models import Seat
from learning.pages import dashboard, selectors


def page_view(view):
    """Staff only, GET only; the project's typed errors become 404 / 400 pages."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except NotFound as exc:
            raise Http404(exc.message) from exc
        except BadInput as exc:
            return HttpResponseBadRequest(exc.message)

    return staff_member_required(require_GET(wrapped))


def _page_number(request) -> int:
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


@page_view
def seats(request):
    listing = Seat.objects.select_related("unit", "role").order_by("handle")
    return render(request, "learning/seats.html", {"seats": listing, "nav": "seats"})


@page_view
def memory(request, handle):
    seat = selectors.seat_by_handle(handle)
    return render(request, "learning/memory.html", {**selectors.memory_tab(seat=seat), "nav": "seats"})


@page_view
def memory_section(request, handle, name):
    seat = selectors.seat_by_handle(handle)
    spec = selectors.SECTIONS.get(name)
    selected = request.GET.get(spec.filter_param) if spec else None
    context = {"seat": seat, "nav": "seats", "s": selectors.section(seat=seat, name=name, page=_page_number(request), selected=selected)}
    template = "learning/_section.html" if request.htmx else "learning/memory_section.html"
    return render(request, template, context)


@page_view
def learning_health(request):
    window = dashboard.parse_window(request.GET.get("window"))
    handle = request.GET.get("seat") or ""
    seat = selectors.seat_by_handle(handle) if handle else None
    context = dashboard.health_context(window_days=window, seat=seat)
    context.update(seats=Seat.objects.order_by("handle"), nav="health")
    template = "learning/_health_events.html" if request.htmx else "learning/health.html"
    return render(request, template, context)
