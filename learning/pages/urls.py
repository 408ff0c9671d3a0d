from django.urls import path

from learning.pages import views

app_name = "learning_pages"

urlpatterns = [
    path("learning/seats/", views.seats, name="seats"),
    path("learning/seats/<slug:handle>/memory/", views.memory, name="memory"),
    path("learning/seats/<slug:handle>/memory/<slug:name>/", views.memory_section, name="memory_section"),
    path("learning/health/", views.learning_health, name="health"),
]
