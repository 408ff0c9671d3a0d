from django.contrib import admin
from django.urls import include, path

from crewlet.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("", include("learning.review.pages.urls")),  # the memory tab and the learning-health dashboard
]

handler404 = "crewlet.api.json_not_found"
handler500 = "crewlet.api.json_server_error"
