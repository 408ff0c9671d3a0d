from django.urls import path
from django.views.generic import RedirectView

from learning.review.pages import views

app_name = "learning_pages"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="learning_pages:home", permanent=False)),
    path("learning/", views.home_page, name="home"),
    path("learning/seats/", views.seats, name="seats"),
    path("learning/seats/<slug:handle>/memory/", views.memory, name="memory"),
    path("learning/seats/<slug:handle>/memory/<slug:name>/", views.memory_section, name="memory_section"),
    path("learning/seats/<slug:handle>/notes/<int:pk>/forget/", views.forget_note, name="forget_note"),
    path("learning/seats/<slug:handle>/notes/<int:pk>/correct/", views.correct_note, name="correct_note"),
    path("learning/seats/<slug:handle>/turns/<path:run_id>/", views.turn_page, name="turn"),
    path("learning/seats/<slug:handle>/skills/", views.seat_skills, name="seat_skills"),
    path("learning/health/", views.learning_health, name="health"),
    path("learning/health/trends/", views.trends, name="trends"),
]
